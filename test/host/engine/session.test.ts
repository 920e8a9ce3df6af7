import { describe, expect, it } from 'vitest';
import type { TaggedBufferRegistration } from '../../../src/engine/memory/tagged-buffer.js';
import {
  EngineSession,
  type EngineSessionOptions,
  SessionMisuseError,
} from '../../../src/engine/session/session.js';
import { ArgumentError, UnknownNameError } from '../../../src/errors.js';
import { accessMask } from '../../../src/ibverbs/access-flags.js';

const RKEY = 0x1a2b3c4d;
const VA = 0x00007f3a_1000_0008n;
const LKEY = 0x5e6f7a8b;
const LOCAL_VA = 0x00007f3a_2000_0000n;
/** Not byte palindromes. */
const ORIGINAL = 0x0123456789abcdefn;
const ADD = 0x1111111122222222n;
const ALL = accessMask(['LOCAL_WRITE', 'REMOTE_WRITE', 'REMOTE_READ', 'REMOTE_ATOMIC']);

function region(): TaggedBufferRegistration {
  const contents = new Uint8Array(32);
  new DataView(contents.buffer).setBigUint64(8, ORIGINAL, true);
  return {
    stag: RKEY,
    baseTaggedOffset: VA,
    length: 32,
    access: ALL,
    protectionDomain: 1,
    contents,
  };
}

function options(
  transport: 'iwarp' | 'roce',
  extra: Partial<EngineSessionOptions['responder']> = {},
  rnrRetry?: number,
): EngineSessionOptions {
  return {
    transport,
    responder: { buffers: [region()], ...extra },
    requester: {
      localBuffers: [
        {
          stag: LKEY,
          baseTaggedOffset: LOCAL_VA,
          length: 64,
          access: accessMask(['LOCAL_WRITE']),
          protectionDomain: 1,
        },
      ],
      ...(rnrRetry === undefined ? {} : { rnrRetry }),
    },
  };
}

const wordOf = (bytes: Uint8Array | undefined, at: number): bigint =>
  new DataView(bytes?.buffer ?? new ArrayBuffer(64), bytes?.byteOffset ?? 0).getBigUint64(at, true);

const send = (wrId: bigint, byte: number) => ({
  wrId,
  opcode: 'SEND' as const,
  payload: new Uint8Array(8).fill(byte),
});

