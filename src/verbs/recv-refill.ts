/**
 * Receive-then-repost (issue 34): the loop of a receiver that keeps its queue full, "take
 * the receive completions that came, post as many receives again", in ONE native call
 * per batch (native/recv_refill.cc), where `cq.pollUntilCount(n)` + `prepared.post(n)`
 * is two. perftest's `ib_send_bw` server runs the same loop in C (poll a batch, repost
 * each completed receive).
 *
 * The receive is checked once, as `postRecv` checks it (`prepareRecvRefill`); each call
 * re-checks natively that the SRQ (or QP), the CQ and the receive's MRs are live. The
 * copies are numbered in the refill's own wrId space; completions that are not the
 * refill's (sends, other receives) are set aside for `cq.poll()` / `pollUntil()`, as a
 * round trip's are. A failed receive completion is a {@link VerbsCompletionError}.
 */

import { WC_LAYOUT, WC_WORDS } from '../native/bindings.js';
import { decodeWorkCompletion, toWorkCompletion, type WorkCompletion } from './completion.js';
import { Cq } from './cq.js';
import { VerbsArgumentError, VerbsError } from './errors.js';
import { wrapperObject } from './ext-native.js';
import type { Resource } from './lifetime.js';
import type { Qp } from './qp.js';
import {
  type NativeRecvRefill,
  RECV_REFILL_LAYOUT,
  RECV_REFILL_OP,
  recvRefillAddon,
} from './recv-refill-native.js';
import { RecvPacker } from './requests/recv-packer.js';
import { VerbsCompletionError } from './requests/round-trip.js';
import type { RecvWr } from './requests/wr.js';
import { type RefillSink, Srq } from './srq.js';

/** Receives one `post` takes at most (one list per call). */
const MAX_POST = 0xffff;
/** Completions one poll takes at most (the addon's bound). */
const MAX_BATCH = RECV_REFILL_LAYOUT.maxBatch;
/** The default of the busy forms, as `pollUntilCount`'s: empty polls in a row. */
const SPIN_LIMIT = 50_000_000;

// Refills number their receives apart from postRecv's (small counters), round trips'
// (bit 63 alone) and exchanges' (bits 63 and 62): bits 63 and 61, then a serial per
// refill in the high word; the low word counts the copies.
const TAG_HIGH = 0xa000_0000;
const MAX_SERIAL = 0x1fff_ffff;
let nextSerial = 0;

function recvName(): string {
  return 'wr';
}

function integer(name: string, v: unknown, min: number, max: number): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max)
    throw new VerbsArgumentError(name, `must be an integer in [${min}, ${max}]`);
  return v;
}

/** Options of {@link RecvRefill.repostUntil}. */
export interface RepostUntilOptions {
  /** Completions one poll takes at most, reposted together (1 to 256; default 16). */
  readonly batch?: number;
  /** Empty polls in a row before VerbsError ETIMEDOUT (a u32; default 50,000,000). */
  readonly spinLimit?: number;
}

/**
 * Prepares the receive-then-repost loop of `queue` (an SRQ, or a QP's own receive
 * queue) whose receive completions arrive on `cq`: the receive `wr` is checked once, as
 * `postRecv` checks it (no `wrId`: the refill numbers its copies). For an SRQ, `cq` must
 * be the receive CQ of one of its open QPs (create them first); for a QP, its receive CQ.
 */
export function prepareRecvRefill(queue: Srq | Qp, cq: Cq, wr: RecvWr): RecvRefill {
  const onSrq = queue instanceof Srq;
  const device = onSrq ? queue.device : wrapperObject<Qp>(queue, 'queue', 'an Srq or a Qp').device;
  const call = onSrq ? 'ibv_post_srq_recv' : 'ibv_post_recv';
  if (!(cq instanceof Cq)) throw new VerbsArgumentError('cq', 'must be a Cq');
  if (queue.closed)
    throw new VerbsError(
      'EBADF',
      9,
      call,
      device,
      onSrq ? 'the SRQ is closed' : 'queue pair is closed',
    );
  if (cq.closed)
    throw new VerbsError('EBADF', 9, 'ibv_poll_cq', device, 'completion queue is closed');
  if (onSrq) {
    if (!queue.receivesOn(cq))
      throw new VerbsArgumentError('cq', 'no open QP of the SRQ receives on this CQ');
  } else {
    const qp = queue as Qp;
    if (qp.srq !== undefined)
      throw new VerbsArgumentError(
        'queue',
        'the QP receives through an SRQ: prepare the refill on the SRQ',
      );
    if (qp.recvCq !== cq) throw new VerbsArgumentError('cq', "not the QP's receive CQ");
  }
  if (typeof wr !== 'object' || wr === null || Array.isArray(wr))
    throw new VerbsArgumentError('wr', 'a refill takes one receive request object');
  if (wr.wrId !== undefined)
    throw new VerbsArgumentError('wr.wrId', 'the refill numbers its receives: leave wrId out');
  const serial = nextSerial;
  nextSerial = nextSerial === MAX_SERIAL ? 0 : nextSerial + 1;
  const tagHigh = TAG_HIGH + serial;
  const packer = new RecvPacker();
  const maxSge = onSrq ? queue.maxSge : Number.POSITIVE_INFINITY;
  const packed = packer.packOne(wr, recvName, () => BigInt(tagHigh) << 32n, maxSge);
  let made: NativeRecvRefill | undefined;
  packer.post(
    {
      postRecv: (words: Uint32Array) => {
        made = recvRefillAddon().createRecvRefill(queue.native, onSrq, cq.native, words, tagHigh);
      },
    },
    1,
  );
  const refill = new RecvRefill(
    device,
    call,
    cq,
    made as NativeRecvRefill,
    [...packed.keep, queue, cq],
    tagHigh,
  );
  if (onSrq) queue.trackRefill(refill);
  return refill;
}

