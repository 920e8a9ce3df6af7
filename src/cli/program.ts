/**
 * The `rdma-interop` program: every command registered, with the conventions every command
 * follows (main.ts runs it; test/host/cli/options-walk.test.ts walks its definition):
 * - every error line on stderr starts `rdma-interop <command>: error` (usage errors add
 *   where the command's help is; runtime failures add their kind in parentheses);
 * - every option either takes effect or is refused as a usage error (exit 2, one line):
 *   values by commander's own validation (options.ts), combinations that would leave an
 *   option doing nothing by errors.ts `usageError`;
 * - `--cache-dir`, where a command has it, is applied before the command's action runs.
 */
import { createRequire } from 'node:module';
import { Command } from 'commander';
import { useCacheDir } from '../runtime/index.js';
import { registerBench } from './commands/bench.js';
import { registerCompare } from './commands/compare.js';
import { registerDecode } from './commands/decode.js';
import { registerDevices } from './commands/devices.js';
import { registerDocker } from './commands/docker.js';
import { registerFindings } from './commands/findings.js';
import { registerPeer } from './commands/peer.js';
import { registerProbe } from './commands/probe.js';
import { registerRdmaCoreTests } from './commands/rdma-core-tests.js';
import { registerRun } from './commands/run.js';
import { registerSetup } from './commands/setup.js';
import { registerUlp } from './commands/ulp.js';
import { registerVm } from './commands/vm.js';
import { registerWiresharkPlugin } from './commands/wireshark-plugin.js';
import { commandName } from './errors.js';

const { version } = createRequire(import.meta.url)('../../package.json') as { version: string };

/** Every command of the program, depth first (`docker build` and `docker run` too). */
export function allCommands(program: Command): Command[] {
  return [program, ...program.commands.flatMap((c) => allCommands(c))];
}

/** The whole program, not yet parsed. */
export function buildProgram(): Command {
  const program = new Command()
    .name('rdma-interop')
    .description('RFC 7306 reference codec and engine, checked against real rxe and siw devices')
    .version(version, '-V, --version', 'print the package version')
    // Before any subcommand is registered: commander copies these settings into each.
    .exitOverride();

  registerDevices(program);
  registerRun(program);
  registerPeer(program);
  registerProbe(program);
  registerRdmaCoreTests(program);
  registerUlp(program);
  registerDecode(program);
  registerCompare(program);
  registerFindings(program);
  registerBench(program);
  registerVm(program);
  registerSetup(program);
  registerDocker(program);
  registerWiresharkPlugin(program);

  // commander's usage message is one line ("error: ..."); say which command and where its
  // help is, still on that line.
  for (const command of allCommands(program)) {
    const name = commandName(command);
    command.exitOverride().configureOutput({
      outputError: (message, write) => write(`${name}: ${message.trim()} (see '${name} --help')\n`),
    });
  }

  program.hook('preAction', (_program, action) => {
    const dir: unknown = action.opts().cacheDir;
    if (typeof dir === 'string') useCacheDir(dir);
  });
  return program;
}
