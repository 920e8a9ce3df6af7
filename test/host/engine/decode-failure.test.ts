/**
 * Issue 8: the failure (and so the Terminate) a segment the codec refuses stands for is
 * read from the DecodeError's field, not guessed from its reason: a Read Request with a
 * trailing byte is a malformed segment, Immediate Data of 7 or 9 bytes is an Immediate
 * Data length error (RFC 7306 §6.3).
 */
import { describe, expect, it } from 'vitest';
import {
  makeAtomicRequest,
  makeImmediateData,
  makeReadRequest,
} from '../../../src/codec/iwarp/build.js';
import type { RdmapMessage } from '../../../src/codec/iwarp/messages.js';
import { decodeRdmapMessage, encodeRdmapMessage } from '../../../src/codec/iwarp/rdmap.js';
import { failureOfDecodeError } from '../../../src/engine/errors/decode-failure.js';
import { type EngineFailure, failureRow } from '../../../src/engine/errors/failure-table.js';
import { BASE_TO, STAG, setup } from './helpers.js';

/** The message's encoding with `delta` bytes added (zeros) or removed at the end. */
function resized(m: RdmapMessage, delta: number): Uint8Array {
  const b = encodeRdmapMessage(m);
  const out = new Uint8Array(b.length + delta);
  out.set(b.subarray(0, Math.min(b.length, out.length)));
  return out;
}

const readRequest = makeReadRequest({
  messageSequenceNumber: 1,
  sinkSTag: 0x11223344,
  sinkTaggedOffset: 0x0123456789abcdefn,
  readSize: 8,
  sourceSTag: STAG,
  sourceTaggedOffset: BASE_TO,
});
const immediate = makeImmediateData({
  messageSequenceNumber: 1,
  immediateData: 0x0123456789abcdefn,
});
const atomic = makeAtomicRequest({
  messageSequenceNumber: 1,
  operation: 'fetch-add',
  requestIdentifier: 0x51525354,
  remoteSTag: STAG,
  remoteTaggedOffset: BASE_TO,
  addOrSwapData: 0x0000000100000011n,
  addOrSwapMask: 0n,
});

const cases: readonly [string, Uint8Array, EngineFailure][] = [
  ['Read Request with one trailing byte', resized(readRequest, 1), 'malformed-segment'],
  ['Read Request one byte short', resized(readRequest, -1), 'malformed-segment'],
  ['Atomic Request with one trailing byte', resized(atomic, 1), 'malformed-segment'],
  ['Atomic Request one byte short', resized(atomic, -1), 'malformed-segment'],
  ['Immediate Data with 7 bytes', resized(immediate, -1), 'immediate-data-length'],
  ['Immediate Data with 0 bytes', resized(immediate, -8), 'immediate-data-length'],
  ['Immediate Data with 9 bytes', resized(immediate, 1), 'immediate-data-length'],
  ['a DDP header cut off', resized(immediate, -9), 'malformed-segment'],
];

describe('failureOfDecodeError maps by field (RFC 7306 §6.3, §8.2)', () => {
  it.each(cases)('%s', (_name, bytes, failure) => {
    const decoded = decodeRdmapMessage(bytes);
    expect(decoded.ok).toBe(false);
    if (decoded.ok) return;
    expect(failureOfDecodeError(decoded.error)).toBe(failure);
    // The Responder answers with that failure's Terminate (RFC 5040 §4.8).
    const { responder } = setup();
    responder.postReceive({ id: 1n, length: 64 });
    const r = responder.receiveSegment(bytes);
    expect(r.failure).toBe(failure);
    expect(r.completions).toEqual([]);
    const row = failureRow(failure);
    // A DDP header cut off cannot be copied.
    expect(r.terminate?.ddpHeaderIncluded).toBe(row.copiesDdpHeader && bytes.length >= 18);
    expect(r.terminate?.ddpSegmentLength).toBe(bytes.length >= 18 ? bytes.length : undefined);
  });

  it('Immediate Data of the wrong size is named as the immediateData field by the codec', () => {
    for (const delta of [-1, 1]) {
      const d = decodeRdmapMessage(resized(immediate, delta));
      expect(d.ok ? 'ok' : `${d.error.layer}.${d.error.field} ${d.error.reason}`).toBe(
        `rdmap-ext.immediateData ${delta < 0 ? 'truncated' : 'bad-length'}`,
      );
    }
  });
});
