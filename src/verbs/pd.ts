/** Protection domains: the parent of memory regions and queue pairs. */
import { markAsUntransferable } from 'node:worker_threads';
import {
  MW_TYPE,
  type MwType,
  QP_TYPE,
  type QpType,
  SEND_OPS_FLAGS,
} from '../ibverbs/constants.js';
import type { NativeAh, NativePd } from '../native/bindings.js';
import type { Cq } from './cq.js';
import type { Context } from './device.js';
import { VerbsArgumentError } from './errors.js';
import { requireFlushLibrary } from './flush.js';
import { Resource } from './lifetime.js';
import { type Access, accessMaskOf, Mr, type RegisteredRange } from './mr.js';
import { Mw } from './mw.js';
import { addon } from './native.js';
import { withProviderCause } from './provider-causes.js';
import { Qp } from './qp.js';
import { type AddressVector, nativeAv } from './qp-attr.js';
import { Srq, type SrqOptions, srqInitOf } from './srq.js';
import { transferIgnoresUntransferable } from './untransferable.js';

/**
 * An address handle (`ibv_ah`): the destination of UD sends. `close()` is
 * `ibv_destroy_ah` (VerbsError EBUSY while a prepared list uses it).
 */
export class Ah extends Resource<NativeAh> {
  /** The PD (kept reachable while this AH lives). */
  readonly pd: Pd;

  /** @internal use `Pd.createAh` */
  constructor(native: NativeAh, pd: Pd) {
    super(native, 'Ah', [pd]);
    this.pd = pd;
  }
}

/** Options of {@link Pd.createQp}. */
export interface QpOptions {
  readonly sendCq: Cq;
  /** Defaults to the send CQ. */
  readonly recvCq?: Cq;
  /** RC by default (UC/UD where the device supports them). */
  readonly type?: QpType;
  readonly maxSendWr?: number;
  readonly maxRecvWr?: number;
  readonly maxSendSge?: number;
  readonly maxRecvSge?: number;
  readonly maxInlineData?: number;
  /** Every send request completes (sq_sig_all). */
  readonly sqSigAll?: boolean;
  /**
   * Create with `ibv_create_qp_ex` for the `ibv_wr_*` API (VerbsError EOPNOTSUPP on
   * providers without it, e.g. libsiw).
   */
  readonly extended?: boolean;
  /**
   * With `extended`: also ask for IBV_QP_EX_WITH_ATOMIC_WRITE (rdma-core >= 43; the
   * kernel driver decides whether the operation works).
   */
  readonly atomicWrite?: boolean;
  /**
   * With `extended`: also ask for IBV_QP_EX_WITH_FLUSH (IBTA 1.5 FLUSH). Needs rdma-core 45
   * or later ({@link LibraryTooOldError} otherwise, before anything is created); the kernel
   * driver decides whether the operation works (rxe: kernel 6.2 and later).
   */
  readonly flush?: boolean;
  /**
   * With `extended`: also ask for BIND_MW, LOCAL_INV and SEND_WITH_INV
   * (IBV_QP_EX_WITH_BIND_MW | _LOCAL_INV | _SEND_WITH_INV; rxe has them).
   */
  readonly memoryWindowOps?: boolean;
  /**
   * Receive through this shared receive queue (same PD): `maxRecvWr` and `maxRecvSge`
   * are then ignored and `qp.postRecv` refuses (post to `srq.postRecv`).
   */
  readonly srq?: Srq;
}

/** The RC send ops an extended QP asks for by default (everything but ATOMIC_WRITE). */
const DEFAULT_SEND_OPS =
  SEND_OPS_FLAGS.RDMA_WRITE |
  SEND_OPS_FLAGS.RDMA_WRITE_WITH_IMM |
  SEND_OPS_FLAGS.SEND |
  SEND_OPS_FLAGS.SEND_WITH_IMM |
  SEND_OPS_FLAGS.RDMA_READ |
  SEND_OPS_FLAGS.ATOMIC_CMP_AND_SWP |
  SEND_OPS_FLAGS.ATOMIC_FETCH_AND_ADD;

/** @internal the IBV_QP_EX_WITH_* flags an extended QP is created with. */
export function sendOpsFlagsOf(options: QpOptions): bigint {
  return (
    DEFAULT_SEND_OPS |
    (options.atomicWrite ? SEND_OPS_FLAGS.ATOMIC_WRITE : 0n) |
    (options.flush ? SEND_OPS_FLAGS.FLUSH : 0n) |
    (options.memoryWindowOps
      ? SEND_OPS_FLAGS.BIND_MW | SEND_OPS_FLAGS.LOCAL_INV | SEND_OPS_FLAGS.SEND_WITH_INV
      : 0n)
  );
}

