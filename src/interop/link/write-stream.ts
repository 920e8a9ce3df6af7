/**
 * The write stream of the faulty-wire scenarios (fault-scenarios.ts): guest A writes
 * `bytes` of a known pattern into guest B's buffer as RDMA Writes with immediate data of
 * `chunk` bytes each (one immediate per chunk, its index), keeping `window` requests
 * outstanding; B posts a receive for every immediate before the stream starts (RFC 7306
 * §4.1 / IBTA 9.4.3.1: a Write with Immediate consumes a receive).
 *
 * What the transports must keep whatever the wire does: the bytes arrive intact, each
 * immediate once and in the order of the writes (IBTA 9.5 / RFC 5040 §5.5: messages of a
 * QP complete in order). B checks its own buffer against the pattern, so that 64 MiB need
 * not cross the control channel: how many bytes are as sent, untouched or wrong.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { WorkCompletion } from '../../verbs/completion.js';
import type { Cq } from '../../verbs/cq.js';
import { VerbsError } from '../../verbs/errors.js';
import type { Mr } from '../../verbs/mr.js';
import type { Qp } from '../../verbs/qp.js';

export interface WriteStream {
  /** Bytes written in all (a multiple of `chunk`). */
  readonly bytes: number;
  /** Bytes per RDMA Write with immediate. */
  readonly chunk: number;
  /** Requests A keeps outstanding, and receives B keeps posted. */
  readonly window: number;
}

/**
 * How long either side waits for the whole stream: the soak's 64 MiB under TCG and faults
 * included (scripts/soak.sh gives the guest pair 1800 s).
 */
export const STREAM_TIMEOUT_MS = 1_500_000;
/** A stream with no completion for this long has stalled: the side stops waiting. */
const STALL_MS = 60_000;
/** How long B waits for A's `done`: A's whole deadline, and its stall detection beyond. */
export const STREAM_DONE_TIMEOUT_MS = STREAM_TIMEOUT_MS + 2 * STALL_MS;
/** After the last completion, how long a side waits for a stray one. */
const SETTLE_MS = 200;
/** After the requester is done, how long B still waits for receives it was told of, or flushes. */
const LATE_MS = 5_000;

/**
 * The byte A writes at `offset`: never 0 (B's buffer starts zeroed, so a 0 is a byte never
 * placed), and not periodic in any power of two below 2^16 (a chunk placed at the wrong
 * offset shows).
 */
export function streamByte(offset: number): number {
  const mixed = Math.imul(offset ^ (offset >>> 13), 0x9e3779b1) >>> 24;
  return 1 + (mixed % 255);
}

/** The immediate of chunk `index` (not a byte palindrome). */
export function streamImm(index: number): number {
  return (0x5a000000 | index) >>> 0;
}

export function fillStream(buffer: Buffer, bytes: number): void {
  for (let i = 0; i < bytes; i++) buffer[i] = streamByte(i);
}

/** Each status and how many completions had it, in the order they first came. */
export type StatusRuns = string;

/**
 * The statuses of a completion sequence as runs: `16 SUCCESS`, `5 SUCCESS, 11 WR_FLUSH_ERR`.
 */
export function statusRuns(statuses: readonly string[]): StatusRuns {
  const runs: [string, number][] = [];
  for (const status of statuses) {
    const last = runs[runs.length - 1];
    if (last !== undefined && last[0] === status) last[1] += 1;
    else runs.push([status, 1]);
  }
  return runs.length === 0 ? 'none' : runs.map(([s, n]) => `${n} ${s}`).join(', ');
}

/** What A observed of its stream. */
export interface StreamRequesterObservation {
  /** ibv_post_send's result for the first post that failed, else `ok`. */
  readonly post: string;
  /** The completions' statuses as runs (statusRuns). */
  readonly statuses: StatusRuns;
  readonly succeeded: number;
  readonly elapsedMs: number;
}