/**
 * A prepared receive-then-repost ({@link prepareRecvRefill}): `post(count)` fills the
 * queue, `repost(max)` / `repostUntil(count)` take receive completions and post as many
 * receives again, one native call each. Refused with VerbsError EBADF once released or
 * once the queue, the CQ or an MR of the receive is closed; a failed receive completion is
 * a {@link VerbsCompletionError} (not replaced: its QP is in error); do not
 * `await cq.next()` on the refill's CQ while using it (a completion a wake-up took is
 * not the refill's to see).
 */
export class RecvRefill implements RefillSink {
  readonly #device: string;
  readonly #postCall: string;
  readonly #cq: Cq;
  readonly #call: (op: number, a: number, b: number, c: number) => number;
  readonly #wc: Uint32Array;
  readonly #counts: Uint32Array;
  readonly #tagHigh: number;
  /** @internal the receive's MRs, the queue and the CQ, reachable while this is. */
  readonly keep: readonly object[];
  #released = false;

  /** @internal use {@link prepareRecvRefill} */
  constructor(
    device: string,
    postCall: string,
    cq: Cq,
    native: NativeRecvRefill,
    keep: readonly Resource[],
    tagHigh: number,
  ) {
    this.#device = device;
    this.#postCall = postCall;
    this.#cq = cq;
    this.#call = native.call;
    this.#wc = new Uint32Array(native.memory, RECV_REFILL_LAYOUT.wc, WC_WORDS);
    // [outstanding, taken]
    this.#counts = new Uint32Array(native.memory, RECV_REFILL_LAYOUT.outstanding, 2);
    this.#tagHigh = tagHigh;
    this.keep = keep;
  }

  /** Posts `count` copies of the receive (1 to 65535) in one post: the first fill. */
  post(count: number): void {
    integer('count', count, 1, MAX_POST);
    this.#usable();
    this.#call(RECV_REFILL_OP.post, count, 0, 0);
  }

  /**
   * Busy-polls the CQ until at least one of the refill's receive completions came (or
   * `spinLimit` empty polls in a row passed: 0 polls once), takes up to `max` (1 to 256)
   * and posts as many receives again: one native call. Returns how many it took.
   */
  repost(max = 16, spinLimit = 0): number {
    integer('max', max, 1, MAX_BATCH);
    integer('spinLimit', spinLimit, 0, 0xffffffff);
    this.#usable();
    this.#settle(this.#call(RECV_REFILL_OP.repost, max, spinLimit, 0));
    return this.#counts[1] as number;
  }

  /**
   * Takes and reposts `count` receive completions (0 to 2^32 - 1) in one native call,
   * polling up to `batch` at a time and reposting what each poll took. No completion for
   * `spinLimit` empty polls in a row: VerbsError ETIMEDOUT (what was taken was reposted;
   * `taken` says how many), or the CQ's failure (an overrun the device reported).
   */
  repostUntil(count: number, options: RepostUntilOptions = {}): void {
    integer('count', count, 0, 0xffffffff);
    if (typeof options !== 'object' || options === null)
      throw new VerbsArgumentError('options', 'must be { batch?, spinLimit? }');
    const batch = integer('batch', options.batch ?? 16, 1, MAX_BATCH);
    const spinLimit = integer('spinLimit', options.spinLimit ?? SPIN_LIMIT, 0, 0xffffffff);
    this.#usable();
    let status: number;
    try {
      status = this.#call(RECV_REFILL_OP.repostUntil, count, batch, spinLimit);
    } catch (e) {
      // A timeout may be a CQ the device failed (CQ_ERR comes as an async event).
      if (e instanceof VerbsError && e.code === 'ETIMEDOUT') {
        this.#cq.context.pollAsyncEvents();
        if (this.#cq.error !== undefined) throw this.#cq.error;
      }
      throw e;
    }
    this.#settle(status);
  }

  /** Receives it posted whose completions were not taken yet. */
  get outstanding(): number {
    return this.#counts[0] as number;
  }

  /** Successful receive completions the last `repost` / `repostUntil` took (and reposted). */
  get taken(): number {
    return this.#counts[1] as number;
  }

  /** The failed receive completion of the last call that threw one, as an object. */
  get failed(): WorkCompletion {
    return toWorkCompletion(decodeWorkCompletion(this.#wc, 0));
  }

  /** @internal a poll other than the refill's took one of its completions. */
  retireElsewhere(wrId: bigint): boolean {
    if (Number(wrId >> 32n) !== this.#tagHigh) return false;
    const counts = this.#counts;
    if ((counts[0] as number) > 0) counts[0] = (counts[0] as number) - 1;
    return true;
  }

  /** Forgets the request; later calls are refused (EBADF). Idempotent. */
  release(): void {
    if (this.#released) return;
    this.#released = true;
    this.#call(RECV_REFILL_OP.release, 0, 0, 0);
  }

  /** True once released. */
  get released(): boolean {
    return this.#released;
  }

  [Symbol.dispose](): void {
    this.release();
  }

  #usable(): void {
    if (this.#released)
      throw new VerbsError(
        'EBADF',
        9,
        this.#postCall,
        this.#device,
        'the receive refill was released',
      );
  }

  #settle(status: number): void {
    if (status === 0) return;
    const w = this.#wc;
    const wc = this.failed;
    throw new VerbsCompletionError(
      wc.status,
      w[WC_LAYOUT.status] ?? status,
      wc.wrId,
      wc.vendorErr,
      this.#device,
    );
  }
}
