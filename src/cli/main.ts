#!/usr/bin/env node
/**
 * The `rdma-interop` command line (program.ts assembles it; each subcommand lives in its
 * own file under `commands/`). Exit status, the same for every command:
 * - 0: done; 1: the command ran and failed (or a user error such as an unreadable file or
 *   a missing addon, reported in one line); 2: usage error (a bad value or option, or a
 *   combination that would leave an option doing nothing), one line on stderr; 125: the
 *   guest runtime failed (vm, and commands that run in the guest);
 * - no stack trace for anything the user can fix: only bugs print one.
 */
import { CommanderError } from 'commander';
import { isRdmaInteropError } from '../errors.js';
import { errorLine } from './errors.js';
import { buildProgram } from './program.js';

/** Exit code of a usage error (bad arguments), as POSIX utilities use it. */
export const USAGE_EXIT_CODE = 2;

/** A failure the user can act on (our typed errors, or the OS refusing a file): no stack. */
function isUserError(e: unknown): e is Error {
  if (isRdmaInteropError(e)) return true;
  // Node's system errors (ENOENT, EACCES, ...) from files named on the command line.
  return e instanceof Error && typeof (e as NodeJS.ErrnoException).syscall === 'string';
}

/** `rdma-interop <command>` as typed, for an error that escaped a command's action. */
function typedCommand(program: ReturnType<typeof buildProgram>): string {
  const names = program.commands.map((c) => c.name());
  const first = process.argv.slice(2).find((a) => names.includes(a));
  return first === undefined ? 'rdma-interop' : `rdma-interop ${first}`;
}

// A reader that stops early (`rdma-interop decode x.pcap | head`) closes the pipe: the
// rest of the output has nowhere to go, which is the reader's choice, not an error, so
// the command ends quietly with status 0 instead of an unhandled EPIPE and its stack.
for (const stream of [process.stdout, process.stderr])
  stream.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code === 'EPIPE') process.exit(0);
    process.exitCode = 1;
  });

const program = buildProgram();
try {
  await program.parseAsync(process.argv);
} catch (e) {
  if (e instanceof CommanderError) {
    // Already printed by commander (help, version, or the one-line usage error).
    process.exitCode = e.exitCode === 0 ? 0 : USAGE_EXIT_CODE;
  } else if (isUserError(e)) {
    process.stderr.write(errorLine(typedCommand(program), e.message));
    process.exitCode = 1;
  } else {
    throw e;
  }
}
