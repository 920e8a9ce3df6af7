/**
 * The packed form of `Qp.postSend`'s requests: checked `NativeSendWr`s written into one
 * reused block of memory (SEND_LAYOUT) that `NativeQp.postPacked` reads. Reading a JS
 * object's fields through N-API costs a string and a lookup per field (about twenty per
 * request), which under emulation was most of a post; words in shared memory cost none.
 */

import { WR_OPCODE } from '../ibverbs/index.js';
import {
  type BoundPost,
  type NativeQp,
  type NativeSendWr,
  SEND_LAYOUT,
  SEND_SGE_LAYOUT,
  SEND_SGE_WORDS,
  SEND_WORDS,
} from '../native/bindings.js';
import { FLUSH_PLACEMENT, FLUSH_SELECTIVITY } from './flush.js';

/**
 * The opcodes the packed form carries (native/work_request.cc UnpackSendWords reads exactly their
 * fields); any other goes through the object form, which reads whatever it needs.
 */
const PACKED_OPCODES: ReadonlySet<number> = new Set([
  WR_OPCODE.RDMA_WRITE,
  WR_OPCODE.RDMA_WRITE_WITH_IMM,
  WR_OPCODE.SEND,
  WR_OPCODE.SEND_WITH_IMM,
  WR_OPCODE.RDMA_READ,
  WR_OPCODE.ATOMIC_CMP_AND_SWP,
  WR_OPCODE.ATOMIC_FETCH_AND_ADD,
  WR_OPCODE.ATOMIC_WRITE,
  WR_OPCODE.FLUSH,
]);

const L = SEND_LAYOUT;
const S = SEND_SGE_LAYOUT;

/**
 * @internal reused packing memory, seen as u32 words, u64 pairs and f64 pairs of them:
 * JavaScript's own, or, given `allocate`, memory that allocates (the addon's, for a bound
 * call that reads it).
 */
export class WordMemory {
  u32 = new Uint32Array(0);
  u64 = new BigUint64Array(0);
  f64 = new Float64Array(0);
  readonly #allocate: (words: number) => ArrayBuffer;

  constructor(allocate: (words: number) => ArrayBuffer = (words) => new ArrayBuffer(words * 4)) {
    this.#allocate = allocate;
  }

  /** Makes room for `words` (grown at least twofold, never shrunk). */
  reserve(words: number): void {
    if (this.u32.length >= words) return;
    const buffer = this.#allocate(Math.max(words, 2 * this.u32.length));
    this.u32 = new Uint32Array(buffer);
    this.u64 = new BigUint64Array(buffer);
    this.f64 = new Float64Array(buffer);
  }
}

/** Whether the packed form carries `wr` (else the object form posts it). */
function packable(wr: NativeSendWr): boolean {
  return wr.ah === undefined && PACKED_OPCODES.has(wr.opcode);
}

/** The words of `wr` packed. */
function wordsOf(wr: NativeSendWr): number {
  return SEND_WORDS + wr.sgList.length * SEND_SGE_WORDS;
}

/**
 * One QP's packing memory and the count of requests last packed into it. The two words
 * after the last request are the post's time stamp (`postedAt`), which the addon writes
 * just before ringing the doorbell, as a round trip stamps its posts.
 */
export class SendPacker {
  // The QP's packed post as a bound call over the addon's memory, remade when the memory
  // grows (native/bound_call.h: one N-API step per post).
  #bound: BoundPost | undefined;
  readonly #memory: WordMemory;
  #count = 0;
  #end = 0;

  constructor(qp: NativeQp) {
    this.#memory = new WordMemory((words) => {
      this.#bound = qp.boundPost(words);
      return this.#bound.memory;
    });
  }

  /**
   * Packs `wrs` (already checked); false, with nothing packed, when one of them needs
   * the object form (a UD destination, an opcode the packed form does not carry).
   */
  pack(wrs: readonly NativeSendWr[]): boolean {
    let words = 0;
    for (const wr of wrs) {
      if (!packable(wr)) return false;
      words += wordsOf(wr);
    }
    this.#memory.reserve(words + 2);
    let at = 0;
    for (const wr of wrs) at = this.#write(wr, at);
    this.#count = wrs.length;
    this.#end = at;
    return true;
  }

  /** `pack([wr])` without the list. */
  pack1(wr: NativeSendWr): boolean {
    if (!packable(wr)) return false;
    this.#memory.reserve(wordsOf(wr) + 2);
    this.#end = this.#write(wr, 0);
    this.#count = 1;
    return true;
  }

  // Writes `wr` at word `at`; returns the word after it.
  #write(wr: NativeSendWr, at: number): number {
    const { u32, u64 } = this.#memory;
    // Every field is written: the memory is reused, absent ones must read 0.
    u64[(at + L.wrId) / 2] = wr.wrId;
    u64[(at + L.remoteAddr) / 2] = wr.remoteAddr ?? 0n;
    u64[(at + L.compareAdd) / 2] = wr.compareAdd ?? 0n;
    u64[(at + L.swap) / 2] = wr.swap ?? 0n;
    u64[(at + L.atomicValue) / 2] = wr.atomicValue ?? 0n;
    u64[(at + L.flushLength) / 2] = wr.flushLength ?? 0n;
    u32[at + L.opcode] = wr.opcode;
    u32[at + L.sendFlags] = wr.sendFlags;
    u32[at + L.numSge] = wr.sgList.length;
    u32[at + L.immData] = wr.immData ?? 0;
    u32[at + L.rkey] = wr.rkey ?? 0;
    // The object form's defaults (native/work_request.cc ParseExRequests) for a request without them.
    u32[at + L.flushType] = wr.flushType ?? FLUSH_PLACEMENT.GLOBAL;
    u32[at + L.flushLevel] = wr.flushLevel ?? FLUSH_SELECTIVITY.RANGE;
    let w = at + SEND_WORDS;
    for (const sge of wr.sgList) {
      u64[(w + S.sgeAddr) / 2] = sge.addr;
      u32[w + S.sgeLength] = sge.length;
      u32[w + S.sgeLkey] = sge.lkey;
      w += SEND_SGE_WORDS;
    }
    return w;
  }

  /** Posts what `pack` packed last, with one doorbell (`ex`: the `ibv_wr_*` path). */
  post(ex: boolean): void {
    this.#memory.f64[this.#end / 2] = Number.NaN;
    // (Set by the first pack's reserve: nothing is posted before something was packed.)
    (this.#bound as BoundPost).post(this.#count, ex);
  }

  /**
   * When the last packed post rang its doorbell: microseconds on CLOCK_MONOTONIC's time
   * line, read from the TSC as `RoundTrip.postedAt` is (NaN before the first post, or if
   * the post was refused before its doorbell).
   */
  get postedAt(): number {
    return this.#memory.f64[this.#end / 2] ?? Number.NaN;
  }
}
