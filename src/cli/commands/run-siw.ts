/**
 * `run --siw rfc7306|both`: the siw0 scenarios that post RFC 7306 operations, once more on
 * the project's patched siw (docs/siw-rfc7306.md). The patched libsiw must be loaded from
 * a process's start (LD_LIBRARY_PATH), so the pass is this CLI again in a child process,
 * with siw0 switched to the patched module around it and back to the stock one after.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { type Shard, shardLabel } from '../../interop/shard.js';
import {
  loadedSiwVariant,
  PATCHED_PASS_ENV,
  patchedLibraryPath,
  switchSiwModule,
} from '../../interop/siw-variant.js';
import { hostRdmaDevices } from '../../runtime/index.js';
import { errorLine } from '../errors.js';

const RUN = 'rdma-interop run';

/** `--siw`: which siw the siw0 scenarios run on. */
export const SIW_CHOICES = ['stock', 'rfc7306', 'both'] as const;
export type SiwChoice = (typeof SIW_CHOICES)[number];

/** True in the child process that runs the patched pass. */
export function inPatchedPass(): boolean {
  return process.env[PATCHED_PASS_ENV] === 'rfc7306';
}

export interface PatchedPassOptions {
  readonly device?: readonly string[];
  readonly scenario?: string;
  readonly strict?: boolean;
  readonly json?: boolean;
  readonly shard?: Shard;
}

/**
 * `--siw both`'s stock pass, in a child process like the patched one: siw0 cannot be
 * deleted and reloaded (siw-module.sh) while a process holds a verbs context on it
 * (siw has no disassociate_ucontext, so ib_unregister_device waits for the last close),
 * and this process would hold one for the rest of its life if any resource of the
 * stock pass were left open. Resolves with the pass's exit status.
 */
export function runStockPass(options: PatchedPassOptions, report: string | undefined): number {
  const args = ['run', '--runtime', 'host', '--siw', 'stock'];
  if (options.device !== undefined) args.push('--device', options.device.join(','));
  if (options.scenario !== undefined) args.push('--scenario', options.scenario);
  if (options.strict === true) args.push('--strict');
  if (options.shard !== undefined) args.push('--shard', shardLabel(options.shard));
  if (report !== undefined) args.push('--report', report);
  const child = spawnSync(process.execPath, [process.argv[1] ?? '', ...args], { stdio: 'inherit' });
  return child.status ?? 1;
}

/**
 * Runs the patched pass where the devices are (root in the guest); resolves with its exit
 * status. `report`: the directory its report goes to.
 */
export function runPatchedPass(options: PatchedPassOptions, report: string | undefined): number {
  if (!hostRdmaDevices().includes('siw0')) {
    process.stderr.write(errorLine(RUN, 'no siw0 here: the patched siw pass is left out'));
    return 2;
  }
  const lib = patchedLibraryPath();
  if (!existsSync(lib)) {
    process.stderr.write(
      errorLine(
        RUN,
        `no patched libsiw at ${lib} (scripts/setup/siw-patched.sh builds it): the patched siw pass cannot run`,
      ),
    );
    return 2;
  }
  const args = ['run', '--runtime', 'host', '--device', 'siw0', '--siw', 'rfc7306'];
  if (options.scenario !== undefined) args.push('--scenario', options.scenario);
  if (options.strict === true) args.push('--strict');
  if (options.shard !== undefined) args.push('--shard', shardLabel(options.shard));
  if (options.json === true) args.push('--json');
  if (report !== undefined) args.push('--report', report);
  const before = loadedSiwVariant() ?? 'stock';
  process.stderr.write('interop: siw0 on the patched siw (siw+rfc7306)\n');
  try {
    switchSiwModule('rfc7306');
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
    switchSiwModule(before);
    process.stderr.write(`interop: siw0 back on the ${before} siw\n`);
  }
}
