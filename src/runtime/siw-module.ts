/**
 * Which siw module a guest has loaded, and switching it: the stock module or the
 * project's patched one (patches/siw/, RFC 7306; docs/siw-rfc7306.md). Both the suite's
 * patched pass (cli/commands/run-siw.ts) and the tester's (probe/probe-guest.ts) switch it.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { SiwVariant } from './siw-variant-env.js';

/**
 * Set in the environment of the process that runs the patched pass (it was started with
 * the patched libsiw on LD_LIBRARY_PATH); `run --siw` sets it.
 */
export const PATCHED_PASS_ENV = 'RDMA_INTEROP_SIW_PASS';

/** The siw module loaded now: `rfc7306` when its parameter says Y, else `stock`; undefined: none. */
export function loadedSiwVariant(sysModule = '/sys/module/siw'): SiwVariant | undefined {
  if (!existsSync(sysModule)) return undefined;
  const parameter = join(sysModule, 'parameters', 'rfc7306');
  if (!existsSync(parameter)) return 'stock';
  return readFileSync(parameter, 'utf8').trim() === 'Y' ? 'rfc7306' : 'stock';
}

/** The repository root the guest sees (the CLI's own checkout). */
function projectRoot(): string {
  return process.env.RDMA_INTEROP_ROOT ?? join(import.meta.dirname, '..', '..');
}

/**
 * Loads the wanted siw module (scripts/guest/siw-module.sh: deletes siw0, reloads, creates
 * it again). Root in the guest only; no siw QP may be open.
 */
export function switchSiwModule(variant: SiwVariant): void {
  execFileSync('bash', [join(projectRoot(), 'scripts/guest/siw-module.sh'), variant], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

/** Where the patched libsiw is (rdma-core 56.1 + patches/rdma-core/, linked by set-up). */
export function patchedLibraryPath(): string {
  return join(process.env.MODULES_ROOT ?? '', '..', 'siw-rfc7306-rdma-core', 'lib');
}
