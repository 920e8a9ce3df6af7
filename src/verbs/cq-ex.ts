/**
 * The extended CQ (issue 34): `ibv_create_cq_ex`, polled with `ibv_start_poll` /
 * `ibv_next_poll` / `ibv_end_poll` and the `ibv_wc_read_*` accessors (native/cq_ext.cc),
 * with the completion timestamps where the provider has them. A {@link CqEx} is a
 * {@link Cq} (QPs use it, `poll`, `pollUntil` and `next()` work on it as on any CQ:
 * librxe polls one queue either way); {@link CqEx.pollEx} adds the extended poll.
 *
 * Polling cost (rxe0, Linux 7.3, TCG guest, two runs of one boot, medians): an empty
 * `pollEx(16)` 6.8-6.9 us against 1.1 us for `poll(16)` (a bound call, native/bound_call.h);
 * draining 64 completions 214-223 us against 180-224 us. The extended poll is not cheaper
 * here: rxe's ibv_poll_cq copies little, and each ibv_wc_read_* is a call of its own.
 *
 * On rxe: created with the standard fields; librxe refuses the timestamps
 * (providers/rxe/rxe.c rxe_create_cq_ex, RXE_SUP_WC_EX_FLAGS: EOPNOTSUPP). On siw:
 * EOPNOTSUPP (libsiw has no create_cq_ex). Both refusals carry their cause.
 */

import { CREATE_CQ_WC_FLAGS } from '../ibverbs/ext-constants.js';
import { WC_WORDS } from '../native/bindings.js';
import { completionAt, type WorkCompletion } from './completion.js';
import { Cq } from './cq.js';
import type { Context } from './device.js';
import { VerbsArgumentError } from './errors.js';
import { verbsExt, wrapperObject } from './ext-native.js';
import { withProviderCause } from './provider-causes.js';

/** A completion timestamp an extended CQ can carry. */
export type CompletionTimestamp = 'COMPLETION_TIMESTAMP' | 'COMPLETION_TIMESTAMP_WALLCLOCK';

const TIMESTAMPS: Readonly<Record<CompletionTimestamp, number>> = {
  COMPLETION_TIMESTAMP: CREATE_CQ_WC_FLAGS.COMPLETION_TIMESTAMP,
  COMPLETION_TIMESTAMP_WALLCLOCK: CREATE_CQ_WC_FLAGS.COMPLETION_TIMESTAMP_WALLCLOCK,
};

/** Options of {@link createCqEx}. */
export interface CqExOptions {
  /** Entries asked for (256 by default). */
  readonly cqe?: number;
  /** With a completion channel, for `next()` (true by default). */
  readonly channel?: boolean;
  /** Timestamps each completion carries (none by default). */
  readonly timestamps?: readonly CompletionTimestamp[];
}

/** A completion read through `ibv_wc_read_*`, with the timestamps the CQ was made with. */
export interface CompletionEx extends WorkCompletion {
  /** `ibv_wc_read_completion_ts` (device clock ticks), when asked for. */
  readonly completionTimestamp?: bigint;
  /** `ibv_wc_read_completion_wallclock_ns`, when asked for. */
  readonly completionWallclockNs?: bigint;
}

/** Most completions one `pollEx` reads. */
const MAX_POLL = 256;

/**
 * A CQ made by `ibv_create_cq_ex`. Do not mix `pollEx` with a pending `next()`: the
 * completions a wake-up already took are `next()`'s.
 */
export class CqEx extends Cq {
  /** The timestamps each completion carries. */
  readonly timestamps: readonly CompletionTimestamp[];
  readonly #words = new Uint32Array(MAX_POLL * WC_WORDS);
  readonly #stamps = new BigUint64Array(MAX_POLL * 2);

  /** @internal use {@link createCqEx} */
  constructor(
    native: ConstructorParameters<typeof Cq>[0],
    context: Context,
    timestamps: readonly CompletionTimestamp[],
  ) {
    super(native, context, context.name);
    this.timestamps = timestamps;
  }

  /**
   * Up to `max` completions, without waiting: one `ibv_start_poll`, `ibv_next_poll` per
   * further completion, `ibv_end_poll`, each read with `ibv_wc_read_*`. Each is retired in
   * its QP as `poll()` does.
   */
  pollEx(max = 16): CompletionEx[] {
    if (!Number.isInteger(max) || max < 1 || max > MAX_POLL)
      throw new VerbsArgumentError('max', `must be an integer in [1, ${MAX_POLL}]`);
    const n = verbsExt().pollCqEx(this.native, this.#words, this.#stamps, max);
    const ts = this.timestamps.includes('COMPLETION_TIMESTAMP');
    const wall = this.timestamps.includes('COMPLETION_TIMESTAMP_WALLCLOCK');
    const out: CompletionEx[] = new Array(n);
    for (let i = 0; i < n; i++) {
      const wc = completionAt(this.#words, i);
      this.retire(wc);
      out[i] = {
        ...wc,
        ...(ts ? { completionTimestamp: this.#stamps[2 * i] ?? 0n } : {}),
        ...(wall ? { completionWallclockNs: this.#stamps[2 * i + 1] ?? 0n } : {}),
      };
    }
    return out;
  }
}

/** `ibv_create_cq_ex` on `context`: an extended CQ (see {@link CqEx}). */
export function createCqEx(context: Context, options: CqExOptions = {}): CqEx {
  wrapperObject<Context>(context, 'context', 'a Context (openDevice)');
  if (typeof options !== 'object' || options === null)
    throw new VerbsArgumentError('options', 'must be { cqe?, channel?, timestamps? }');
  const cqe = options.cqe ?? 256;
  if (!Number.isInteger(cqe) || cqe < 1 || cqe > 0x7fffffff)
    throw new VerbsArgumentError('cqe', 'must be an integer in [1, 2^31 - 1]');
  const channel = options.channel ?? true;
  if (typeof channel !== 'boolean') throw new VerbsArgumentError('channel', 'must be a boolean');
  const timestamps = options.timestamps ?? [];
  if (!Array.isArray(timestamps))
    throw new VerbsArgumentError('timestamps', 'must be an array of timestamp names');
  let flags = 0;
  timestamps.forEach((name, i) => {
    if (!Object.hasOwn(TIMESTAMPS, name))
      throw new VerbsArgumentError(
        `timestamps[${i}]`,
        `unknown timestamp ${String(name)} (COMPLETION_TIMESTAMP, COMPLETION_TIMESTAMP_WALLCLOCK)`,
      );
    flags |= TIMESTAMPS[name as CompletionTimestamp];
  });
  let native: ConstructorParameters<typeof Cq>[0];
  try {
    native = verbsExt().createCqEx(context.native, cqe, channel, flags);
  } catch (e) {
    throw withProviderCause(e, context.name);
  }
  const cq = new CqEx(native, context, [...timestamps]);
  context.trackCq(cq);
  return cq;
}
