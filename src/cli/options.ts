/**
 * The options and value parsers every `rdma-interop` command shares, so that one meaning
 * has one name, one help text and one parser everywhere. Each parser throws commander's
 * `InvalidArgumentError`, so a bad value is reported by commander itself as a usage error
 * (one line, exit 2: see main.ts) before any work starts.
 */
import { existsSync, statSync } from 'node:fs';
import { InvalidArgumentError, Option } from 'commander';
import { ArgumentError } from '../errors.js';
import { type FaultSpec, parseFaults } from '../runtime/faults/spec.js';
import { DEFAULT_KERNEL_LINE, KERNEL_LINES } from '../runtime/index.js';
import { findKernelLine } from '../runtime/kernel-lines.js';

/** A whole number > 0 (`--memory`, `--cpus`, counts). */
export function positiveInteger(value: string): number {
  const parsed = Number(value);
  if (value.trim() === '' || !Number.isInteger(parsed) || parsed <= 0)
    throw new InvalidArgumentError('Expected a positive whole number.');
  return parsed;
}

/** A duration in seconds > 0, fractions allowed (`--timeout` of every command). */
export function positiveSeconds(value: string): number {
  const parsed = Number(value);
  if (value.trim() === '' || !Number.isFinite(parsed) || parsed <= 0)
    throw new InvalidArgumentError('Expected a positive number of seconds.');
  return parsed;
}

/** `--faults drop=0.02,dup=0.01,...` (runtime/faults/spec.ts). */
export function faultsValue(value: string): FaultSpec {
  try {
    return parseFaults(value);
  } catch (error) {
    if (error instanceof ArgumentError) throw new InvalidArgumentError(error.message);
    throw error;
  }
}

/** A TCP/UDP port, 0-65535 (`--roce-port`). */
export function port(value: string): number {
  const parsed = Number(value);
  if (value.trim() === '' || !Number.isInteger(parsed) || parsed < 0 || parsed > 0xffff)
    throw new InvalidArgumentError('Expected a port number, 0-65535.');
  return parsed;
}

const LINE_NAMES = KERNEL_LINES.map((l) => l.line).join(', ');

/**
 * `--kernel`: a kernel line (runtime/kernel-lines.ts) or a directory of guest assets
 * (runtime/assets.ts `selectKernel`); anything else is refused before a guest is asked for.
 */
export function kernelChoice(value: string): string {
  if (findKernelLine(value) !== undefined) return value;
  // A directory (guest assets or a kernel build tree) or a file (a bzImage, with
  // --modules): runtime/own-kernel.ts tells them apart and says what is missing.
  if (existsSync(value) && (statSync(value).isDirectory() || statSync(value).isFile()))
    return value;
  throw new InvalidArgumentError(
    `Expected a kernel line (${LINE_NAMES}), a bzImage, a kernel build tree or a directory of guest assets.`,
  );
}

/** `setup --kernel`: a kernel line only (set-up builds lines, not directories). */
export function kernelLineName(value: string): string {
  if (findKernelLine(value) !== undefined) return value;
  throw new InvalidArgumentError(`Expected a kernel line (${LINE_NAMES}).`);
}

/**
 * `--kernels all` or `--kernels 6.1,7.3`: kernel lines, each once, in the order given
 * (`run`, `probe`, `rdma-core-tests` and `findings` share this one parser).
 */
export function kernelLinesList(value: string): string[] {
  if (value.trim() === 'all') return KERNEL_LINES.map((l) => l.line);
  const names = value
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  const unknown = names.filter((n) => findKernelLine(n) === undefined);
  if (names.length === 0 || unknown.length > 0)
    throw new InvalidArgumentError(
      `Unknown kernel line ${unknown.join(', ') || '(none)'}; the lines are ${LINE_NAMES} (or 'all').`,
    );
  return [...new Set(names)];
}

/**
 * `--device rxe0,siw0` where only a fixed set of devices exists (`probe`, `rdma-core-tests`):
 * a commander argument parser for those names, each once, in the order given. `whose` names
 * the set in the error ("the guest's").
 */
export function deviceListParser(
  devices: readonly string[],
  whose: string,
): (value: string) => string[] {
  return (value) => {
    const names = value
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== '');
    const unknown = names.filter((n) => !devices.includes(n));
    if (names.length === 0 || unknown.length > 0)
      throw new InvalidArgumentError(
        `unknown device ${unknown.join(', ') || '(none)'}; ${whose} devices are ${devices.join(', ')}`,
      );
    return [...new Set(names)];
  };
}

/** `--rdma-core`: `line`, `host`, or a version such as `56.1` (scripts/setup/rdma-core.sh). */
export function rdmaCoreChoice(value: string): string {
  if (value === 'line' || value === 'host' || /^\d+(\.\d+)*$/.test(value)) return value;
  throw new InvalidArgumentError("Expected 'line', 'host' or an rdma-core version (e.g. 56.1).");
}

/** `--kernel <line|dir>` of the commands that boot a guest (`vm`, `run`). */
export function kernelOption(): Option {
  return new Option(
    '--kernel <line|image|dir>',
    `the guest's kernel line (${LINE_NAMES}; set up on first use), a bzImage (with --modules), a kernel build tree, or a directory of guest assets (default ${DEFAULT_KERNEL_LINE})`,
  ).argParser(kernelChoice);
}

/** `--modules <dir>` beside `--kernel <bzImage|build tree>` (runtime/own-kernel.ts). */
export function modulesOption(): Option {
  return new Option(
    '--modules <dir>',
    "with --kernel <bzImage|build tree>: its 'make modules_install INSTALL_MOD_PATH=<dir>' tree (docs/kernel-developers.md)",
  );
}

/**
 * `--cache-dir <dir>` of every command that uses the cache (guest assets, rdma-core
 * builds, dockerd's data root, run directories). main.ts applies it before the action
 * runs (runtime/paths.ts `useCacheDir`: it also reaches the set-up scripts and the guest).
 */
export function cacheDirOption(): Option {
  return new Option(
    '--cache-dir <dir>',
    'the cache: guest assets, rdma-core builds, dockerd data, run directories (default: $RDMA_INTEROP_CACHE, .cache/ in a checkout, else $XDG_CACHE_HOME/rdma-interop or ~/.cache/rdma-interop)',
  );
}

/** Where a command that needs RDMA devices runs (devices-or-guest.ts `Where`). */
export const RUNTIMES = ['auto', 'host', 'guest'] as const;
export type Runtime = (typeof RUNTIMES)[number];

/** `--runtime <where>` of every command that runs on devices here or in the guest. */
export function runtimeOption(): Option {
  return new Option(
    '--runtime <where>',
    'host: the devices of this machine; guest: the QEMU guest; auto: host if it has RDMA devices, else guest',
  )
    .choices(RUNTIMES)
    .default('auto');
}

/** `--timeout <seconds>` of every command with a time limit, fractions allowed. */
export function timeoutOption(what: string, seconds: number): Option {
  return new Option('--timeout <seconds>', what).argParser(positiveSeconds).default(seconds);
}

/**
 * An option that was renamed: still recognised (hidden from the help), but refused as a
 * usage error that names its new spelling, so a script learns what to change.
 */
export function renamedOption(flags: string, hint: string): Option {
  return new Option(flags).hideHelp().argParser(() => {
    throw new InvalidArgumentError(`Renamed: ${hint}.`);
  });
}

/** `--json`: one meaning everywhere, JSON on stdout instead of the text output. */
export const JSON_HELP = 'print JSON on stdout instead of text';