/** Guest A: the stream's writes, `window` at a time, until every one completed or one failed. */
export async function requestStream(
  stream: WriteStream,
  qp: Qp,
  cq: Cq,
  allocate: (length: number) => Mr,
  remote: { readonly addr: bigint; readonly rkey: number },
): Promise<StreamRequesterObservation> {
  const source = allocate(stream.bytes);
  fillStream(source.buffer, stream.bytes);
  const total = stream.bytes / stream.chunk;
  const statuses: string[] = [];
  const started = performance.now();
  let posted = 0;
  let outstanding = 0;
  let failed = false;
  const post = (): string => {
    const room = Math.min(stream.window - outstanding, total - posted);
    if (room <= 0 || failed) return 'ok';
    try {
      qp.postSend(
        Array.from({ length: room }, (_, k) => {
          const index = posted + k;
          return {
            wrId: BigInt(index),
            opcode: 'RDMA_WRITE_WITH_IMM' as const,
            sgList: [source.sge(index * stream.chunk, stream.chunk)],
            remote: { addr: remote.addr + BigInt(index * stream.chunk), rkey: remote.rkey },
            immData: streamImm(index),
          };
        }),
        'legacy',
      );
    } catch (error) {
      if (!(error instanceof VerbsError)) throw error;
      return error.code;
    }
    posted += room;
    outstanding += room;
    return 'ok';
  };
  let result = post();
  const deadline = Date.now() + STREAM_TIMEOUT_MS;
  let lastCompletion = Date.now();
  while (outstanding > 0 && Date.now() < deadline && Date.now() - lastCompletion < STALL_MS) {
    const wcs = cq.poll(64);
    if (wcs.length === 0) {
      await sleep(1);
      continue;
    }
    lastCompletion = Date.now();
    for (const wc of wcs) {
      outstanding -= 1;
      statuses.push(wc.status);
      // A QP in error flushes what it has; posting more only adds flushes.
      if (!wc.ok) failed = true;
    }
    if (result === 'ok') result = post();
    else break;
  }
  return {
    post: result,
    statuses: statusRuns(statuses),
    succeeded: statuses.filter((s) => s === 'SUCCESS').length,
    elapsedMs: Math.round(performance.now() - started),
  };
}

/** What B observed of the stream: its receives' completions and its buffer. */
export interface StreamResponderObservation {
  /** The receive completions' statuses as runs. */
  readonly statuses: StatusRuns;
  /**
   * The immediates of the successful receive completions against the writes' order:
   * `every immediate once, in order` or what departs (repeats, gaps, out of order).
   */
  readonly immediates: string;
  /** The buffer against the pattern (placementOf). */
  readonly memory: string;
  /** Bytes as sent, untouched (0) and wrong; the first wrong offset. */
  readonly placed: number;
  readonly untouched: number;
  readonly wrong: number;
  readonly firstWrong?: number;
}

/** The immediates received, judged against the order the writes were posted in. */
export function immediatesOf(imms: readonly number[]): string {
  const seen = new Set<number>();
  let repeats = 0;
  let outOfOrder = 0;
  let next = 0;
  for (const imm of imms) {
    const index = (imm ^ 0x5a000000) >>> 0;
    if (seen.has(index)) repeats += 1;
    else if (index !== next) outOfOrder += 1;
    seen.add(index);
    next = index + 1;
  }
  if (repeats === 0 && outOfOrder === 0) return `every immediate once, in order (${imms.length})`;
  return `${imms.length} immediates: ${repeats} repeated, ${outOfOrder} out of order`;
}

/**
 * The buffer against the pattern: every byte as sent; or a prefix as sent and the rest
 * untouched (a stream cut short); or how many bytes are wrong.
 */
export function placementOf(
  buffer: Uint8Array,
  bytes: number,
): Pick<StreamResponderObservation, 'memory' | 'placed' | 'untouched' | 'wrong' | 'firstWrong'> {
  let placed = 0;
  let untouched = 0;
  let wrong = 0;
  let firstWrong: number | undefined;
  let firstUntouched: number | undefined;
  let placedAfterGap = false;
  for (let i = 0; i < bytes; i++) {
    const b = buffer[i] ?? 0;
    if (b === streamByte(i)) {
      placed += 1;
      if (firstUntouched !== undefined) placedAfterGap = true;
    } else if (b === 0) {
      untouched += 1;
      firstUntouched ??= i;
    } else {
      wrong += 1;
      firstWrong ??= i;
    }
  }
  const memory =
    wrong > 0
      ? `${wrong} byte(s) wrong, the first at ${firstWrong}`
      : untouched === 0
        ? 'every byte as sent'
        : placedAfterGap
          ? 'as sent where placed, with gaps'
          : 'a prefix as sent, the rest untouched';
  return { memory, placed, untouched, wrong, ...(firstWrong === undefined ? {} : { firstWrong }) };
}

