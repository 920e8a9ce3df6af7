import { afterEach, describe, expect, it } from 'vitest';
import type { PostPath } from '../../../src/verbs/index.js';
import { type Loopback, rxeLoopback, u64Buffer } from './fixtures.js';

// RFC 7306 §5.1 semantics as RoCE carries them; rxe operates on the target word as a
// host-order (little-endian on x86) u64 and returns the original value in host order.
const ORIGINAL = 0x0123456789abcdefn;
// Neither operand is a byte palindrome, so an operand or original sent or stored in the
// wrong byte order shows (issue 38): the add byte-swapped (0x8877665544332211) would leave
// 0x899aabbccddef000 in place of SUM; carries cross byte boundaries (0xef + 0x88 = 0x177)
// and the 32-bit one (0x89abcdef + 0x55667788 = 0xdf124577, no carry out; the upper
// halves 0x01234567 + 0x11223344 = 0x124578ab).
const ADD = 0x1122334455667788n;
const SUM = 0x124578abdf124577n; // hand-worked: 0x0123456789abcdef + 0x1122334455667788

describe.each([
  { path: 'legacy' as PostPath, extended: false },
  { path: 'ex' as PostPath, extended: true },
])('atomics on rxe0 in loopback ($path post path)', ({ path, extended }) => {
  let lo: Loopback | undefined;
  afterEach(() => lo?.close());

  function setUp() {
    lo = rxeLoopback({ extended });
    const target = lo.pd.regMr(u64Buffer(ORIGINAL), ['LOCAL_WRITE', 'REMOTE_ATOMIC']);
    const result = lo.pd.regMr(Buffer.alloc(8), ['LOCAL_WRITE']);
    return { lo, target, result };
  }

  it('FetchAdd returns the old value and leaves the exact sum in memory', async () => {
    const { lo, target, result } = setUp();
    expect(ORIGINAL + ADD).toBe(SUM);
    const [wrId] = lo.a.postSend(
      {
        wrId: 0xfedcba9876543210n,
        opcode: 'ATOMIC_FETCH_AND_ADD',
        sgList: [result.sge(0, 8)],
        remote: target.remote(0),
        add: ADD,
      },
      path,
    );
    const wc = await lo.cq.next({ timeoutMs: 10_000 });
    expect(wc.wrId).toBe(wrId);
    expect(wc.status).toBe('SUCCESS');
    expect(wc.opcode).toBe('FETCH_ADD');
    expect(wc.byteLen).toBe(8);
    expect(wc.qpNum).toBe(lo.a.qpNum);
    expect(result.buffer.readBigUInt64LE(0)).toBe(ORIGINAL);
    expect(target.buffer.readBigUInt64LE(0)).toBe(SUM);
    result.close();
    target.close();
  });

  it('CmpSwap swaps when the compare value matches and reports the old value', async () => {
    const { lo, target, result } = setUp();
    const SWAP = 0x0f1e2d3c4b5a6978n;
    lo.a.postSend(
      {
        opcode: 'ATOMIC_CMP_AND_SWP',
        sgList: [result.sge(0, 8)],
        remote: target.remote(0),
        compare: ORIGINAL,
        swap: SWAP,
      },
      path,
    );
    const wc = await lo.cq.next({ timeoutMs: 10_000 });
    expect(wc.status).toBe('SUCCESS');
    expect(wc.opcode).toBe('COMP_SWAP');
    expect(result.buffer.readBigUInt64LE(0)).toBe(ORIGINAL);
    expect(target.buffer.readBigUInt64LE(0)).toBe(SWAP);
    result.close();
    target.close();
  });

  it('CmpSwap leaves memory alone when the compare value differs', async () => {
    const { lo, target, result } = setUp();
    lo.a.postSend(
      {
        opcode: 'ATOMIC_CMP_AND_SWP',
        sgList: [result.sge(0, 8)],
        remote: target.remote(0),
        compare: 0x0123456789abcdeen,
        swap: 0x7766554433221100n,
      },
      path,
    );
    const wc = await lo.cq.next({ timeoutMs: 10_000 });
    expect(wc.status).toBe('SUCCESS');
    expect(result.buffer.readBigUInt64LE(0)).toBe(ORIGINAL);
    expect(target.buffer.readBigUInt64LE(0)).toBe(ORIGINAL);
    result.close();
    target.close();
  });
});
