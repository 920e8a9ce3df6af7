/**
 * Issue 11: ATOMIC WRITE and FLUSH (IBTA 1.5 Annex A19, not RFC 7306) through the verbs
 * projection: executed on RoCE, with the packets predicted; not expressible on iWARP.
 */
import { describe, expect, it } from 'vitest';
import { encodeRocePacket } from '../../../src/codec/roce/packet.js';
import {
  projectIwarp,
  projectRoce,
  type VerbsScenario,
} from '../../../src/engine/projection/project.js';
import { ACCESS_FLAGS } from '../../../src/ibverbs/access-flags.js';

const BASE = 0x7f3a_1000_0008n;
function scenario(access: number, workRequests: VerbsScenario['workRequests']): VerbsScenario {
  const contents = new Uint8Array(32);
  new DataView(contents.buffer).setBigUint64(8, 0x0123456789abcdefn, true);
  return {
    responder: {
      buffers: [
        {
          stag: 0x1a2b3c4d,
          baseTaggedOffset: BASE,
          length: 32,
          access,
          protectionDomain: 1,
          contents,
        },
      ],
      protectionDomain: 1,
    },
    workRequests,
  };
}
const RW = ACCESS_FLAGS.REMOTE_WRITE | ACCESS_FLAGS.REMOTE_READ;

describe('IBTA 1.5 operations in the verbs projection', () => {
  it('ATOMIC WRITE on RoCE: placed, one RC_ATOMIC_WRITE packet with RETH length 8', () => {
    const out = projectRoce(
      scenario(RW, [
        {
          wrId: 7n,
          opcode: 'ATOMIC_WRITE',
          remoteAddr: BASE + 8n,
          rkey: 0x1a2b3c4d,
          atomicValue: 0x0f1e2d3c4b5a6978n,
        },
      ]),
    );
    expect(out.requester.completions[0]).toMatchObject({
      status: 'SUCCESS',
      opcode: 'ATOMIC_WRITE',
      byteLen: 8,
    });
    const word = new DataView((out.memory.get(0x1a2b3c4d) as Uint8Array).buffer).getBigUint64(
      8,
      true,
    );
    expect(word).toBe(0x0f1e2d3c4b5a6978n);
    expect(out.roceRequests[0]?.bth.opcode).toBe(0x1d);
    expect(out.roceRequests[0]?.headers.RETH?.dmaLength).toBe(8);
  });

  it('FLUSH without the MR right: REM_ACCESS_ERR, later requests flushed, FETH = MR|PERSISTENT bits', () => {
    const out = projectRoce(
      scenario(RW, [
        {
          wrId: 1n,
          opcode: 'FLUSH',
          remoteAddr: BASE,
          rkey: 0x1a2b3c4d,
          flush: { length: 32n, placement: 'PERSISTENT', selectivity: 'MR' },
        },
        {
          wrId: 2n,
          opcode: 'ATOMIC_WRITE',
          remoteAddr: BASE + 8n,
          rkey: 0x1a2b3c4d,
          atomicValue: 1n,
        },
      ]),
    );
    expect(out.requester.completions.map((c) => c.status)).toEqual([
      'REM_ACCESS_ERR',
      'WR_FLUSH_ERR',
    ]);
    expect(out.requester.qpState).toBe('ERR');
    expect(out.roceRequests[0]?.bth.opcode).toBe(0x1c);
    expect(out.roceRequests[0]?.headers.FETH?.value).toBe(0x12);
    // On the wire FETH follows the BTH and the RETH comes after it (rxe_opcode.c's offsets).
    const request = out.roceRequests[0];
    if (request === undefined) throw new Error('no FLUSH packet predicted');
    const bytes = encodeRocePacket(request);
    const wire = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    expect(wire.getUint32(12)).toBe(0x12);
    expect(wire.getBigUint64(16)).toBe(BASE);
    expect(wire.getUint32(24)).toBe(0x1a2b3c4d);
  });

  it('on iWARP they are not expressible (RFC 7306 has neither)', () => {
    const out = projectIwarp(
      scenario(RW, [
        {
          wrId: 3n,
          opcode: 'ATOMIC_WRITE',
          remoteAddr: BASE + 8n,
          rkey: 0x1a2b3c4d,
          atomicValue: 1n,
        },
      ]),
    );
    expect(out.notExpressible.map((e) => e.opcode)).toEqual(['ATOMIC_WRITE']);
  });
});
