/**
 * Send work requests checked and packed for the addon (`NativeSendWr`): the opcode by
 * name, the flags, the remote target, atomics, FLUSH, the window ops and a UD
 * destination, each refused with a typed error before anything is posted.
 */

import { describeValue } from '../../arguments.js';
import { SEND_FLAGS } from '../../ibverbs/constants.js';
import { WR_OPCODE } from '../../ibverbs/index.js';
import type { NativeAh, NativeMw, NativeMwBindInfo } from '../../native/bindings.js';
import { VerbsArgumentError, VerbsError } from '../errors.js';
import { FLUSH_PLACEMENT, FLUSH_SELECTIVITY } from '../flush.js';
import { incRkey, type Mw, nativeBindInfo } from '../mw.js';
import { type KeepSink, type NativeSge, nativeSges, type SgeScratch, u32, u64 } from './sge.js';
import type { SendWr } from './wr.js';

/**
 * A send request checked for the addon, every field present (undefined: absent), as
 * send-packer.ts packs it into SEND_LAYOUT's words (the one form the addon reads).
 */
export interface NativeSendWr {
  wrId: bigint;
  /** `enum ibv_wr_opcode`. */
  opcode: number;
  sendFlags: number;
  sgList: NativeSge[];
  /** The 32-bit immediate value as the wire carries it (the addon applies htonl). */
  immData?: number | undefined;
  remoteAddr?: bigint | undefined;
  rkey?: number | undefined;
  compareAdd?: bigint | undefined;
  swap?: bigint | undefined;
  /** ATOMIC_WRITE payload (extended path only). */
  atomicValue?: bigint | undefined;
  /** FLUSH (extended path, rdma-core >= 45): length, placement type, selectivity level. */
  flushLength?: bigint | undefined;
  flushType?: number | undefined;
  flushLevel?: number | undefined;
  /** LOCAL_INV, SEND_WITH_INV: the rkey to invalidate. */
  invalidateRkey?: number | undefined;
  /** BIND_MW: the type 2 window, the rkey it gets and where it goes. */
  mw?: NativeMw | undefined;
  bindRkey?: number | undefined;
  bindInfo?: NativeMwBindInfo | undefined;
  /** UD: the destination's address handle, QPN and Q_Key. */
  ah?: NativeAh | undefined;
  remoteQpn?: number | undefined;
  remoteQkey?: number | undefined;
}

/** `enum ibv_wr_opcode` by name, own names only. */
const SEND_OPCODE_CODES: ReadonlyMap<string, number> = new Map(Object.entries(WR_OPCODE));

/** @internal a send request with every field present, to be filled by {@link toNativeSend}. */
export function blankSendWr(): NativeSendWr {
  return {
    wrId: 0n,
    opcode: 0,
    sendFlags: 0,
    sgList: [],
    immData: undefined,
    remoteAddr: undefined,
    rkey: undefined,
    compareAdd: undefined,
    swap: undefined,
    atomicValue: undefined,
    flushLength: undefined,
    flushType: undefined,
    flushLevel: undefined,
    invalidateRkey: undefined,
    mw: undefined,
    bindRkey: undefined,
    bindInfo: undefined,
    ah: undefined,
    remoteQpn: undefined,
    remoteQkey: undefined,
  };
}

/** @internal a window of `type`, open (`device` names the QP's device in errors). */
export function checkMw(mw: Mw, type: 1 | 2, field: string, device: string): Mw['native'] {
  if (typeof mw !== 'object' || mw === null || !('native' in mw) || !('setRkey' in mw))
    throw new VerbsArgumentError(field, 'must be an Mw (pd.allocMw)');
  if (mw.closed) throw new VerbsError('EBADF', 9, 'ibv_bind_mw', device, `${field} is closed`);
  if (mw.type !== type)
    throw new VerbsArgumentError(
      field,
      type === 1
        ? 'a type 2 window is bound by a BIND_MW work request (postSend), not by bindMw'
        : 'a type 1 window is bound by qp.bindMw (ibv_bind_mw), not by a work request',
    );
  return mw.native;
}

/**
 * @internal the checked request for the addon (into `native`, reused, when given; its SGE
 * list into `sges`); what it keeps alive goes to `keep`, an absent wrId is `takeWrId()`.
 * Whether it is signaled is in its sendFlags (or the QP's sq_sig_all).
 */
