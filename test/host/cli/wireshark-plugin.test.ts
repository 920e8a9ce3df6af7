/**
 * `rdma-interop wireshark-plugin [--install [--dir]]` as a child process: it prints the
 * generated plugin, installs it where Wireshark looks (tshark lists it), and refuses
 * `--dir` without `--install` as a usage error.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { generateWiresharkPlugin, wiresharkPluginFields } from '../../../src/wireshark/generate.js';
import { makeTempDir } from '../../helpers/pcap.js';
import { TSHARK_AVAILABLE, TSHARK_PATH } from '../../helpers/tshark.js';

const CLI = join(process.cwd(), 'dist', 'cli', 'main.js');

function cli(args: string[], env: NodeJS.ProcessEnv = process.env) {
  return spawnSync(process.execPath, [CLI, 'wireshark-plugin', ...args], { encoding: 'utf8', env });
}

describe('rdma-interop wireshark-plugin', () => {
  it('prints the plugin generated from the tables, every field registered in it', () => {
    const r = cli([]);
    expect(r.status).toBe(0);
    expect(r.stdout).toBe(generateWiresharkPlugin());
    for (const f of wiresharkPluginFields())
      expect(r.stdout).toContain(`F["${f.abbrev}"] = ProtoField.`);
  });

  it('--install writes it into ~/.local/lib/wireshark/plugins and says where; tshark loads it from there', () => {
    const home = makeTempDir('wireshark-home-');
    const r = cli(['--install'], { ...process.env, HOME: home });
    const path = join(home, '.local/lib/wireshark/plugins/rdma-interop.lua');
    expect(r.status).toBe(0);
    expect(r.stdout.split('\n')[0]).toBe(path);
    expect(readFileSync(path, 'utf8')).toBe(generateWiresharkPlugin());
    if (TSHARK_AVAILABLE) {
      const plugins = execFileSync(TSHARK_PATH, ['-G', 'plugins'], {
        encoding: 'utf8',
        env: { ...process.env, HOME: home },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const { version } = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };
      expect(plugins).toContain(`rdma-interop.lua\t${version}\tlua script\t${path}`);
    }
  }, 60_000);

  it('--install --dir writes into that folder; --dir alone is a usage error', () => {
    const dir = join(makeTempDir('wireshark-dir-'), 'plugins');
    const r = cli(['--install', '--dir', dir]);
    expect(r.status).toBe(0);
    expect(r.stdout.split('\n')[0]).toBe(join(dir, 'rdma-interop.lua'));
    const bad = cli(['--dir', dir]);
    expect(bad.status).toBe(2);
    expect(bad.stderr.trim().split('\n')).toHaveLength(1);
  });
});
