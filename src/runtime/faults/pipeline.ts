/**
 * One direction of the fault relay: what happens to each frame, in this order, each step
 * drawing from the direction's own seeded stream (prng.ts), one draw per decision whether
 * it fires or not, so that a seed gives the same faults for the same frame sequence:
 * drop; (`mpa-crc`: the MPA Request's C bit, no draw); bit flip; TCP payload change; duplicate; hold back for reordering; delay + jitter.
 * Delay and jitter keep the order (a frame never leaves before the one sent ahead of it):
 * reordering is the hold-back's alone, so its count is exact. ARP and the segments of the
 * spared TCP ports (the guests' control channel) are the harness, not the system under
 * test: they pass untouched and undelayed, so that even `drop=1` leaves the guests able to
 * find each other's MAC address and to report.
 */
import { corruptTcpPayload, flipBit, isArp, requestMpaCrc, tcpSegmentOf } from './corrupt.js';
import type { Prng } from './prng.js';
import type { FaultSpec } from './spec.js';

/** What one direction did, frame by frame. */
export interface FaultCounts {
  /** Frames that reached the relay. */
  frames: number;
  /** Of those, ARP and the control channel's segments, passed untouched. */
  spared: number;
  /** Frames (copies included) the relay sent on. */
  forwarded: number;
  dropped: number;
  duplicated: number;
  /** Frames that left after at least one frame that arrived later. */
  reordered: number;
  /** Frames with a bit flipped (checksum or ICRC should catch them). */
  corrupted: number;
  /** TCP segments with a data byte changed and the checksum recomputed. */
  corruptedPayload: number;
  /** MPA Requests whose C bit the relay set (`mpa-crc=1`). */
  mpaCrcRequested: number;
}

export function zeroCounts(): FaultCounts {
  return {
    frames: 0,
    spared: 0,
    forwarded: 0,
    dropped: 0,
    duplicated: 0,
    reordered: 0,
    corrupted: 0,
    corruptedPayload: 0,
    mpaCrcRequested: 0,
  };
}

/** A held frame is released after this long even when no later frames come (idle link). */
export const HOLD_LIMIT_MS = 20;

interface Held {
  readonly frame: Uint8Array;
  remaining: number;
  overtaken: boolean;
  timer: NodeJS.Timeout;
}

export class FaultPipeline {
  readonly counts: FaultCounts = zeroCounts();
  readonly #held: Held[] = [];
  /** Delayed frames in departure order (non-decreasing), and the one timer of the head. */
  readonly #delayed: { readonly departure: number; readonly frame: Uint8Array }[] = [];
  #delayTimer: NodeJS.Timeout | undefined;
  #lastDeparture = 0;
  #closed = false;

  constructor(
    readonly spec: FaultSpec,
    readonly prng: Prng,
    readonly deliver: (frame: Uint8Array) => void,
    /** TCP ports whose segments keep their payload (the guests' control channel). */
    readonly spareTcpPorts: readonly number[] = [],
  ) {}

  /** One frame in. `frame` is not kept: the pipeline works on its own copy. */
  push(frame: Uint8Array): void {
    if (this.#closed) return;
    const spec = this.spec;
    this.counts.frames += 1;
    const segment = this.spareTcpPorts.length === 0 ? undefined : tcpSegmentOf(frame);
    if (
      isArp(frame) ||
      (segment !== undefined &&
        (this.spareTcpPorts.includes(segment.srcPort) ||
          this.spareTcpPorts.includes(segment.dstPort)))
    ) {
      this.counts.spared += 1;
      this.#send(Uint8Array.from(frame));
      return;
    }
    if (this.prng.chance(spec.drop)) {
      this.counts.dropped += 1;
      return;
    }
    const copy = Uint8Array.from(frame);
    // Not a draw: every MPA Request asks for CRCs, so the PRNG stream is the same either way.
    if (spec.mpaCrc === 1 && requestMpaCrc(copy)) this.counts.mpaCrcRequested += 1;
    if (this.prng.chance(spec.corrupt) && flipBit(copy, this.prng)) this.counts.corrupted += 1;
    if (this.prng.chance(spec.corruptPayload) && corruptTcpPayload(copy, this.prng))
      this.counts.corruptedPayload += 1;
    const twice = this.prng.chance(spec.dup);
    if (twice) this.counts.duplicated += 1;
    this.#reorderStage(copy);
    if (twice) this.#reorderStage(Uint8Array.from(copy));
  }

  #reorderStage(frame: Uint8Array): void {
    if (this.spec.reorder > 0 && this.prng.chance(this.spec.reorderRate)) {
      const held: Held = {
        frame,
        remaining: this.spec.reorder,
        overtaken: false,
        timer: setTimeout(() => this.#release(held), HOLD_LIMIT_MS),
      };
      this.#held.push(held);
      return;
    }
    this.#delayStage(frame);
    for (const held of [...this.#held]) {
      held.overtaken = true;
      held.remaining -= 1;
      if (held.remaining <= 0) this.#release(held);
    }
  }

  #release(held: Held): void {
    const at = this.#held.indexOf(held);
    if (at < 0) return;
    this.#held.splice(at, 1);
    clearTimeout(held.timer);
    if (held.overtaken) this.counts.reordered += 1;
    this.#delayStage(held.frame);
  }

  #delayStage(frame: Uint8Array): void {
    const spec = this.spec;
    const extra = spec.jitterMs > 0 ? this.prng.next() * spec.jitterMs : 0;
    if (spec.delayMs === 0 && spec.jitterMs === 0) {
      this.#send(frame);
      return;
    }
    const now = performance.now();
    const departure = Math.max(this.#lastDeparture, now + spec.delayMs + extra);
    this.#lastDeparture = departure;
    this.#delayed.push({ departure, frame });
    if (this.#delayTimer === undefined) this.#armDelay(now);
  }

  /**
   * One timer, for the head of the queue: a timer per frame does not keep the order, since
   * Node counts each timeout from the event loop's cached time, not from the moment the
   * frame was pushed, so under load a later frame's shorter timeout fired first (seen in a
   * loaded host test run: frame 9 left after frame 10).
   */
  #armDelay(now: number): void {
    const head = this.#delayed[0];
    if (head === undefined) return;
    this.#delayTimer = setTimeout(() => this.#departDelayed(), Math.max(1, head.departure - now));
  }

  #departDelayed(): void {
    this.#delayTimer = undefined;
    const now = performance.now();
    while (this.#delayed.length > 0 && (this.#delayed[0]?.departure ?? Infinity) <= now) {
      const next = this.#delayed.shift();
      if (next !== undefined) this.#send(next.frame);
    }
    this.#armDelay(now);
  }

  #send(frame: Uint8Array): void {
    if (this.#closed) return;
    this.counts.forwarded += 1;
    this.deliver(frame);
  }

  /** Stops: held and delayed frames are discarded, nothing is sent afterwards. */
  close(): void {
    this.#closed = true;
    for (const held of this.#held.splice(0)) clearTimeout(held.timer);
    clearTimeout(this.#delayTimer);
    this.#delayTimer = undefined;
    this.#delayed.length = 0;
  }
}
