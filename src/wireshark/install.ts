/**
 * Where the plugin goes: Wireshark's personal plugin folder, which it reads Lua plugins
 * from at start-up, on Linux `~/.local/lib/wireshark/plugins/` (Wireshark's user guide,
 * "Plugin folders"; `wireshark -v` / Help > About > Folders shows it; tshark 4.0 reads
 * the same folder, also when run as root).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { generateWiresharkPlugin } from './generate.js';

/** The plugin's file name in the plugin folder. */
export const PLUGIN_FILE_NAME = 'rdma-interop.lua';

/** The personal plugin folder of Wireshark on Linux for the current user. */
export function personalPluginDir(home: string = homedir()): string {
  return join(home, '.local', 'lib', 'wireshark', 'plugins');
}

/**
 * Writes the generated plugin into `dir` (created if missing; an older copy is replaced)
 * and returns the file's path. File-system failures are Node's own errors (EACCES, ...).
 */
export function installWiresharkPlugin(dir: string = personalPluginDir()): string {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, PLUGIN_FILE_NAME);
  writeFileSync(path, generateWiresharkPlugin());
  return path;
}
