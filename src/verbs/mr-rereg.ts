/**
 * `ibv_rereg_mr` (issue 34): what `Mr.rereg` checks and asks of the addon
 * (native/mr_rereg.cc). libibverbs refuses a request it finds wrong with
 * IBV_REREG_MR_ERR_INPUT and EINVAL (rdma-core libibverbs/verbs.c ibv_rereg_mr); a
 * provider without a rereg_mr op answers EOPNOTSUPP (libibverbs/dummy_ops.c rereg_mr):
 * librxe and libsiw have none (rdma-core 44.0 and 56.1), so on rxe and siw every rereg is
 * refused before the kernel (rxe_rereg_user_mr on 6.12 and 7.3) sees it.
 */
import { markAsUntransferable } from 'node:worker_threads';
import { REREG_MR_FLAGS } from '../ibverbs/ext-constants.js';
import { VerbsArgumentError } from './errors.js';
import { type NativeMrRereg, type NativeReregResult, verbsExt } from './ext-native.js';
import type { Access, Mr } from './mr.js';
import type { Pd } from './pd.js';
import { withProviderCause } from './provider-causes.js';
import { transferIgnoresUntransferable } from './untransferable.js';

/** What `Mr.rereg` changes: any of the three, at least one. */
export interface ReregChanges {
  /** New memory (IBV_REREG_MR_CHANGE_TRANSLATION): the MR registers this Buffer instead. */
  readonly buffer?: Buffer;
  /** Another protection domain of the same device context (IBV_REREG_MR_CHANGE_PD). */
  readonly pd?: Pd;
  /** New access flags (IBV_REREG_MR_CHANGE_ACCESS). */
  readonly access?: readonly Access[];
}

/** @internal What changed, for `Mr` to take over. */
export interface ReregDone {
  readonly native: NativeReregResult;
  readonly pd?: Pd;
  readonly buffer?: Buffer;
  readonly access?: readonly Access[];
}

/**
 * @internal `ibv_rereg_mr` on `mr`; throws (nothing changed) or says what changed.
 * `accessMaskOf` is mr.ts's (given, so that this module imports no value from mr.ts).
 */
export function reregMr(
  mr: Mr,
  changes: ReregChanges,
  accessMaskOf: (access: readonly Access[]) => number,
): ReregDone {
  if (typeof changes !== 'object' || changes === null)
    throw new VerbsArgumentError('changes', 'must be { buffer?, pd?, access? }');
  const { buffer, pd, access } = changes;
  let flags = 0;
  if (buffer !== undefined) {
    if (!Buffer.isBuffer(buffer) || buffer.length === 0)
      throw new VerbsArgumentError('buffer', 'must be a non-empty Buffer');
    if (transferIgnoresUntransferable())
      throw new VerbsArgumentError(
        'buffer',
        "this Node's ArrayBuffer.prototype.transfer() can free a registered Buffer",
      );
    flags |= REREG_MR_FLAGS.TRANSLATION;
  }
  if (pd !== undefined) {
    if (typeof pd !== 'object' || pd === null || !('native' in pd))
      throw new VerbsArgumentError('pd', 'must be a Pd (context.allocPd)');
    flags |= REREG_MR_FLAGS.PD;
  }
  let mask = 0;
  if (access !== undefined) {
    mask = accessMaskOf(access);
    flags |= REREG_MR_FLAGS.ACCESS;
  }
  if (flags === 0) throw new VerbsArgumentError('changes', 'names nothing to change');
  verbsExt(); // the addon loaded with its error classes
  if (buffer !== undefined) markAsUntransferable(buffer.buffer);
  let native: NativeReregResult;
  try {
    native = (mr.native as NativeMrRereg).rereg(flags, pd?.native, buffer, mask);
  } catch (e) {
    throw withProviderCause(e, mr.pd.context.name);
  }
  return {
    native,
    ...(pd !== undefined ? { pd } : {}),
    ...(buffer !== undefined ? { buffer } : {}),
    ...(access !== undefined ? { access: [...access] } : {}),
  };
}