/**
 * @internal the checks of QP options that need the PD (pd.createQp, cmId.createQp): a
 * FLUSH QP needs rdma-core 45, an SRQ must be of the same PD. Returns the SRQ.
 */
export function checkQpOptions(pd: Pd, options: QpOptions): Srq | undefined {
  if (typeof options !== 'object' || options === null)
    throw new VerbsArgumentError('options', 'must be an object');
  if (options.flush === true) requireFlushLibrary(pd.context.name);
  const srq = options.srq;
  if (srq === undefined) return undefined;
  if (!(srq instanceof Srq)) throw new VerbsArgumentError('srq', 'must be an Srq (pd.createSrq)');
  if (srq.pd !== pd)
    throw new VerbsArgumentError('srq', 'the SRQ belongs to another protection domain');
  return srq;
}

/** allocMr on V8's memory where nothing can keep JS from freeing it under the device. */
function refuseUnprotectedV8Memory(): never {
  throw new VerbsArgumentError(
    'length',
    "the addon allocates V8's memory here (no external buffers) and this Node's ArrayBuffer.prototype.transfer() can free it while registered (it ignores markAsUntransferable): no safe allocMr",
  );
}

function count(name: string, v: number | undefined, fallback: number): number {
  const n = v ?? fallback;
  if (!Number.isInteger(n) || n < 0 || n > 0xffffffff)
    throw new VerbsArgumentError(name, 'must be a u32');
  return n;
}

/** Refuses a range that is not a non-empty part of `length` allocated bytes. */
function checkRange(range: RegisteredRange, length: number): void {
  if (typeof range !== 'object' || range === null)
    throw new VerbsArgumentError('range', 'must be { offset, length }');
  const { offset, length: registered } = range;
  if (!Number.isInteger(offset) || offset < 0)
    throw new VerbsArgumentError('range.offset', 'must be a non-negative integer');
  if (!Number.isInteger(registered) || registered < 1)
    throw new VerbsArgumentError('range.length', 'must be a positive integer');
  if (offset + registered > length)
    throw new VerbsArgumentError(
      'range',
      `[${offset}, ${offset + registered}) is outside the ${length} bytes allocated`,
    );
}

/**
 * A protection domain (`ibv_pd`). Its `close()` (`ibv_dealloc_pd`) closes its live QPs,
 * AHs and MRs first, in that order.
 */
export class Pd extends Resource<NativePd> {
  /** The device context (kept reachable while this PD lives). */
  readonly context: Context;

  /** @internal use `Context.allocPd` */
  constructor(native: NativePd, context: Context) {
    super(native, 'Pd', [context]);
    this.context = context;
  }

  /**
   * Registers `buffer` where it is (`ibv_reg_mr`): the device reads and writes that very
   * memory. Its ArrayBuffer is marked untransferable first (node:worker_threads), so a
   * transfer list cannot detach and free it under the registration (Node 20 copies
   * instead of transferring, later Nodes throw DataCloneError). On a Node whose
   * `ArrayBuffer.prototype.transfer()` ignores that mark, user memory cannot be
   * protected and this refuses (VerbsArgumentError): use {@link allocMr} there.
   */
  regMr(buffer: Buffer, access: readonly Access[]): Mr {
    if (!Buffer.isBuffer(buffer)) throw new VerbsArgumentError('buffer', 'regMr needs a Buffer');
    const mask = accessMaskOf(access);
    if (transferIgnoresUntransferable())
      throw new VerbsArgumentError(
        'buffer',
        "this Node's ArrayBuffer.prototype.transfer() can free a registered Buffer: use pd.allocMr(length, access)",
      );
    markAsUntransferable(buffer.buffer);
    return new Mr(new (addon().NativeMr)(this.native, buffer, mask), buffer, [...access], this);
  }

