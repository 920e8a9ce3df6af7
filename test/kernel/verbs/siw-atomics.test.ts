import { describe, expect, it } from 'vitest';
import { openDevice, VerbsError } from '../../../src/verbs/index.js';
import { cmPair, u64Buffer } from './fixtures.js';

// siw has no RFC 7306 support: libsiw maps both atomic opcodes to an unsupported SQE
// opcode and its post_send returns -EINVAL (negative); the addon normalises it.
describe('atomics on siw0', () => {
  it('refuses an atomic on a QP in RTS (via rdma_cm) with VerbsError EINVAL, QP still usable', async () => {
    const pair = await cmPair('198.51.100.1');
    try {
      expect(pair.ctx.name).toBe('siw0');
      expect(pair.receivedByServer.toString()).toBe('client-hello');
      const target = pair.pd.regMr(u64Buffer(0x0123456789abcdefn), [
        'LOCAL_WRITE',
        'REMOTE_ATOMIC',
        'REMOTE_WRITE',
      ]);
      const result = pair.pd.regMr(Buffer.alloc(8), ['LOCAL_WRITE']);
      let caught: unknown;
      try {
        pair.clientQp.postSend({
          opcode: 'ATOMIC_FETCH_AND_ADD',
          sgList: [result.sge(0, 8)],
          remote: target.remote(0),
          add: 0x1111111111111111n,
        });
      } catch (e) {
        caught = e;
      }
      expect(caught).toBeInstanceOf(VerbsError);
      expect((caught as VerbsError).code).toBe('EINVAL');
      expect((caught as VerbsError).errno).toBe(22);
      expect((caught as VerbsError).call).toBe('ibv_post_send');
      expect((caught as VerbsError).device).toBe('siw0');
      expect(() =>
        pair.clientQp.postSend({
          opcode: 'ATOMIC_CMP_AND_SWP',
          sgList: [result.sge(0, 8)],
          remote: target.remote(0),
          compare: 0x0123456789abcdefn,
          swap: 0x0f1e2d3c4b5a6978n,
        }),
      ).toThrow(expect.objectContaining({ code: 'EINVAL', call: 'ibv_post_send' }));
      expect(pair.clientQp.inFlight.send).toBe(0);
      // Nothing happened to the target, and the QP still works: an RDMA Write completes.
      expect(target.buffer.readBigUInt64LE(0)).toBe(0x0123456789abcdefn);
      result.buffer.writeBigUInt64LE(0x8877665544332211n);
      pair.clientQp.postSend({
        opcode: 'RDMA_WRITE',
        sgList: [result.sge(0, 8)],
        remote: target.remote(0),
      });
      const wc = await pair.cq.next({ timeoutMs: 10_000 });
      expect(wc.status).toBe('SUCCESS');
      expect(wc.opcode).toBe('RDMA_WRITE');
      expect(target.buffer.readBigUInt64LE(0)).toBe(0x8877665544332211n);
      result.close();
      target.close();
    } finally {
      await pair.close();
    }
  });

  it('refuses an atomic before RTS too (QP in RESET, no rdma_cm)', () => {
    using ctx = openDevice('siw0');
    const pd = ctx.allocPd();
    const cq = ctx.createCq({ cqe: 16 });
    const qp = pd.createQp({ sendCq: cq });
    const result = pd.regMr(Buffer.alloc(8), ['LOCAL_WRITE']);
    let caught: unknown;
    try {
      qp.postSend({
        opcode: 'ATOMIC_FETCH_AND_ADD',
        sgList: [result.sge(0, 8)],
        remote: { addr: 0x10000n, rkey: 1 },
        add: 1n,
      });
    } catch (e) {
      caught = e;
    }
    // Measured: libsiw checks the opcode before the QP state, so RESET refuses the same way.
    expect(caught).toBeInstanceOf(VerbsError);
    expect((caught as VerbsError).code).toBe('EINVAL');
    expect((caught as VerbsError).call).toBe('ibv_post_send');
    result.close();
    qp.close();
    cq.close();
    pd.close();
  });

  it('has no extended QP: ibv_create_qp_ex is refused with a typed error', () => {
    using ctx = openDevice('siw0');
    const pd = ctx.allocPd();
    const cq = ctx.createCq({ cqe: 16 });
    let caught: unknown;
    try {
      pd.createQp({ sendCq: cq, extended: true }).close();
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(VerbsError);
    expect((caught as VerbsError).code).toBe('EOPNOTSUPP');
    expect((caught as VerbsError).call).toBe('ibv_create_qp_ex');
    cq.close();
    pd.close();
  });

  it('has RC only: a UD QP is refused with a typed error', () => {
    using ctx = openDevice('siw0');
    const pd = ctx.allocPd();
    const cq = ctx.createCq({ cqe: 16 });
    let caught: unknown;
    try {
      pd.createQp({ sendCq: cq, type: 'UD' }).close();
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(VerbsError);
    expect((caught as VerbsError).call).toBe('ibv_create_qp');
    expect((caught as VerbsError).code).toBe('EOPNOTSUPP');
    cq.close();
    pd.close();
  });
});