export function toNativeSend(
  wr: SendWr,
  keep: KeepSink,
  takeWrId: () => bigint,
  device: string,
  native: NativeSendWr = blankSendWr(),
  sges?: SgeScratch,
): NativeSendWr {
  if (typeof wr !== 'object' || wr === null)
    throw new VerbsArgumentError('wr', 'a work request must be an object');
  // By own name only (a lookup in WR_OPCODE itself would take 'toString' from its
  // prototype), and without String() of the value (an object's throwing toString).
  const name = wr.opcode;
  const opcode = typeof name === 'string' ? SEND_OPCODE_CODES.get(name) : undefined;
  if (opcode === undefined)
    throw new VerbsArgumentError('opcode', `unknown opcode ${describeValue(name)}`);
  const wrId = wr.wrId === undefined ? takeWrId() : u64('wrId', wr.wrId);
  const signaled = wr.signaled ?? true;
  const sendFlags =
    (signaled ? SEND_FLAGS.SIGNALED : 0) |
    (wr.solicited ? SEND_FLAGS.SOLICITED : 0) |
    (wr.fence ? SEND_FLAGS.FENCE : 0) |
    (wr.inline ? SEND_FLAGS.INLINE : 0);
  // Every field present (undefined when absent: the addon reads that as absent), so that
  // every request has one shape and the code reading them stays monomorphic; a reused
  // request has every field reset.
  native.wrId = wrId;
  native.opcode = opcode;
  native.sendFlags = sendFlags;
  native.sgList =
    sges === undefined
      ? nativeSges(wr.sgList, keep, wr.inline === true)
      : sges.fill(wr.sgList, keep, wr.inline === true);
  native.immData = undefined;
  native.remoteAddr = undefined;
  native.rkey = undefined;
  native.compareAdd = undefined;
  native.swap = undefined;
  native.atomicValue = undefined;
  native.flushLength = undefined;
  native.flushType = undefined;
  native.flushLevel = undefined;
  native.invalidateRkey = undefined;
  native.mw = undefined;
  native.bindRkey = undefined;
  native.bindInfo = undefined;
  native.ah = undefined;
  native.remoteQpn = undefined;
  native.remoteQkey = undefined;
  if (wr.immData !== undefined) native.immData = u32('immData', wr.immData);
  if (wr.remote !== undefined) {
    native.remoteAddr = u64('remote.addr', wr.remote.addr);
    native.rkey = u32('remote.rkey', wr.remote.rkey);
  }
  if (wr.add !== undefined) native.compareAdd = u64('add', wr.add);
  if (wr.compare !== undefined) native.compareAdd = u64('compare', wr.compare);
  if (wr.swap !== undefined) native.swap = u64('swap', wr.swap);
  if (wr.atomicValue !== undefined) native.atomicValue = u64('atomicValue', wr.atomicValue);
  if (wr.flush !== undefined) {
    native.flushLength = u64('flush.length', wr.flush.length);
    const placement = FLUSH_PLACEMENT[wr.flush.placement ?? 'GLOBAL'];
    const selectivity = FLUSH_SELECTIVITY[wr.flush.selectivity ?? 'RANGE'];
    if (placement === undefined)
      throw new VerbsArgumentError('flush.placement', `unknown '${String(wr.flush.placement)}'`);
    if (selectivity === undefined)
      throw new VerbsArgumentError(
        'flush.selectivity',
        `unknown '${String(wr.flush.selectivity)}'`,
      );
    native.flushType = placement;
    native.flushLevel = selectivity;
  }
  if (wr.opcode === 'BIND_MW') {
    const bind = wr.bind;
    if (typeof bind !== 'object' || bind === null)
      throw new VerbsArgumentError(
        'bind',
        'BIND_MW needs bind: { mw, mr, addr?, length?, access }',
      );
    native.mw = checkMw(bind.mw, 2, 'bind.mw', device);
    native.bindRkey = bind.rkey === undefined ? incRkey(bind.mw.rkey) : u32('bind.rkey', bind.rkey);
    native.bindInfo = nativeBindInfo(bind, keep, 'bind');
    keep.push(bind.mw);
  } else if (wr.bind !== undefined) {
    throw new VerbsArgumentError('bind', `only a BIND_MW request binds (not ${String(wr.opcode)})`);
  }
  if (wr.opcode === 'LOCAL_INV' || wr.opcode === 'SEND_WITH_INV') {
    const target = wr.invalidateRkey;
    if (typeof target === 'object' && target !== null) {
      checkMw(target, 2, 'invalidateRkey', device);
      native.invalidateRkey = target.rkey;
    } else if (target === undefined) {
      throw new VerbsArgumentError('invalidateRkey', `${wr.opcode} needs the rkey to invalidate`);
    } else {
      native.invalidateRkey = u32('invalidateRkey', target);
    }
  } else if (wr.invalidateRkey !== undefined) {
    throw new VerbsArgumentError(
      'invalidateRkey',
      `only LOCAL_INV and SEND_WITH_INV invalidate (not ${String(wr.opcode)})`,
    );
  }
  if (wr.ud !== undefined) {
    const ah = wr.ud.ah;
    if (typeof ah !== 'object' || ah === null || !('native' in ah))
      throw new VerbsArgumentError('ud.ah', 'must be an Ah (Pd.createAh)');
    if (ah.closed) throw new VerbsError('EBADF', 9, 'ibv_post_send', device, 'ud.ah is closed');
    native.ah = ah.native;
    native.remoteQpn = u32('ud.remoteQpn', wr.ud.remoteQpn);
    native.remoteQkey = u32('ud.remoteQkey', wr.ud.remoteQkey);
    keep.push(ah);
  }
  return native;
}

const SEND_LIST_OF = (wrs: SendWr | readonly SendWr[]): readonly SendWr[] =>
  Array.isArray(wrs) ? (wrs as readonly SendWr[]) : [wrs as SendWr];

/** @internal a posted BIND_MW gave its window the rkey it carried (the first `count` requests). */
// (No array or closure per call: this runs for every postSend.)
export function applyBinds(
  wrs: SendWr | readonly SendWr[],
  natives: NativeSendWr[],
  count: number,
): void {
  for (let i = 0; i < count; i++) {
    const rkey = natives[i]?.bindRkey;
    if (rkey === undefined) continue;
    const wr = Array.isArray(wrs) ? (wrs as readonly SendWr[])[i] : (wrs as SendWr);
    wr?.bind?.mw.setRkey(rkey);
  }
}

/** @internal a BIND_MW changes its window's rkey each time: posted with postSend only. */
export function refuseBindMw(wrs: SendWr | readonly SendWr[]): void {
  if (SEND_LIST_OF(wrs).some((wr) => typeof wr === 'object' && wr?.opcode === 'BIND_MW'))
    throw new VerbsArgumentError(
      'opcode',
      'a BIND_MW request gives its window a new rkey each time: post it with postSend',
    );
}
