/**
 * Which siw the suite's siw0 runs on: the stock module and libsiw, or the project's
 * patched ones (patches/siw/, patches/rdma-core/: RFC 7306 Atomics and Immediate Data,
 * docs/siw-rfc7306.md). The patched pass is keyed as its own provider, `siw+rfc7306`, so
 * recorded behaviour (known-behaviour.ts) and reports say which one ran.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Scenario } from './scenario.js';

export const SIW_VARIANTS = ['stock', 'rfc7306'] as const;
export type SiwVariant = (typeof SIW_VARIANTS)[number];

/** The provider key of siw0 on the patched module (with rfc7306=1) and patched libsiw. */
export const PATCHED_SIW_PROVIDER = 'siw+rfc7306';

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

/** siw's provider key for recorded behaviour: `siw+rfc7306` on the patched module. */
export function siwProvider(variant: SiwVariant | undefined): string {
  return variant === 'rfc7306' ? PATCHED_SIW_PROVIDER : 'siw';
}

/**
 * The scenarios the patched pass runs: those whose program posts an RFC 7306 operation
 * (an atomic, a write or send with immediate) or hammers a word with FetchAdds. The others
 * take the same code paths in the patched siw as in the stock one.
 */
export function usesRfc7306(scenario: Scenario): boolean {
  return scenario.program.some(
    (step) =>
      step.do === 'hammer' ||
      (step.do === 'post-send' && step.wrs.some((wr) => /ATOMIC|WITH_IMM/.test(wr.kind))),
  );
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
