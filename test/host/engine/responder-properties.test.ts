import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { makeAtomicRequest } from '../../../src/codec/iwarp/build.js';
import type { AtomicResponse } from '../../../src/codec/iwarp/messages.js';
import {
  maskedCompareSwap,
  maskedFetchAdd,
  U64_MASK,
} from '../../../src/engine/atomic/masked-arith.js';
import { accessMask } from '../../../src/ibverbs/access-flags.js';
import { BASE_TO, STAG, setup } from './helpers.js';

const u64 = fc.bigInt({ min: 0n, max: U64_MASK });
const order = fc.constantFrom('little-endian' as const, 'big-endian' as const);

describe('Responder properties', () => {
  it('property: in either memory byte order, FetchAdd / CmpSwap store the arithmetic result and return the original', () => {
    fc.assert(
      fc.property(
        order,
        u64,
        u64,
        u64,
        u64,
        u64,
        fc.boolean(),
        (o, original, data, mask, compare, compareMask, cas) => {
          const { responder, word } = setup({ order: o, words: [original] });
          const request = makeAtomicRequest({
            operation: cas ? 'cmp-swap' : 'fetch-add',
            messageSequenceNumber: 1,
            requestIdentifier: 1,
            remoteSTag: STAG,
            remoteTaggedOffset: BASE_TO,
            addOrSwapData: data,
            addOrSwapMask: mask,
            compareData: compare,
            compareMask,
          });
          const r = responder.receive(request);
          expect((r.sent[0] as AtomicResponse).originalRemoteDataValue).toBe(original);
          const expected = cas
            ? maskedCompareSwap(original, compare, compareMask, data, mask).value
            : maskedFetchAdd(original, data, mask);
          expect(word(0)).toBe(expected);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('property: a request that fails any check never changes memory and always yields exactly one Terminate', () => {
    const offsets = fc.oneof(fc.bigInt({ min: -16n, max: 80n }), fc.constant(U64_MASK - 3n));
    fc.assert(
      fc.property(
        offsets,
        fc.constantFrom(STAG, 0x0badbad0),
        fc.boolean(),
        fc.constantFrom(0x0, 0x1, 0x2, 0x5),
        u64,
        (offset, stag, atomicRight, aOpCode, data) => {
          const access = atomicRight ? accessMask(['REMOTE_ATOMIC']) : accessMask(['REMOTE_READ']);
          const { responder, buffer } = setup({
            access,
            words: [0x0123456789abcdefn, 0x0f1e2d3c4b5a6978n],
          });
          const before = buffer.memory.slice();
          const to = (BASE_TO + offset) & U64_MASK;
          const request = {
            ...makeAtomicRequest({
              operation: 'fetch-add',
              messageSequenceNumber: 1,
              requestIdentifier: 1,
              remoteSTag: stag,
              remoteTaggedOffset: to,
              addOrSwapData: data | 1n,
            }),
            aOpCode,
          };
          const r = responder.receive(request);
          if (r.outcome === 'terminated') {
            expect(buffer.memory).toEqual(before);
            expect(r.sent).toEqual([r.terminate]);
          } else {
            expect(r.outcome).toBe('accepted');
            expect(r.sent.map((m) => m.kind)).toEqual(['atomic-response']);
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
