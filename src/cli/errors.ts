/**
 * The one form of every error line the command line prints (program.ts):
 * `rdma-interop <command>: error[ (kind)]: <message>`.
 */
import type { Command } from 'commander';

/** `rdma-interop docker run` for the `run` subcommand of `docker`. */
export function commandName(command: Command): string {
  const names: string[] = [];
  for (let c: Command | null = command; c !== null; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}

/** The one form of an error line: `rdma-interop <command>: error[ (kind)]: <message>`. */
export function errorLine(command: string, message: string, kind?: string): string {
  return `${command}: error${kind === undefined ? '' : ` (${kind})`}: ${message}\n`;
}

/**
 * Refuses a combination of options as a usage error (exit 2), printed by commander in the
 * same one-line form as its own validation.
 */
export function usageError(command: Command, message: string): never {
  return command.error(`error: ${message}`, { exitCode: 2, code: 'rdma-interop.usage' });
}
