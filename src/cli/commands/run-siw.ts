/**
 * `run --siw rfc7306|both`: the siw0 scenarios that post RFC 7306 operations, once more on
 * the project's patched siw (docs/siw-rfc7306.md). The patched libsiw must be loaded from
 * a process's start (LD_LIBRARY_PATH), so the pass is this CLI again in a child process,
 * with siw0 switched to the patched module around it and back to the stock one after.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { combinedLibraryPath, onFixedBuild, switchFixedSiw } from '../../runtime/fixes-env.js';
import { hostRdmaDevices } from '../../runtime/index.js';
import {
  loadedSiwVariant,
  PATCHED_PASS_ENV,
  patchedLibraryPath,
  switchSiwModule,
} from '../../runtime/siw-module.js';
import { errorLine } from '../errors.js';

const RUN = 'rdma-interop run';

/** `--siw`: which siw the siw0 scenarios run on. */
export const SIW_CHOICES = ['stock', 'rfc7306', 'both'] as const;
export type SiwChoice = (typeof SIW_CHOICES)[number];

/** True in the child process that runs the patched pass. */
export function inPatchedPass(): boolean {
  return process.env[PATCHED_PASS_ENV] === 'rfc7306';
}

/**
 * `--siw both`'s stock pass, in a child process like the patched one: siw0 cannot be
 * deleted and reloaded (siw-module.sh) while a process holds a verbs context on it
 * (siw has no disassociate_ucontext, so ib_unregister_device waits for the last close),
 * and this process would hold one for the rest of its life if any resource of the
 * stock pass were left open. `args`: the pass's `run` (run-request.ts `runElsewhereArgs`).
 * Resolves with the pass's exit status.
 */
export function runStockPass(args: readonly string[]): number {
  const child = spawnSync(process.execPath, [process.argv[1] ?? '', ...args], { stdio: 'inherit' });
  return child.status ?? 1;
}

/**
 * The patched pass's siw on this build: the RFC 7306 series (siw-module.sh, keyed
 * `siw+rfc7306`) or, on the fixed build (`run --fixes`), the series with the fixes on top
 * (scripts/guest/fixed-module.sh `siw rfc7306-fixed`, keyed `siw+rfc7306+fixes`), each with
 * its own rdma-core build; and how siw0 goes back to the module it ran on before.
 */
function patchedBuild(): {
  readonly key: string;
  readonly lib: string;
  readonly builtBy: string;
  readonly load: () => void;
  readonly restore: () => string;
} {
  if (!onFixedBuild()) {
    const before = loadedSiwVariant() ?? 'stock';
    return {
      key: 'siw+rfc7306',
      lib: patchedLibraryPath(),
      builtBy: 'scripts/setup/siw-patched.sh',
      load: () => switchSiwModule('rfc7306'),
      restore: () => {
        switchSiwModule(before);
        return before;
      },
    };
  }
  return {
    key: 'siw+rfc7306+fixes',
    lib: combinedLibraryPath(),
    builtBy: 'scripts/setup/fixes.sh',
    load: () => switchFixedSiw('rfc7306-fixed'),
    restore: () => {
      switchFixedSiw('fixed');
      return 'fixed';
    },
  };
}

/**
 * Runs the patched pass where the devices are (root in the guest); resolves with its exit
 * status. `args`: the pass's `run` (run-request.ts `runElsewhereArgs`: siw0, --siw rfc7306).
 */
export function runPatchedPass(args: readonly string[]): number {
  if (!hostRdmaDevices().includes('siw0')) {
    process.stderr.write(errorLine(RUN, 'no siw0 here: the patched siw pass is left out'));
    return 2;
  }
  const build = patchedBuild();
  const lib = build.lib;
  if (!existsSync(lib)) {
    process.stderr.write(
      errorLine(
        RUN,
        `no patched libsiw at ${lib} (${build.builtBy} builds it): the patched siw pass cannot run`,
      ),
    );
    return 2;
  }
  process.stderr.write(`interop: siw0 on the patched siw (${build.key})\n`);
  try {
    build.load();
  } catch (error) {
    process.stderr.write(
      errorLine(
        RUN,
        `siw0 could not be switched to the patched module: ${error instanceof Error ? error.message : String(error)}`,
      ),
    );
    return 2;
  }
  try {
    const child = spawnSync(process.execPath, [process.argv[1] ?? '', ...args], {
      env: { ...process.env, LD_LIBRARY_PATH: lib, [PATCHED_PASS_ENV]: 'rfc7306' },
      stdio: 'inherit',
    });
    return child.status ?? 1;
  } finally {
    process.stderr.write(`interop: siw0 back on the ${build.restore()} siw\n`);
  }
}
