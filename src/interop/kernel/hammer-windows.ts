/**
 * The FetchAdds of a hammer step spread over several requester QPs, each keeping at most
 * a window of requests outstanding: what the in-process hammer (hammer.ts) and the link's
 * (link/hammer.ts) post and count alike.
 */
import type { WorkCompletion } from '../../verbs/completion.js';
import type { Mr, RemoteRef } from '../../verbs/mr.js';
import type { Qp } from '../../verbs/qp.js';
import type { HammerStep } from '../program.js';
import type { Scenario } from '../scenario.js';

/**
 * QP `q`'s k-th FetchAdd is slot `q * step.count + k`: its wr_id, and the 8 bytes of the
 * sink its fetched value lands in.
 */
export class HammerWindows {
  readonly #qps: readonly Qp[];
  readonly #step: HammerStep;
  readonly #window: number;
  readonly #sink: Mr;
  readonly #target: RemoteRef;
  readonly #postPath: Scenario['postPath'];
  readonly #posted: number[];
  readonly #outstanding: number[];
  readonly #ok: boolean[];

  constructor(
    qps: readonly Qp[],
    step: HammerStep,
    window: number,
    sink: Mr,
    target: RemoteRef,
    postPath: Scenario['postPath'],
  ) {
    this.#qps = qps;
    this.#step = step;
    this.#window = window;
    this.#sink = sink;
    this.#target = target;
    this.#postPath = postPath;
    this.#posted = qps.map(() => 0);
    this.#outstanding = qps.map(() => 0);
    this.#ok = Array.from({ length: qps.length * step.count }, () => false);
  }

  /** Posts QP `q`'s next FetchAdds, up to its window (a refused post throws VerbsError). */
  post(q: number): void {
    const qp = this.#qps[q];
    if (qp === undefined) return;
    const count = this.#step.count;
    const posted = this.#posted[q] ?? 0;
    const room = Math.min(this.#window - (this.#outstanding[q] ?? 0), count - posted);
    if (room <= 0) return;
    qp.postSend(
      Array.from({ length: room }, (_, k) => {
        const slot = q * count + posted + k;
        return {
          wrId: BigInt(slot),
          opcode: 'ATOMIC_FETCH_AND_ADD' as const,
          sgList: [this.#sink.sge(slot * 8, 8)],
          remote: this.#target,
          add: this.#step.add,
        };
      }),
      this.#postPath,
    );
    this.#posted[q] = posted + room;
    this.#outstanding[q] = (this.#outstanding[q] ?? 0) + room;
  }

  /** Posts every QP's first window. */
  postAll(): void {
    for (let q = 0; q < this.#qps.length; q++) this.post(q);
  }

  /** Counts a completion; returns the index of its QP. */
  complete(wc: WorkCompletion): number {
    const q = Math.floor(Number(wc.wrId) / this.#step.count);
    this.#outstanding[q] = (this.#outstanding[q] ?? 1) - 1;
    if (wc.ok) this.#ok[Number(wc.wrId)] = true;
    return q;
  }

  /** Gives up QP `q`'s requests not yet posted: how many there were. */
  abandon(q: number): number {
    const left = this.#step.count - (this.#posted[q] ?? 0);
    this.#posted[q] = this.#step.count;
    return left;
  }

  /** The fetched values of the FetchAdds that succeeded, in slot order. */
  fetched(): bigint[] {
    return this.#ok.flatMap((good, i) => (good ? [this.#sink.buffer.readBigUInt64LE(i * 8)] : []));
  }
}
