/**
 * Finds and loads the `rdma_interop` N-API addon, on first use only: the codec, engine
 * and everything else that does not talk to devices import and run without it.
 *
 * Where it comes from, in node-gyp-build's order: `build/Release/` (a source build, in a
 * checkout or after `npm rebuild`), then `prebuilds/linux-x64/rdma-interop.napi.node`
 * (built by `npm pack`, shipped in the tarball; N-API, so one binary serves every Node
 * version). Whatever goes wrong surfaces as one {@link AddonUnavailableError} that names
 * the cause and the command that fixes it from where the package is.
 *
 * `RDMA_INTEROP_ADDON=<file.node>` loads that file instead (the addon built without
 * external buffers, scripts/setup/no-external-addon.sh, which its kernel test runs on).
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { RdmaInteropError } from '../errors.js';
import type {
  NativeAddon,
  VerbsArgumentErrorConstructor,
  VerbsErrorConstructor,
} from './bindings.js';

/**
 * Why the addon is unavailable:
 * - `missing`: no prebuild matches this platform and no source build exists;
 * - `load-failed`: a binary was found but the dynamic loader refused it (most often
 *   libibverbs.so.1 or librdmacm.so.1 is not installed);
 * - `incompatible`: it loaded but is not the addon this code expects (a stale build).
 */
export type AddonUnavailableReason = 'missing' | 'load-failed' | 'incompatible';

/** The addon cannot be used; `fix` is a command to run, valid from where the package is. */
export class AddonUnavailableError extends RdmaInteropError {
  override readonly name = 'AddonUnavailableError';
  readonly origin = 'verbs';
  constructor(
    readonly reason: AddonUnavailableReason,
    /** The package root searched (`build/Release/`, `prebuilds/`). */
    readonly packageRoot: string,
    /** What the loader said (node-gyp-build's or the dynamic loader's message). */
    readonly detail: string,
    /** The command that fixes it, e.g. `npm rebuild rdma-interop`. */
    readonly fix: string,
  ) {
    super(`${describe(reason, String(detail))}; fix: ${String(fix)}`);
  }
}

function describe(reason: AddonUnavailableReason, detail: string): string {
  const firstLine = detail.split('\n')[0]?.trim() ?? '';
  switch (reason) {
    case 'missing':
      return `the rdma_interop addon is not available: no prebuilt binary for ${process.platform}-${process.arch} and no source build (${firstLine})`;
    case 'load-failed':
      return `the rdma_interop addon could not be loaded (${firstLine}); it needs rdma-core's libibverbs.so.1 and librdmacm.so.1 (Debian: apt-get install libibverbs1 librdmacm1)`;
    case 'incompatible':
      return `the rdma_interop addon is stale or foreign (${firstLine})`;
  }
}

/**
 * The command that rebuilds the addon, valid from the user's working directory: in an
 * installed package (a path through `node_modules`), npm runs the package's install step
 * again; in a checkout of the project, its own build script.
 */
export function fixCommand(packageRoot: string): string {
  const source =
    'needs g++, make, python3 and rdma-core headers: apt-get install libibverbs-dev librdmacm-dev';
  return packageRoot.split(sep).includes('node_modules')
    ? `npm rebuild rdma-interop (a source build; ${source})`
    : `npm run build:native (in ${packageRoot}; ${source})`;
}

/** The package root: this file is `src/native/` or `dist/native/`, two levels below. */
export function packageRoot(): string {
  return join(dirname(fileURLToPath(import.meta.url)), '..', '..');
}

type NodeGypBuild = ((dir: string) => unknown) & { resolve(dir: string): string };

/** The addon file node-gyp-build picks under `root`; throws node-gyp-build's Error if none. */
export function resolveAddonFile(root: string): string {
  const require = createRequire(import.meta.url);
  return (require('node-gyp-build') as NodeGypBuild).resolve(root);
}

/**
 * Loads the addon found under `root` (or `file`, when given), without caching (the test of
 * the error paths uses it on a directory of its own). Throws {@link AddonUnavailableError},
 * nothing else.
 */
export function loadAddonFrom(root: string, file?: string): NativeAddon {
  const require = createRequire(import.meta.url);
  const fail = (reason: AddonUnavailableReason, detail: string) =>
    new AddonUnavailableError(reason, root, detail, fixCommand(root));
  if (file !== undefined && !existsSync(file))
    throw fail('missing', `RDMA_INTEROP_ADDON names ${file}, which does not exist`);
  let path: string;
  try {
    path = file ?? resolveAddonFile(root);
  } catch (e) {
    throw fail('missing', e instanceof Error ? e.message : String(e));
  }
  let addon: unknown;
  try {
    addon = require(path);
  } catch (e) {
    throw fail('load-failed', e instanceof Error ? e.message : String(e));
  }
  if (!isAddon(addon)) throw fail('incompatible', `${path} lacks listDevices/setVerbsErrorClass`);
  return addon;
}

function isAddon(value: unknown): value is NativeAddon {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return typeof v.listDevices === 'function' && typeof v.setVerbsErrorClass === 'function';
}

let loaded: NativeAddon | undefined;

/**
 * Loads the addon once and registers `errorClass` (and `argumentErrorClass`, for wrong
 * arguments) as the classes native code throws. Throws {@link AddonUnavailableError} when
 * it is missing or broken.
 */
export function loadNative(
  errorClass: VerbsErrorConstructor,
  argumentErrorClass?: VerbsArgumentErrorConstructor,
): NativeAddon {
  if (loaded !== undefined) return loaded;
  const override = process.env.RDMA_INTEROP_ADDON;
  const addon = loadAddonFrom(packageRoot(), override === '' ? undefined : override);
  addon.setVerbsErrorClass(errorClass, argumentErrorClass);
  loaded = addon;
  return addon;
}
