/**
 * The memory a prepared exchange shares with the addon (native/exchange.cc ExchangeBlock)
 * is where src/verbs/exchange-native.ts reads it, and the exchange's arguments are
 * refused as typed errors before anything reaches a device (no RDMA device is needed: the
 * checks run first).
 */
import { describe, expect, it } from 'vitest';
import { WC_WORDS } from '../../../src/native/bindings.js';
import { EXCHANGE_LAYOUT, EXCHANGE_OP, exchangeAddon } from '../../../src/verbs/exchange-native.js';
import { prepareExchange, VerbsArgumentError } from '../../../src/verbs/index.js';

describe('prepared exchange layout', () => {
  it('EXCHANGE_LAYOUT is the layout of the memory an exchange shares', () => {
    expect(exchangeAddon().exchangeLayout).toEqual({ ...EXCHANGE_LAYOUT });
    // The completion words come first, in the poll's layout; the stamp is 8-aligned.
    expect(EXCHANGE_LAYOUT.immData).toBe(WC_WORDS * 4);
    expect(EXCHANGE_LAYOUT.postedAtUs % 8).toBe(0);
  });

  it('the operations are distinct and release is the last (the addon bounds op by it)', () => {
    const ops = Object.values(EXCHANGE_OP);
    expect(new Set(ops).size).toBe(ops.length);
    expect(Math.max(...ops)).toBe(EXCHANGE_OP.release);
  });

  it('createExchange refuses what is not a Qp as a typed error', () => {
    const words = new Uint32Array(8);
    expect(() => exchangeAddon().createExchange({} as never, words, [], words, 1000, 1)).toThrow(
      VerbsArgumentError,
    );
    let thrown: unknown;
    try {
      prepareExchange({} as never, { send: { opcode: 'SEND' }, recv: {} });
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(VerbsArgumentError);
  });
});
