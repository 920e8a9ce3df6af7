/**
 * @internal The addon's receive-then-repost (native/recv_refill.cc), typed here beside
 * the main bindings (src/native/bindings.ts), as exchange-native.ts types the exchange.
 */
import type { NativeCq, NativeQp, NativeSrq } from '../native/bindings.js';
import { addon } from './native.js';

/** The operations of the refill's one bound call (native/recv_refill.cc `Op`). */
export const RECV_REFILL_OP = {
  post: 0,
  repost: 1,
  repostUntil: 2,
  release: 3,
} as const;

/**
 * Byte offsets in the refill's memory: the failed receive completion (WC_LAYOUT words),
 * the receives posted and not completed, the successful completions the last call took;
 * `maxBatch` is the most one poll takes. A host test checks them against the addon's
 * `recvRefillLayout`.
 */
export const RECV_REFILL_LAYOUT = {
  wc: 0,
  outstanding: 56,
  taken: 60,
  bytes: 64,
  maxBatch: 256,
} as const;

/** What `createRecvRefill` returns. */
export interface NativeRecvRefill {
  /** The refill's memory (RECV_REFILL_LAYOUT). */
  readonly memory: ArrayBuffer;
  /** One operation (RECV_REFILL_OP) -> 0 or a failed completion's status. */
  readonly call: (op: number, a: number, b: number, c: number) => number;
}

/** The addon's refill functions. */
export interface NativeRecvRefillAddon {
  createRecvRefill(
    queue: NativeSrq | NativeQp,
    onSrq: boolean,
    cq: NativeCq,
    recvWords: Uint32Array,
    tagHigh: number,
  ): NativeRecvRefill;
  readonly recvRefillLayout: Readonly<Record<keyof typeof RECV_REFILL_LAYOUT, number>>;
}

/** @internal the addon, with the refill's functions. */
export function recvRefillAddon(): NativeRecvRefillAddon {
  return addon() as unknown as NativeRecvRefillAddon;
}
