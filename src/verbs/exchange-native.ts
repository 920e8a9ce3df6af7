/**
 * @internal The addon's Send/Receive exchange (native/exchange.cc), typed here beside the
 * main bindings (src/native/bindings.ts), as ext-native.ts types the verbs of issue 34.
 */
import type { NativeHandle, NativeQp } from '../native/bindings.js';
import { addon } from './native.js';

/** The operations of the exchange's one bound call (native/exchange.cc `Op`). */
export const EXCHANGE_OP = {
  run: 0,
  start: 1,
  resume: 2,
  postReceives: 3,
  release: 4,
} as const;

/**
 * Byte offsets in the exchange's memory: the receive completion (WC_LAYOUT words), the
 * next sends' immediate (host order), the last post's stamp; `notYet` is what start and
 * resume answer while the wait goes on. A host test checks them against the addon's
 * `exchangeLayout`.
 */
export const EXCHANGE_LAYOUT = {
  wc: 0,
  immData: 56,
  postedAtUs: 64,
  bytes: 72,
  notYet: 0x100,
} as const;

/** What `createExchange` returns. */
export interface NativeExchange {
  /** The exchange's memory (EXCHANGE_LAYOUT). */
  readonly memory: ArrayBuffer;
  /** One operation (EXCHANGE_OP) -> 0, a failed completion's status, or `notYet`. */
  readonly call: (op: number, arg: number) => number;
}

/** The addon's exchange functions. */
export interface NativeExchangeAddon {
  createExchange(
    qp: NativeQp,
    sendWords: Uint32Array,
    sendHandles: readonly NativeHandle[],
    recvWords: Uint32Array,
    timeoutMs: number,
    signalEvery: number,
  ): NativeExchange;
  readonly exchangeLayout: Readonly<Record<keyof typeof EXCHANGE_LAYOUT, number>>;
}

/** @internal the addon, with the exchange's functions. */
export function exchangeAddon(): NativeExchangeAddon {
  return addon() as unknown as NativeExchangeAddon;
}
