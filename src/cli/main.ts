#!/usr/bin/env node
/**
 * The `rdma-interop` command line. Each subcommand lives in its own file under
 * `commands/` and registers itself on the program; this file assembles them and owns
 * the conventions every command follows:
 * - exit 0: done; 1: the command ran and failed (or a user error such as an unreadable
 *   file or a missing addon, reported in one line); 2: usage error (commander's own
 *   validation: unknown option or command, bad value, `.choices()`), one line on stderr;
 *   125: the guest runtime failed (vm, and commands that run in the guest);
 * - no stack trace for anything the user can fix: only bugs print one.
 */
import { createRequire } from 'node:module';
import { Command, CommanderError } from 'commander';
import { isRdmaInteropError } from '../errors.js';
import { registerBench } from './commands/bench.js';
import { registerDecode } from './commands/decode.js';
import { registerDevices } from './commands/devices.js';
import { registerDocker } from './commands/docker.js';
import { registerRun } from './commands/run.js';
import { registerSetup } from './commands/setup.js';
import { registerVm } from './commands/vm.js';
import { registerWiresharkPlugin } from './commands/wireshark-plugin.js';

/** Exit code of a usage error (bad arguments), as POSIX utilities use it. */
export const USAGE_EXIT_CODE = 2;

const { version } = createRequire(import.meta.url)('../../package.json') as { version: string };

const program = new Command()
  .name('rdma-interop')
  .description('RFC 7306 reference codec and engine, checked against real rxe and siw devices')
  .version(version, '-V, --version', 'print the package version')
  // Before any subcommand is registered: commander copies these settings into each.
  .exitOverride();

registerDevices(program);
registerRun(program);
registerDecode(program);
registerBench(program);
registerVm(program);
registerSetup(program);
registerDocker(program);
registerWiresharkPlugin(program);

// commander's usage message is one line ("error: ..."); say which command and where its
// help is, still on that line.
for (const command of [program, ...program.commands]) {
  const name = command === program ? 'rdma-interop' : `rdma-interop ${command.name()}`;
  command.configureOutput({
    outputError: (message, write) => write(`${name}: ${message.trim()} (see '${name} --help')\n`),
  });
}

/** A failure the user can act on (our typed errors, or the OS refusing a file): no stack. */
function isUserError(e: unknown): e is Error {
  if (isRdmaInteropError(e)) return true;
  // Node's system errors (ENOENT, EACCES, ...) from files named on the command line.
  return e instanceof Error && typeof (e as NodeJS.ErrnoException).syscall === 'string';
}

try {
  await program.parseAsync(process.argv);
} catch (e) {
  if (e instanceof CommanderError) {
    // Already printed by commander (help, version, or the one-line usage error).
    process.exitCode = e.exitCode === 0 ? 0 : USAGE_EXIT_CODE;
  } else if (isUserError(e)) {
    process.stderr.write(`rdma-interop: ${e.message}\n`);
    process.exitCode = 1;
  } else {
    throw e;
  }
}
