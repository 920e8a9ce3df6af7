/**
 * Send requests in the one form the addon reads (SEND_LAYOUT, src/native/request-layout.ts):
 * checked `NativeSendWr`s written as u32 words, the objects they name (an AH, a window and
 * its MR) in a handle list beside them. `Qp.postSend` packs into one reused block of
 * memory; `prepare` and `prepareRoundTrip` into words of their own (`packSendList`).
 * Reading a JS object's fields through N-API costs a string and a lookup per field (about
 * twenty per request), which under emulation was most of a post; words cost none.
 */

import type { BoundPost, NativeHandle, NativeQp } from '../../native/bindings.js';
import {
  SEND_LAYOUT,
  SEND_SGE_LAYOUT,
  SEND_SGE_WORDS,
  SEND_WORDS,
} from '../../native/request-layout.js';
import { FLUSH_PLACEMENT, FLUSH_SELECTIVITY } from '../flush.js';
import type { NativeSendWr } from './send-wr.js';

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

/** The words of `wr` packed. */
function wordsOf(wr: NativeSendWr): number {
  return SEND_WORDS + wr.sgList.length * SEND_SGE_WORDS;
}

/**
 * Writes `wr` at word `at` of `memory` (room reserved), the objects it names appended to
 * `handles`; returns the word after it.
 */
function writeSendWr(
  memory: WordMemory,
  at: number,
  wr: NativeSendWr,
  handles: NativeHandle[],
): number {
  const { u32, u64 } = memory;
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
  // The ibv_wr_* defaults (native/flush.h) for a request without them.
  u32[at + L.flushType] = wr.flushType ?? FLUSH_PLACEMENT.GLOBAL;
  u32[at + L.flushLevel] = wr.flushLevel ?? FLUSH_SELECTIVITY.RANGE;
  u32[at + L.invalidateRkey] = wr.invalidateRkey ?? 0;
  u32[at + L.remoteQpn] = wr.remoteQpn ?? 0;
  u32[at + L.remoteQkey] = wr.remoteQkey ?? 0;
  const bind = wr.bindInfo;
  u64[(at + L.bindAddr) / 2] = bind?.addr ?? 0n;
  u64[(at + L.bindLength) / 2] = bind?.length ?? 0n;
  u32[at + L.bindAccess] = bind?.access ?? 0;
  u32[at + L.bindRkey] = wr.bindRkey ?? 0;
  // The objects beside the words: a window then its MR, or a UD destination's AH.
  let handle = 0;
  if (wr.mw !== undefined && bind !== undefined) {
    handle = handles.push(wr.mw, bind.mr) - 1;
  } else if (wr.ah !== undefined) {
    handle = handles.push(wr.ah);
  }
  u32[at + L.handle] = handle;
  let w = at + SEND_WORDS;
  for (const sge of wr.sgList) {
    u64[(w + S.sgeAddr) / 2] = sge.addr;
    u32[w + S.sgeLength] = sge.length;
    u32[w + S.sgeLkey] = sge.lkey;
    w += SEND_SGE_WORDS;
  }
  return w;
}

/** `wrs` packed into words of their own (prepare, a round trip), with their handle list. */
export function packSendList(wrs: readonly NativeSendWr[]): {
  words: Uint32Array;
  handles: NativeHandle[];
} {
  let words = 0;
  for (const wr of wrs) words += wordsOf(wr);
  const memory = new WordMemory();
  memory.reserve(words);
  const handles: NativeHandle[] = [];
  let at = 0;
  for (const wr of wrs) at = writeSendWr(memory, at, wr, handles);
  return { words: memory.u32, handles };
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
  // The objects the packed requests name (SEND_LAYOUT.handle), emptied by each post.
  readonly #handles: NativeHandle[] = [];
  #count = 0;
  #end = 0;

  constructor(qp: NativeQp) {
    this.#memory = new WordMemory((words) => {
      this.#bound = qp.boundPost(words);
      return this.#bound.memory;
    });
  }

  /** Packs `wrs` (already checked). */
  pack(wrs: readonly NativeSendWr[]): void {
    this.#handles.length = 0;
    let words = 0;
    for (const wr of wrs) words += wordsOf(wr);
    this.#memory.reserve(words + 2);
    let at = 0;
    for (const wr of wrs) at = writeSendWr(this.#memory, at, wr, this.#handles);
    this.#count = wrs.length;
    this.#end = at;
  }

  /** `pack([wr])` without the list. */
  pack1(wr: NativeSendWr): void {
    if (this.#handles.length > 0) this.#handles.length = 0;
    this.#memory.reserve(wordsOf(wr) + 2);
    this.#end = writeSendWr(this.#memory, 0, wr, this.#handles);
    this.#count = 1;
  }

  /** Posts what `pack` packed last, with one doorbell (`ex`: the `ibv_wr_*` path). */
  post(ex: boolean): void {
    this.#memory.f64[this.#end / 2] = Number.NaN;
    try {
      // (Set by the first pack's reserve: nothing is posted before something was packed.)
      (this.#bound as BoundPost).post(this.#count, ex, this.#handles);
    } finally {
      // The list keeps no window, MR or AH reachable past the post.
      if (this.#handles.length > 0) this.#handles.length = 0;
    }
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
