/**
 * Memory windows and Send with Invalidate in the engine (issue 23): a window is a further
 * STag over part of a registered region, sharing its memory (IBTA 1.5 §10.6.7); a type 2
 * window is associated with one stream (QP); a local invalidation before a request, or a
 * Send with Invalidate (IBTA 1.5 IETH §9.3.8, RFC 5040 §4.1), ends it.
 */
import { describe, expect, it } from 'vitest';
import {
  TaggedBufferRegistrationError,
  TaggedBufferTable,
} from '../../../src/engine/memory/tagged-buffer.js';
import {
  projectIwarp,
  projectRoce,
  REQUESTER_STREAM,
  RESPONDER_STREAM,
  type ResponderWindow,
  type VerbsScenario,
} from '../../../src/engine/projection/project.js';
import { ACCESS_FLAGS } from '../../../src/ibverbs/access-flags.js';

const BASE = 0x7f3a_1000_0008n;
const MR = 0x1a2b3c4d;
const WINDOW = 0x1a2b3e02;
const RW = ACCESS_FLAGS.REMOTE_WRITE | ACCESS_FLAGS.REMOTE_READ;
const PAYLOAD = Uint8Array.of(0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88);

function scenario(
  window: Partial<ResponderWindow>,
  workRequests: VerbsScenario['workRequests'],
): VerbsScenario {
  return {
    responder: {
      buffers: [{ stag: MR, baseTaggedOffset: BASE, length: 32, access: RW, protectionDomain: 1 }],
      windows: [
        {
          parent: MR,
          stag: WINDOW,
          baseTaggedOffset: BASE + 16n,
          length: 16,
          access: RW,
          ...window,
        },
      ],
      receives: [{ id: 0x5201n, length: 8 }],
      protectionDomain: 1,
    },
    workRequests,
  };
}

const writeAt = (offset: bigint, wrId = 1n) =>
  ({
    wrId,
    opcode: 'RDMA_WRITE',
    remoteAddr: BASE + offset,
    rkey: WINDOW,
    payload: PAYLOAD,
  }) as const;

describe('memory windows in the engine', () => {
  it('a Write through the window lands in its region; outside the window it is refused', () => {
    const out = projectRoce(scenario({}, [writeAt(16n), writeAt(8n, 2n)]));
    expect(out.requester.completions.map((c) => c.status)).toEqual(['SUCCESS', 'REM_ACCESS_ERR']);
    expect([...(out.memory.get(MR) as Uint8Array).subarray(16, 24)]).toEqual([...PAYLOAD]);
    expect(out.failure).toBe('ddp-base-bounds');
  });

  it('a type 2 window answers on its own stream only (a DDP tagged error elsewhere, RFC 5041 §7.2)', () => {
    expect(projectRoce(scenario({ streamId: RESPONDER_STREAM }, [writeAt(16n)])).failure).toBe(
      undefined,
    );
    const other = projectIwarp(scenario({ streamId: REQUESTER_STREAM }, [writeAt(16n)]));
    expect(other.failure).toBe('ddp-stag-not-associated');
  });

  it('invalidated before a request, the window is an invalid STag from that request on', () => {
    const out = projectRoce(scenario({ invalidatedBefore: 1 }, [writeAt(16n), writeAt(24n, 2n)]));
    expect(out.requester.completions.map((c) => c.status)).toEqual(['SUCCESS', 'REM_ACCESS_ERR']);
    expect(out.failure).toBe('ddp-invalid-stag');
  });

  it('Send with Invalidate: WITH_INV and the rkey on the receive, then the window is gone', () => {
    const send = {
      wrId: 1n,
      opcode: 'SEND_WITH_INV',
      payload: PAYLOAD,
      invalidateRkey: WINDOW,
    } as const;
    const roce = projectRoce(scenario({}, [send, writeAt(16n, 2n)]));
    expect(roce.responder.completions[0]).toMatchObject({
      opcode: 'RECV',
      flags: ['WITH_INV'],
      invalidatedRkey: WINDOW,
    });
    expect(roce.requester.completions.map((c) => c.status)).toEqual(['SUCCESS', 'REM_ACCESS_ERR']);
    // IBTA 1.5 §9.3.8: SEND_ONLY_WITH_INVALIDATE (0x17) carries the rkey in its IETH.
    expect(roce.roceRequests[0]?.bth.opcode).toBe(0x17);
    expect(roce.roceRequests[0]?.headers.IETH?.rKey).toBe(WINDOW);
    // RFC 5040 §4.1: Send with Invalidate carries it in the Invalidate STag field.
    const iwarp = projectIwarp(scenario({}, [send]));
    const message = iwarp.iwarpWire[0]?.message;
    expect(message?.kind).toBe('send-invalidate');
    expect(message !== undefined && 'invalidateSTag' in message && message.invalidateSTag).toBe(
      WINDOW,
    );
  });

  it('refuses a window outside its region or over a taken STag, with a typed error', () => {
    const table = new TaggedBufferTable();
    table.register({
      stag: MR,
      baseTaggedOffset: BASE,
      length: 32,
      access: RW,
      protectionDomain: 1,
    });
    const window = { stag: WINDOW, baseTaggedOffset: BASE + 24n, length: 16, access: RW };
    expect(() => table.bindWindow(MR, window)).toThrow(TaggedBufferRegistrationError);
    expect(() => table.bindWindow(MR, { ...window, stag: MR, length: 8 })).toThrow(
      TaggedBufferRegistrationError,
    );
    expect(() => table.bindWindow(0x5e6f7a8b, { ...window, length: 8 })).toThrow(
      TaggedBufferRegistrationError,
    );
    const bound = table.bindWindow(MR, { ...window, length: 8 });
    bound.memory[0] = 0xab;
    expect(table.get(MR)?.memory[24]).toBe(0xab);
  });
});
