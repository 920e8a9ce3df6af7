/**
 * The memory a receive refill shares with the addon (native/recv_refill.cc RefillBlock)
 * is where src/verbs/recv-refill-native.ts reads it, and a refill's arguments are refused
 * as typed errors before anything reaches a device (no RDMA device is needed: the checks
 * run first).
 */
import { describe, expect, it } from 'vitest';
import { WC_WORDS } from '../../../src/native/bindings.js';
import { prepareRecvRefill, VerbsArgumentError } from '../../../src/verbs/index.js';
import {
  RECV_REFILL_LAYOUT,
  RECV_REFILL_OP,
  recvRefillAddon,
} from '../../../src/verbs/recv-refill-native.js';

describe('receive refill layout', () => {
  it('RECV_REFILL_LAYOUT is the layout of the memory a refill shares', () => {
    expect(recvRefillAddon().recvRefillLayout).toEqual({ ...RECV_REFILL_LAYOUT });
    // The completion words come first, in the poll's layout; the two counts follow.
    expect(RECV_REFILL_LAYOUT.outstanding).toBe(WC_WORDS * 4);
    expect(RECV_REFILL_LAYOUT.taken).toBe(RECV_REFILL_LAYOUT.outstanding + 4);
  });

  it('the operations are distinct and release is the last (the addon bounds op by it)', () => {
    const ops = Object.values(RECV_REFILL_OP);
    expect(new Set(ops).size).toBe(ops.length);
    expect(Math.max(...ops)).toBe(RECV_REFILL_OP.release);
  });

  it('createRecvRefill refuses what is not an SRQ, a QP or a CQ as a typed error', () => {
    const words = new Uint32Array(8);
    const addon = recvRefillAddon();
    expect(() => addon.createRecvRefill({} as never, true, {} as never, words, 0)).toThrow(
      VerbsArgumentError,
    );
    expect(() => addon.createRecvRefill({} as never, false, {} as never, words, 0)).toThrow(
      VerbsArgumentError,
    );
    expect(() =>
      addon.createRecvRefill({} as never, 'yes' as never, {} as never, words, 0),
    ).toThrow(VerbsArgumentError);
    for (const [queue, cq] of [
      [{}, {}],
      [null, {}],
      [undefined, undefined],
    ] as const) {
      let thrown: unknown;
      try {
        prepareRecvRefill(queue as never, cq as never, {});
      } catch (e) {
        thrown = e;
      }
      expect(thrown).toBeInstanceOf(VerbsArgumentError);
    }
  });
});
