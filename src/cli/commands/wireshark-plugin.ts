import type { Command } from 'commander';
import { generateWiresharkPlugin, wiresharkPluginFields } from '../../wireshark/generate.js';
import { installWiresharkPlugin, personalPluginDir } from '../../wireshark/install.js';
import { commandName, errorLine, usageError } from '../errors.js';

/** Options of `rdma-interop wireshark-plugin`. */
interface WiresharkPluginOptions {
  readonly install?: boolean;
  readonly dir?: string;
}

/**
 * Registers `rdma-interop wireshark-plugin [--install [--dir <dir>]]`: prints the Lua
 * plugin generated from the codec's tables, or installs it into Wireshark's personal
 * plugin folder and says where (docs/wireshark.md).
 */
export function registerWiresharkPlugin(program: Command): void {
  program
    .command('wireshark-plugin')
    .description(
      "print the Wireshark Lua plugin (RFC 7306, the V2 draft, Terminates, the RoCEv2 ICRC check), generated from the codec's tables, or install it",
    )
    .option(
      '--install',
      `write it into Wireshark's personal plugin folder (${personalPluginDir()})`,
    )
    .option('--dir <dir>', 'with --install: the plugin folder to write into instead')
    .action((options: WiresharkPluginOptions, command: Command) => {
      if (options.dir !== undefined && options.install !== true)
        usageError(command, '--dir goes with --install');
      if (options.install !== true) {
        // `wireshark-plugin | head` closes the pipe early: not an error.
        process.stdout.on('error', (e: NodeJS.ErrnoException) => {
          if (e.code === 'EPIPE') return;
          process.stderr.write(errorLine(commandName(command), `cannot write: ${e.message}`));
          process.exitCode = 1;
        });
        process.stdout.write(generateWiresharkPlugin());
        return;
      }
      const path = installWiresharkPlugin(options.dir);
      const fields = wiresharkPluginFields().length;
      process.stdout.write(
        `${path}\nWireshark and tshark load it at their next start (${fields} fields: filter with rdma_interop, iwarp_rdma.atomic, ...; docs/wireshark.md)\n`,
      );
    });
}
