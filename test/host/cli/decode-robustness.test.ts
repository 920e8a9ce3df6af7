/**
 * The capture decoder behind `rdma-interop decode` must turn any damaged capture into
 * values and DecodeErrors: it never throws, and the renderers accept whatever it returns.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeCaptureMessages } from '../../../src/codec/capture/decode-capture.js';
import { captureToJson, captureToText } from '../../../src/codec/capture/render.js';
import { DecodeError } from '../../../src/codec/errors.js';
import { makeImmediateData } from '../../../src/codec/iwarp/build.js';
import { makeMpaFrame } from '../../../src/codec/iwarp/mpa-frames.js';
import { encodeMpaStream } from '../../../src/codec/iwarp/stream.js';
import { encodePcap } from '../../../src/codec/pcap/pcap.js';
import { buildRoceFrame } from '../../../src/codec/roce/frame.js';
import { TcpConversation } from '../../helpers/pcap.js';

function sampleFrames(): Uint8Array[] {
  const conv = new TcpConversation({
    clientIp: '10.0.0.1',
    serverIp: '10.0.0.2',
    clientPort: 40000,
    serverPort: 4000,
  });
  const req = makeMpaFrame('mpa-request', { crc: true, markers: true });
  const rep = makeMpaFrame('mpa-reply', { crc: true, markers: true });
  const c = encodeMpaStream(
    req,
    [makeImmediateData({ messageSequenceNumber: 1, immediateData: 0x0123456789abcdefn })],
    { peerFrame: rep },
  );
  conv
    .handshake()
    .send('client', c.frame)
    .send('server', encodeMpaStream(rep, [], { peerFrame: req }).frame);
  for (const f of c.fpdus) conv.send('client', f);
  const roce = buildRoceFrame(
    { sourceIp: '192.0.2.1', destinationIp: '192.0.2.2' },
    {
      bth: { opcode: 0x05, destinationQp: 9, psn: 3 },
      headers: { ImmDt: { immediateData: 0x01020304 } },
      payload: Uint8Array.of(7, 7, 7),
    },
  );
  return [...conv.frames(), roce];
}

describe('capture decoder robustness', () => {
  const frames = sampleFrames();
  const file = encodePcap(
    { linkType: 1 },
    frames.map((data, i) => ({ timestampNs: BigInt(i), data })),
  );

  it('decodes the sample cleanly', () => {
    const r = decodeCaptureMessages(file);
    if (!r.ok) throw r.error;
    expect(r.value.items.map((i) => i.kind)).toEqual(['mpa-frame', 'mpa-frame', 'fpdu', 'roce']);
  });

  it('mutated and truncated captures give items or DecodeErrors, and render', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), {
          minLength: 1,
          maxLength: 4,
        }),
        fc.nat(),
        (edits, cut) => {
          const bytes = file.slice();
          for (const [at, v] of edits) bytes[24 + (at % (bytes.length - 24))] = v;
          for (const b of [bytes, bytes.subarray(0, cut % (bytes.length + 1))]) {
            const r = decodeCaptureMessages(b);
            if (!r.ok) {
              expect(r.error).toBeInstanceOf(DecodeError);
              continue;
            }
            expect(typeof captureToText(r.value)).toBe('string');
            expect(JSON.stringify(captureToJson(r.value)).length).toBeGreaterThan(0);
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
