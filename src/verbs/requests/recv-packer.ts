/**
 * The packed form of `Qp.postRecv`'s and `Srq.postRecv`'s requests, as send-packer.ts is
 * `postSend`'s: checked receive requests written into one reused block of memory
 * (RECV_LAYOUT) that `postRecv` reads with no N-API property read per request (six
 * per one-SGE receive in the object form: most of a receive's cost under emulation).
 */

import {
  RECV_LAYOUT,
  RECV_WORDS,
  SEND_SGE_LAYOUT,
  SEND_SGE_WORDS,
} from '../../native/request-layout.js';
import { VerbsArgumentError } from '../errors.js';
import type { Resource } from '../lifetime.js';
import { WordMemory } from './send-packer.js';
import { KeepList, type MutableSge, sgeInto, u64 } from './sge.js';
import type { RecvWr } from './wr.js';

/**
 * A packed receive: its wrId and what it keeps alive until its completion. It is also
 * the queue's in-flight record as it is (`signaled`: a receive always completes), so
 * posting makes no second object per request.
 */
export interface PackedRecv {
  readonly wrId: bigint;
  readonly signaled: true;
  readonly keep: readonly Resource[];
}

/** What the packed form posts to (`NativeQp` or `NativeSrq`). */
interface RecvTarget {
  postRecv(words: Uint32Array, count: number): void;
}

const NO_SGES: readonly never[] = [];

/** The words request i takes, after checking its shape (nothing is packed before all pass). */
function wordsOf(
  wr: RecvWr | undefined,
  i: number,
  name: (i: number) => string,
  maxSge: number,
): number {
  if (typeof wr !== 'object' || wr === null)
    throw new VerbsArgumentError(name(i), 'a receive request must be an object');
  const sgList = wr.sgList;
  if (sgList !== undefined && !Array.isArray(sgList))
    throw new VerbsArgumentError(`${name(i)}.sgList`, 'must be an array');
  const count = sgList?.length ?? 0;
  if (count > maxSge)
    throw new VerbsArgumentError(
      `${name(i)}.sgList`,
      `${count} SGEs, more than the SRQ's max_sge (${maxSge})`,
    );
  return RECV_WORDS + count * SEND_SGE_WORDS;
}

const L = RECV_LAYOUT;
const S = SEND_SGE_LAYOUT;

/** One queue's packing memory. */
export class RecvPacker {
  readonly #memory = new WordMemory();
  readonly #keep = new KeepList();
  readonly #sge: MutableSge = { addr: 0n, length: 0, lkey: 0 };

  /**
   * Checks and packs `list`, then posts it with one call; returns the requests as they
   * were packed (in order), for the caller to track. `name(i)` names request i in errors;
   * `maxSge` refuses a longer list before anything is posted; a request without a wrId
   * takes `nextWrId()`.
   */
  pack(
    list: readonly RecvWr[],
    name: (i: number) => string,
    nextWrId: () => bigint,
    maxSge = Number.POSITIVE_INFINITY,
  ): PackedRecv[] {
    let words = 0;
    for (let i = 0; i < list.length; i++) words += wordsOf(list[i], i, name, maxSge);
    this.#memory.reserve(words);
    const out: PackedRecv[] = new Array(list.length);
    let at = 0;
    for (let i = 0; i < list.length; i++) {
      const packed = this.#write(list[i] as RecvWr, i, at, name, nextWrId);
      out[i] = packed;
      at += RECV_WORDS + (list[i]?.sgList?.length ?? 0) * SEND_SGE_WORDS;
    }
    return out;
  }

  /**
   * `pack([wr])` without the lists (the everyday repost of one receive): the same checks,
   * one packed record made.
   */
  packOne(
    wr: RecvWr,
    name: (i: number) => string,
    nextWrId: () => bigint,
    maxSge = Number.POSITIVE_INFINITY,
  ): PackedRecv {
    this.#memory.reserve(wordsOf(wr, 0, name, maxSge));
    return this.#write(wr, 0, 0, name, nextWrId);
  }

  // Writes checked request `wr` (request i of its list) at word `at`.
  #write(
    wr: RecvWr,
    i: number,
    at: number,
    name: (i: number) => string,
    nextWrId: () => bigint,
  ): PackedRecv {
    const { u32, u64: u64w } = this.#memory;
    const sgList = wr.sgList ?? NO_SGES;
    const keep = this.#keep;
    const base = at;
    at += RECV_WORDS;
    try {
      for (let k = 0; k < sgList.length; k++) {
        const sge = this.#sge;
        sgeInto(sgList[k], k, keep, false, sge);
        u64w[(at + S.sgeAddr) / 2] = sge.addr;
        u32[at + S.sgeLength] = sge.length;
        u32[at + S.sgeLkey] = sge.lkey;
        at += SEND_SGE_WORDS;
      }
    } catch (e) {
      keep.take(); // a refused request keeps nothing
      throw e;
    }
    const wrId = wr.wrId === undefined ? nextWrId() : u64(`${name(i)}.wrId`, wr.wrId);
    u64w[(base + L.wrId) / 2] = wrId;
    u32[base + L.numSge] = sgList.length;
    return { wrId, signaled: true, keep: keep.take() };
  }

  /** Rewrites the wrId of packed request 0 at word `at` (a prepared receive's first). */
  setWrId(at: number, wrId: bigint): void {
    this.#memory.u64[(at + L.wrId) / 2] = wrId;
  }

  /** Posts the one request `pack` packed last `count` times (wrIds counting up). */
  postCopies(
    target: { postRecvCopies(words: Uint32Array, count: number): void },
    count: number,
  ): void {
    target.postRecvCopies(this.#memory.u32, count);
  }

  /** Posts what `pack` packed last: `count` requests, one doorbell. */
  post(target: RecvTarget, count: number): void {
    target.postRecv(this.#memory.u32, count);
  }
}
