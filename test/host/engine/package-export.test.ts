import { describe, expect, it } from 'vitest';
import { engine } from '../../../src/index.js';

describe('rdma-interop engine export', () => {
  it('the docs/engine.md example gives what the docs say', () => {
    const { iwarp, roce } = engine.projectVerbs({
      responder: {
        buffers: [
          {
            stag: 0x1234,
            baseTaggedOffset: 0x7f0000001000n,
            length: 64,
            access: engine.accessMask(['REMOTE_ATOMIC']),
            protectionDomain: 1,
          },
        ],
      },
      workRequests: [
        {
          opcode: 'ATOMIC_FETCH_AND_ADD',
          wrId: 1n,
          remoteAddr: 0x7f0000001004n,
          rkey: 0x1234,
          add: 1n,
        },
      ],
    });
    expect(iwarp.terminate).toMatchObject({ layer: 0, errorType: 2, errorCode: 7 });
    expect(iwarp.requester.completions[0]?.status).toBe('REM_INV_REQ_ERR');
    expect(roce.nak).toBe('INVALID_REQUEST');
    expect(engine.checkOrdering(iwarp.trace.operations, iwarp.trace.events)).toEqual({
      ok: true,
      violations: [],
    });
  });
});
