/**
 * A receive request checked once and posted many times to an SRQ (`Srq.prepareRecv`):
 * `post(count)` refills the queue with `count` copies in one `ibv_post_srq_recv`, with no
 * JavaScript work per receive. The form of a receive loop that keeps a shared receive
 * queue full, as perftest's `ib_send_bw --use-srq` server reposts the same request.
 */

import { describeValue } from '../../arguments.js';
import type { NativeSrq } from '../../native/bindings.js';
import { VerbsArgumentError, VerbsError } from '../errors.js';
import type { Resource } from '../lifetime.js';
import { RecvPacker } from './recv-packer.js';
import type { RecvWr } from './wr.js';

/** Copies one `post` takes at most (the addon's bound: one list per call). */
export const MAX_RECV_COPIES = 0xffff;

/** What a prepared receive needs of its SRQ (its wrIds and in-flight runs). */
export interface RecvRunSink {
  readonly native: NativeSrq;
  readonly maxSge: number;
  readonly device: string;
  /** @internal `count` consecutive wrIds, the first returned. */
  takeWrIds(count: number): bigint;
  /** @internal `count` receives from `first` on were posted, keeping `keep` alive. */
  trackRun(first: bigint, count: number, keep: readonly Resource[]): void;
}

function templateName(): string {
  return 'wr';
}

function noWrId(): bigint {
  return 0n;
}

/** A receive request of an SRQ, checked once; `post(count)` posts copies of it. */
export class PreparedRecv {
  readonly #srq: RecvRunSink;
  readonly #packer = new RecvPacker();
  #keep: readonly Resource[];
  #released = false;

  /** @internal use `Srq.prepareRecv` */
  constructor(srq: RecvRunSink, wr: RecvWr) {
    if (typeof wr !== 'object' || wr === null || Array.isArray(wr))
      throw new VerbsArgumentError('wr', 'a prepared receive takes one receive request object');
    if (wr.wrId !== undefined)
      throw new VerbsArgumentError(
        'wr.wrId',
        'the copies of a prepared receive are numbered: post(count) returns the first wrId',
      );
    this.#srq = srq;
    const [packed] = this.#packer.pack([wr], templateName, noWrId, srq.maxSge);
    this.#keep = packed?.keep ?? [];
  }

  /**
   * Posts `count` copies (1 to 65535) in one `ibv_post_srq_recv`; returns the first wrId
   * (the others follow it, one apart). EBADF once released, or if one of its MRs was
   * closed; on a refusal by the provider (a full queue: ENOMEM) the copies before the
   * refused one were posted and stay tracked, as `postRecv`'s.
   */
  post(count: number): bigint {
    if (!Number.isInteger(count) || count < 1 || count > MAX_RECV_COPIES)
      throw new VerbsArgumentError(
        'count',
        `must be an integer in [1, ${MAX_RECV_COPIES}] (got ${describeValue(count)})`,
      );
    const srq = this.#srq;
    if (this.#released)
      throw new VerbsError(
        'EBADF',
        9,
        'ibv_post_srq_recv',
        srq.device,
        'the prepared receive was released',
      );
    for (const r of this.#keep)
      if (r.closed)
        throw new VerbsError(
          'EBADF',
          9,
          'ibv_post_srq_recv',
          srq.device,
          'a prepared receive uses a closed MR',
        );
    const first = srq.takeWrIds(count);
    this.#packer.setWrId(0, first);
    try {
      this.#packer.postCopies(srq.native, count);
    } catch (e) {
      const posted = e instanceof VerbsError ? (e.badWrIndex ?? 0) : 0;
      if (posted > 0) srq.trackRun(first, posted, this.#keep);
      throw e;
    }
    srq.trackRun(first, count, this.#keep);
    return first;
  }

  /** Forgets the request (its MRs are no longer kept by it); idempotent. */
  release(): void {
    this.#released = true;
    this.#keep = [];
  }

  /** Same as {@link release}. */
  [Symbol.dispose](): void {
    this.release();
  }
}