describe('engine session', () => {
  it.each(['iwarp', 'roce'] as const)(
    '%s: post, poll, memory: FetchAdd then Read of the word (RFC 7306 §5.4, IBTA 1.5 §9.4.5: original returned, sum stored; in-order RC: the Read sees the sum)',
    (transport) => {
      const session = new EngineSession(options(transport));
      const post = session.post('requester', [
        {
          wrId: 0x1001n,
          opcode: 'ATOMIC_FETCH_AND_ADD',
          remoteAddr: VA + 8n,
          rkey: RKEY,
          add: ADD,
        },
        {
          wrId: 0x1002n,
          opcode: 'RDMA_READ',
          remoteAddr: VA + 8n,
          rkey: RKEY,
          length: 8,
          localSTag: LKEY,
          localAddr: LOCAL_VA + 16n,
        },
      ]);
      expect(post.refused).toEqual([]);
      expect(session.poll('requester')).toMatchObject({
        wrId: 0x1001n,
        status: 'SUCCESS',
        opcode: 'FETCH_ADD',
        atomicOriginal: ORIGINAL,
      });
      expect(session.poll('requester')).toMatchObject({
        wrId: 0x1002n,
        status: 'SUCCESS',
        opcode: 'RDMA_READ',
      });
      expect(session.poll('requester')).toBeUndefined();
      expect(wordOf(session.memory('responder').get(RKEY), 8)).toBe(0x12345678abcdf011n);
      expect(wordOf(session.memory('requester').get(LKEY), 16)).toBe(0x12345678abcdf011n);
      expect(session.query('requester')).toBe('RTS');
      expect(session.query('responder')).toBe('RTS');
      if (transport === 'iwarp')
        expect(session.wire().iwarp.map((m) => `${m.from}:${m.message.kind}`)).toEqual([
          'requester:atomic-request',
          'responder:atomic-response',
          'requester:rdma-read-request',
          'responder:rdma-read-response',
        ]);
      else expect(session.wire().roce).toHaveLength(2);
    },
  );

  it('[IBTA-9.7.5.2.8-1] advance: a receive posted 300 ms into the RNR waits is found by the first retry; one after rnr_retry timers is not', () => {
    // min_rnr_timer code 0 = 655.36 ms (IBTA Table 45), rnr_retry 3.
    const late = new EngineSession(options('roce', { minRnrTimer: 0 }, 3));
    late.post('requester', [send(0x2001n, 0xa5)]);
    late.advance(300);
    late.postRecv('responder', { id: 0x3001n, length: 8, stag: RKEY, addr: VA + 16n });
    expect(late.poll('requester')).toMatchObject({ wrId: 0x2001n, status: 'SUCCESS' });
    expect(late.poll('responder')).toMatchObject({
      wrId: 0x3001n,
      status: 'SUCCESS',
      opcode: 'RECV',
    });
    expect(late.rnrDelayMs()).toBe(655.36);
    expect(wordOf(late.memory('responder').get(RKEY), 16)).toBe(0xa5a5a5a5a5a5a5a5n);

    const tooLate = new EngineSession(options('roce', { minRnrTimer: 0 }, 3));
    tooLate.post('requester', [send(0x2001n, 0xa5)]);
    tooLate.advance(2000); // the 4th retry would come at 2621.44 ms: there are 3
    tooLate.postRecv('responder', { id: 0x3001n, length: 8 });
    expect(tooLate.poll('requester')).toMatchObject({ status: 'RNR_RETRY_EXC_ERR' });
    expect(tooLate.rnrDelayMs()).toBeCloseTo(3 * 655.36, 9);
    expect(tooLate.query('requester')).toBe('ERR');
    expect(tooLate.query('responder')).toBe('RTS');
  });

  it('[IBTA-10.2.9-1] [IBTA-10.2.9.2-1] SRQ: receives in posting order to either QP; limit 2 over 4 receives fires at the third Send, once, then reads 0', () => {
    const session = new EngineSession(options('roce', { srq: true }));
    for (const id of [0x41n, 0x42n, 0x43n, 0x44n]) session.postRecv('responder', { id, length: 8 });
    session.srqLimit(2);
    session.post('requester', [send(0x51n, 1)], { via: 'first' });
    session.post('requester', [send(0x52n, 2)], { via: 'second' });
    expect(session.srqEvent()).toEqual({ reached: false, limit: 2 });
    session.post('requester', [send(0x53n, 3)], { via: 'first' });
    expect(session.srqEvent()).toEqual({ reached: true, limit: 0 });
    expect(session.srqEvent()).toEqual({ reached: false, limit: 0 });
    expect([1, 2, 3].map(() => session.poll('responder'))).toMatchObject([
      { wrId: 0x41n, via: 'first' },
      { wrId: 0x42n, via: 'second' },
      { wrId: 0x43n, via: 'first' },
    ]);
  });

  it('[IBTA-10.3.1-1] [IBTA-10.3.1-2] a Write posted back to a requester in ERR: RETRY_EXC_ERR, the responder to ERR, the next one flushed', () => {
    const session = new EngineSession(options('roce', {}, 0));
    session.post('requester', [send(0x61n, 7)]); // no receive, rnr_retry 0: requester ERR
    expect(session.query('requester')).toBe('ERR');
    expect(session.query('responder')).toBe('RTS');
    const back = (wrId: bigint) => ({
      wrId,
      opcode: 'RDMA_WRITE' as const,
      remoteAddr: LOCAL_VA,
      rkey: LKEY,
      payload: new Uint8Array(8),
    });
    session.post('responder', [back(0x7001n)]);
    expect(session.query('responder')).toBe('ERR');
    session.post('responder', [back(0x7002n)]);
    expect([session.poll('responder'), session.poll('responder')]).toMatchObject([
      { wrId: 0x7001n, status: 'RETRY_EXC_ERR' },
      { wrId: 0x7002n, status: 'WR_FLUSH_ERR' },
    ]);
  });

  it('[IBTA-10.6.3.3-1] a responder QP without the remote-write enable refuses a Write its region allows', () => {
    const session = new EngineSession(
      options('roce', { qpAccess: accessMask(['REMOTE_READ', 'REMOTE_ATOMIC']) }),
    );
    session.post('requester', [
      {
        wrId: 0x81n,
        opcode: 'RDMA_WRITE',
        remoteAddr: VA + 8n,
        rkey: RKEY,
        payload: new Uint8Array(8),
      },
    ]);
    // NAK Invalid Request, not the region's Remote Access Error (rxe_resp.c check_op_valid).
    expect(session.poll('requester')).toMatchObject({ wrId: 0x81n, status: 'REM_INV_REQ_ERR' });
    expect(wordOf(session.memory('responder').get(RKEY), 8)).toBe(ORIGINAL);
  });

  it('[IBTA-11.4.2.2-1] a solicited Send wakes an armed CQ; an unsolicited one does not', () => {
    const session = new EngineSession(options('iwarp'));
    session.postRecv('responder', { id: 0x91n, length: 8 });
    session.postRecv('responder', { id: 0x92n, length: 8 });
    session.post('requester', [send(0xa1n, 1)]);
    expect(session.solicitedPending('responder')).toBe(false);
    session.post('requester', [{ ...send(0xa2n, 2), solicited: true }]);
    expect(session.solicitedPending('responder')).toBe(true);
  });

  it('misuse is refused with a typed error before anything changes', () => {
    const session = new EngineSession(options('roce'));
    expect(() => session.poll('initiator' as never)).toThrow(UnknownNameError);
    expect(() => session.postRecv('requester', { id: 1n, length: 8 })).toThrow(SessionMisuseError);
    expect(() => session.srqLimit(1)).toThrow(SessionMisuseError);
    expect(() =>
      session.post('responder', [
        {
          wrId: 1n,
          opcode: 'RDMA_READ',
          remoteAddr: 0n,
          rkey: 1,
          length: 8,
          localSTag: 1,
          localAddr: 0n,
        },
      ]),
    ).toThrow(SessionMisuseError);
    expect(() => session.advance(-1)).toThrow(ArgumentError);
    expect(() => session.post('requester', [send(1n, 1)], { qp: 2 } as never)).toThrow(
      UnknownNameError,
    );
    expect(() =>
      session.postRecv('responder', { id: 1n, length: 8, stag: RKEY, addr: VA + 30n }),
    ).toThrow(ArgumentError);
    expect(() => new EngineSession({ ...options('roce'), transport: 'ib' as never })).toThrow(
      UnknownNameError,
    );
    // A malformed request is the requester's to refuse (a typed `invalid`), not a TypeError.
    const other = new EngineSession(options('iwarp'));
    const bad = { wrId: 9n, opcode: 'RDMA_READ', remoteAddr: 8, rkey: RKEY, length: 8 } as never;
    expect(other.post('requester', [bad]).refused).toMatchObject([{ wrId: 9n }]);
    // Nothing was half-applied: the session still has nothing posted.
    expect(session.poll('requester')).toBeUndefined();
    expect(session.poll('responder')).toBeUndefined();
  });
});
