import { describe, expect, it } from 'vitest';
import {
  projectIwarp,
  projectRoce,
  type VerbsScenario,
} from '../../../src/engine/projection/project.js';
import { ACCESS_FLAGS } from '../../../src/ibverbs/access-flags.js';

// Write-with-immediate into a receive WQE with no room: RoCE carries the immediate in the
// ImmDt header and does not use the receive's SGEs (IBTA; rxe completes it), while an
// RFC 7306 Immediate Data Message places its 8 bytes in the untagged buffer it consumes
// (§6.3), which then must hold them.
const scenario = (receiveLength: number): VerbsScenario => ({
  responder: {
    buffers: [
      {
        stag: 0x1a2b3c4d,
        baseTaggedOffset: 0x7f3a10000000n,
        length: 16,
        access: ACCESS_FLAGS.REMOTE_WRITE,
        protectionDomain: 1,
      },
    ],
    receives: [{ id: 0x52n, length: receiveLength }],
  },
  workRequests: [
    {
      wrId: 0x57n,
      opcode: 'RDMA_WRITE_WITH_IMM',
      remoteAddr: 0x7f3a10000000n,
      rkey: 0x1a2b3c4d,
      payload: Uint8Array.of(0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88),
      immData: 0x12345678,
    },
  ],
});

describe('where the immediate of a write-with-immediate travels', () => {
  it('RoCE: a zero-length receive completes with the immediate in host order', () => {
    const roce = projectRoce(scenario(0));
    expect(roce.failure).toBeUndefined();
    expect(roce.responder.completions).toEqual([
      expect.objectContaining({
        status: 'SUCCESS',
        opcode: 'RECV_RDMA_WITH_IMM',
        byteLen: 8,
        immData: { host: 0x12345678, network: 0x78563412 },
      }),
    ]);
  });

  it('iWARP (RFC 7306 §6.3): the same receive is too small for the Immediate Data Message', () => {
    const iwarp = projectIwarp(scenario(0));
    expect(iwarp.failure).toBe('message-too-long');
    expect(iwarp.terminate).toMatchObject({ kind: 'terminate' });
  });

  it('iWARP with an 8-byte receive completes like RoCE', () => {
    const iwarp = projectIwarp(scenario(8));
    expect(iwarp.failure).toBeUndefined();
    expect(iwarp.responder.completions[0]).toMatchObject({
      opcode: 'RECV_RDMA_WITH_IMM',
      immData: { host: 0x12345678 },
    });
  });
});
