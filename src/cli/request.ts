/**
 * A command that runs itself again elsewhere (`run` in the guest and in its siw passes'
 * child processes, `probe` in its guests, `bench verbs` in the guest) asks that run through
 * a request: the options it gets, taken from this command's own parsed options, written
 * back as command-line arguments from the command's definition (each option's long flag,
 * `--no-<name>` for a negated one) and parsed there by the same definition. This file is
 * the one writer; each such command has one table (`Forwarding`) that says, for every one
 * of its options, whether it goes along or why it stays here, and one function that makes
 * its request. test/host/cli/options-request.test.ts parses, requests and parses again for
 * every option of every table, and fails on an option a table does not name.
 */
import type { Command, Option } from 'commander';

/** One option's way: the run elsewhere gets its value, or it stays here, for a reason. */
export type Forwarding = 'forward' | { readonly stays: string };

/** `--cache-dir`, wherever a command has it: the guest gets it from the environment. */
export const CACHE_DIR_STAYS = {
  stays: 'reaches the guest as RDMA_INTEROP_CACHE (runtime/paths.ts useCacheDir), not as an option',
} as const;

/** A value a request holds: what the option parsers of the forwarded options give. */
export type RequestValue = string | number | boolean | readonly string[];

/** The options (by commander attribute name, e.g. `peerSiw`) a run elsewhere is given. */
export type Request = Readonly<Record<string, RequestValue | undefined>>;

/** The keys of a forwarding table marked `forward`. */
export type ForwardedKey<T> = { [K in keyof T]: T[K] extends 'forward' ? K : never }[keyof T];

/** The options a table forwards, as this command parsed them (unset ones left out). */
export function forwardedOptions<
  O extends object,
  T extends Readonly<Record<keyof O & string, Forwarding>>,
>(table: T, options: O): Partial<Pick<O, ForwardedKey<T> & keyof O>> {
  const picked: Record<string, unknown> = {};
  for (const [key, way] of Object.entries(table) as [string, Forwarding][]) {
    const value = (options as Record<string, unknown>)[key];
    if (way === 'forward' && value !== undefined) picked[key] = value;
  }
  return picked as Partial<Pick<O, ForwardedKey<T> & keyof O>>;
}

/** A bug in a request (a key that is no option of the command, a value it cannot hold). */
export class RequestError extends Error {
  override readonly name = 'RequestError';
}

/** `value` as the option's argument, the form its parser reads (lists comma-separated). */
function argument(option: Option, value: RequestValue): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return String(value);
  if (Array.isArray(value)) return value.join(',');
  throw new RequestError(`${option.flags}: ${String(value)} is no option argument`);
}

/**
 * The arguments (after the command's name) that make `command`'s definition parse
 * `request`: in the order the command defines its options, a flag for a boolean set true
 * (`--no-x` for a negated one set false), `--long <value>` for the rest; an unset value
 * gives nothing, so the other side's default holds.
 */
export function requestArgs(command: Command, request: Request): string[] {
  const options = new Map(command.options.map((o) => [o.attributeName(), o]));
  for (const key of Object.keys(request))
    if (!options.has(key)) throw new RequestError(`${command.name()} has no option ${key}`);
  const args: string[] = [];
  for (const [key, option] of options) {
    const value = request[key];
    if (value === undefined || option.long === undefined) continue;
    if (option.negate) {
      if (value !== false)
        throw new RequestError(`${option.flags}: a negated option is only ever false`);
      args.push(option.long);
    } else if (option.isBoolean()) {
      if (typeof value !== 'boolean') throw new RequestError(`${option.flags} is a flag`);
      if (value) args.push(option.long);
    } else {
      args.push(option.long, argument(option, value));
    }
  }
  return args;
}