/**
 * Guest B's receives for the immediates: keeps `window` posted and reposts as they
 * complete, until `expected` completed, a completion failed (the rest then flush), or
 * `stop()` says the requester is done and nothing more came for SETTLE_MS.
 */
export class StreamReceiver {
  readonly #wcs: WorkCompletion[] = [];
  #posted = 0;
  #ended = false;
  #stopAt: number | undefined;

  constructor(
    readonly stream: WriteStream,
    readonly qp: Qp,
    readonly cq: Cq,
    /**
     * iWARP: 8 bytes per receive for the Immediate Data Message (RFC 7306 §6.3 places its
     * 8 bytes in the untagged buffer; a receive without them is "no buffer", measured on
     * siw 6.1); RoCE: none (the immediate rides in the ImmDt header).
     */
    readonly slots?: Mr,
  ) {}

  /**
   * Every receive of the stream, before the requester connects: siw completes a Write at
   * the requester once TCP has it, so A's window does not bound what reaches B, and iWARP
   * has no RNR (a message without a receive is a Terminate, measured on siw 6.1).
   */
  postInitial(): void {
    this.#post(this.#expected());
  }

  #expected(): number {
    return this.stream.bytes / this.stream.chunk;
  }

  #post(count: number): void {
    if (count <= 0 || this.#ended) return;
    try {
      const slots = this.slots;
      this.qp.postRecv(
        Array.from({ length: count }, (_, k) => ({
          wrId: BigInt(this.#posted + k),
          sgList: slots === undefined ? [] : [slots.sge((this.#posted + k) * 8, 8)],
        })),
      );
      this.#posted += count;
    } catch (error) {
      // A QP in error refuses receives (siw after a Terminate): the ones posted flush.
      if (!(error instanceof VerbsError)) throw error;
      this.#ended = true;
    }
  }

  /**
   * Polls and reposts until every write's receive completed, or a completion failed and
   * every posted receive came back (flushed), or the requester is done (`stop`) and the
   * `consumed` receives it saw succeed came, or LATE_MS after `stop` (siw completes a
   * write at the requester once TCP has it, so a stream cut short may leave fewer here).
   */
  async serve(): Promise<void> {
    const deadline = Date.now() + STREAM_TIMEOUT_MS;
    let quietSince = Date.now();
    while (Date.now() < deadline && Date.now() - quietSince < STALL_MS) {
      const wcs = this.cq.poll(64);
      if (wcs.length > 0) {
        quietSince = Date.now();
        this.#wcs.push(...wcs);
        if (wcs.some((wc) => !wc.ok)) this.#ended = true;
        continue;
      }
      if (this.#wcs.length >= this.#expected()) break;
      if (this.#ended && this.#posted === this.#wcs.length) break;
      const stopAt = this.#stopAt;
      if (stopAt !== undefined) {
        const ok = this.#wcs.filter((wc) => wc.ok).length;
        if (!this.#ended && ok >= this.#consumed && Date.now() - quietSince > SETTLE_MS) break;
        if (Date.now() - stopAt > LATE_MS) break;
      }
      await sleep(1);
    }
  }

  #consumed = 0;

  /** The requester is done: `consumed` of its writes completed successfully. */
  stop(consumed: number): void {
    this.#consumed = consumed;
    this.#stopAt = Date.now();
  }

  observe(buffer: Uint8Array): StreamResponderObservation {
    const imms = this.#wcs.flatMap((wc) => (wc.ok && wc.immData !== undefined ? [wc.immData] : []));
    return {
      statuses: statusRuns(this.#wcs.map((wc) => wc.status)),
      immediates: immediatesOf(imms),
      ...placementOf(buffer, this.stream.bytes),
    };
  }
}
