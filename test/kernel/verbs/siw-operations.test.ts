import { afterAll, describe, expect, it } from 'vitest';
import { VerbsError } from '../../../src/verbs/index.js';
import { cmPair } from './fixtures.js';
import { NONE, ownResources } from './resources.js';

// siw (iWARP, RFC 5040 only): SEND / WRITE / READ work over an rdma_cm connection;
// immediate data (RFC 7306 §6) is refused by libsiw before anything reaches the wire.
describe('RC operations on siw0 over rdma_cm', () => {
  afterAll(() => expect(ownResources()).toEqual(NONE));

  it('carries private data both ways, SEND, RDMA_WRITE and RDMA_READ', async () => {
    const p = await cmPair('198.51.100.1');
    try {
      expect(p.ctx.name).toBe('siw0');
      expect(p.receivedByServer.subarray(0, 12).toString()).toBe('client-hello');
      expect(p.receivedByClient.subarray(0, 12).toString()).toBe('server-hello');
      const src = p.pd.regMr(Buffer.from('iwarp-send-0123'), ['LOCAL_WRITE']);
      const dst = p.pd.regMr(Buffer.alloc(32), ['LOCAL_WRITE', 'REMOTE_WRITE', 'REMOTE_READ']);
      p.serverQp.postRecv({ sgList: [dst.sge(0, 16)] });
      p.clientQp.postSend({ opcode: 'SEND', sgList: [src.sge()] });
      const wcs = p.cq.pollUntil(2);
      const recv = wcs.find((w) => w.opcode === 'RECV');
      expect(recv?.byteLen).toBe(15);
      expect(recv?.flags).toEqual([]);
      expect(dst.buffer.subarray(0, 15).toString()).toBe('iwarp-send-0123');

      p.clientQp.postSend({
        opcode: 'RDMA_WRITE',
        sgList: [src.sge(6, 4)],
        remote: dst.remote(20),
      });
      expect((await p.cq.next({ timeoutMs: 10_000 })).opcode).toBe('RDMA_WRITE');
      expect(dst.buffer.subarray(20, 24).toString()).toBe('send');

      const back = p.pd.regMr(Buffer.alloc(4), ['LOCAL_WRITE']);
      p.clientQp.postSend({ opcode: 'RDMA_READ', sgList: [back.sge()], remote: dst.remote(20) });
      const r = await p.cq.next({ timeoutMs: 10_000 });
      expect(r.opcode).toBe('RDMA_READ');
      expect(back.buffer.toString()).toBe('send');
      for (const mr of [src, dst, back]) mr.close();
    } finally {
      await p.close();
    }
  });

  it('refuses SEND_WITH_IMM and RDMA_WRITE_WITH_IMM with VerbsError EINVAL', async () => {
    const p = await cmPair('198.51.100.1');
    try {
      const src = p.pd.regMr(Buffer.from('imm'), ['LOCAL_WRITE']);
      const dst = p.pd.regMr(Buffer.alloc(8), ['LOCAL_WRITE', 'REMOTE_WRITE']);
      p.serverQp.postRecv({ sgList: [dst.sge()] });
      for (const opcode of ['SEND_WITH_IMM', 'RDMA_WRITE_WITH_IMM'] as const) {
        let caught: unknown;
        try {
          p.clientQp.postSend({
            opcode,
            sgList: [src.sge()],
            remote: dst.remote(),
            immData: 0x12345678,
          });
        } catch (e) {
          caught = e;
        }
        expect(caught).toBeInstanceOf(VerbsError);
        expect((caught as VerbsError).code).toBe('EINVAL');
        expect((caught as VerbsError).device).toBe('siw0');
      }
      expect(p.cq.poll(4)).toEqual([]);
      expect(dst.buffer).toEqual(Buffer.alloc(8));
      src.close();
      dst.close();
    } finally {
      await p.close();
    }
  });
});