  /**
   * Allocates `length` zeroed, page-aligned bytes and registers them, or only `range` of
   * them: the bytes around a range stay readable and writable through `mr.allocation` but
   * outside the MR (guard words a remote access must not reach). `mr.buffer` is the
   * registered part. Where the memory comes from is {@link memoryPath}'s choice:
   * - `'external'`: the addon allocates it and the registration and the Buffer co-own it,
   *   so no JS operation (a transfer, `ArrayBuffer.prototype.transfer()`, a detach) can
   *   free it while registered, on any Node version.
   * - `'v8'` (a Node that refuses external buffers, or the addon built without them): V8
   *   allocates it (a page more, so that `allocation` starts on a page) and it is
   *   protected as {@link regMr}'s Buffer is: held until deregistered, its ArrayBuffer
   *   marked untransferable; on a Node whose `ArrayBuffer.prototype.transfer()` ignores
   *   that mark (22) this path refuses (VerbsArgumentError).
   */
  allocMr(length: number, access: readonly Access[], range?: RegisteredRange): Mr {
    if (!Number.isInteger(length) || length < 1 || length > 0xffffffff)
      throw new VerbsArgumentError('length', 'must be an integer in [1, 2^32 - 1]');
    const mask = accessMaskOf(access);
    if (range !== undefined) checkRange(range, length);
    const lib = addon();
    if (lib.memoryPath().path === 'v8' && transferIgnoresUntransferable())
      refuseUnprotectedV8Memory();
    const native = new lib.NativeMr(this.native, length, mask, range?.offset, range?.length);
    const view = native.buffer;
    if (view === undefined) throw new VerbsArgumentError('length', 'the addon returned no buffer');
    if (native.memory === 'v8') {
      // Before any other JS sees it (the path may have changed at this very allocation:
      // a Node that refuses external buffers only when asked).
      if (transferIgnoresUntransferable()) {
        native.close();
        refuseUnprotectedV8Memory();
      }
      markAsUntransferable(view.buffer);
    }
    const allocation = Buffer.isBuffer(view)
      ? view
      : Buffer.from(view.buffer, view.byteOffset, view.byteLength);
    return new Mr(native, allocation, [...access], this, range);
  }

  /** Creates a QP in RESET state. */
  createQp(options: QpOptions): Qp {
    const sendCq = options.sendCq;
    const recvCq = options.recvCq ?? sendCq;
    const type = options.type ?? 'RC';
    const qpType = QP_TYPE[type];
    if (qpType === undefined)
      throw new VerbsArgumentError('type', `unknown QP type '${String(type)}'`);
    const sqSigAll = options.sqSigAll ?? false;
    const srq = checkQpOptions(this, options);
    const native = new (addon().NativeQp)(this.native, sendCq.native, recvCq.native, {
      qpType,
      sqSigAll,
      maxSendWr: count('maxSendWr', options.maxSendWr, 64),
      maxRecvWr: count('maxRecvWr', options.maxRecvWr, 64),
      maxSendSge: count('maxSendSge', options.maxSendSge, 1),
      maxRecvSge: count('maxRecvSge', options.maxRecvSge, 1),
      maxInlineData: count('maxInlineData', options.maxInlineData, 0),
      extended: options.extended ?? false,
      sendOpsFlags: sendOpsFlagsOf(options),
      ...(srq !== undefined ? { srq: srq.native } : {}),
    });
    return new Qp(native, this, sendCq, recvCq, this.context.name, sqSigAll, undefined, srq);
  }

  /**
   * A shared receive queue (`ibv_create_srq`); QPs created with `{ srq }` receive from
   * it. rxe and siw have SRQs.
   */
  createSrq(options: SrqOptions): Srq {
    return new Srq(new (addon().NativeSrq)(this.native, srqInitOf(options)), this);
  }

  /**
   * A memory window (`ibv_alloc_mw`) of type 1 (bound with `qp.bindMw`) or 2 (bound by a
   * `BIND_MW` work request). rxe has them since Linux 5.13; on siw this throws
   * VerbsError EOPNOTSUPP naming the cause (siw has no memory windows).
   */
  allocMw(type: MwType): Mw {
    const value = (MW_TYPE as Record<string, number>)[String(type)];
    if (value === undefined) throw new VerbsArgumentError('type', 'must be 1 or 2');
    try {
      return new Mw(new (addon().NativeMw)(this.native, value), this);
    } catch (e) {
      throw withProviderCause(e, this.context.name);
    }
  }

  /** An address handle for UD sends (RoCE: give `grh` with the peer's GID). */
  createAh(av: AddressVector): Ah {
    return new Ah(new (addon().NativeAh)(this.native, nativeAv(av)), this);
  }
}
