/**
 * rdma_cm-connected QPs on rxe0 (issue 23): the suite brings rxe pairs up by hand; these
 * come up through rdma_cm (rdma_create_qp_ex), legacy and extended, and carry Write,
 * FetchAdd and a type 2 window bound by an ibv_wr_bind_mw.
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { PostPath } from '../../../src/verbs/index.js';
import { cmPair, u64Buffer } from './fixtures.js';
import { NONE, ownResources } from './resources.js';

describe('rxe0 QPs connected through rdma_cm', () => {
  afterAll(() => expect(ownResources()).toEqual(NONE));

  for (const path of ['legacy', 'ex'] as const satisfies readonly PostPath[]) {
    it(`${path}: RDMA_WRITE, ATOMIC_FETCH_AND_ADD and a type 2 window`, async () => {
      const p = await cmPair('192.0.2.1', undefined, { extended: path === 'ex' });
      try {
        expect(p.ctx.name).toBe('rxe0');
        expect([p.clientQp.extended, p.clientQp.native.cmOwned]).toEqual([path === 'ex', true]);
        const target = p.pd.allocMr(16, [
          'LOCAL_WRITE',
          'REMOTE_WRITE',
          'REMOTE_ATOMIC',
          'MW_BIND',
        ]);
        target.buffer.set(u64Buffer(0x0123_4567_89ab_cdefn), 8);
        const src = p.pd.allocMr(16, ['LOCAL_WRITE']);
        src.buffer.write('rdma_cm!');
        p.clientQp.postSend(
          { opcode: 'RDMA_WRITE', sgList: [src.sge(0, 8)], remote: target.remote() },
          path,
        );
        p.clientQp.postSend(
          {
            opcode: 'ATOMIC_FETCH_AND_ADD',
            sgList: [src.sge(8, 8)],
            remote: target.remote(8),
            add: 0x1111_0000_0000_0001n,
          },
          path,
        );
        const wcs = p.cq.pollUntil(2, 200_000_000);
        expect(wcs.map((w) => [w.opcode, w.status])).toEqual([
          ['RDMA_WRITE', 'SUCCESS'],
          ['FETCH_ADD', 'SUCCESS'],
        ]);
        expect(target.buffer.toString('latin1', 0, 8)).toBe('rdma_cm!');
        expect(src.buffer.readBigUInt64LE(8)).toBe(0x0123_4567_89ab_cdefn);
        expect(target.buffer.readBigUInt64LE(8)).toBe(0x1234_4567_89ab_cdf0n);

        const mw = p.pd.allocMw(2);
        p.serverQp.postSend(
          { opcode: 'BIND_MW', bind: { mw, mr: target, length: 8, access: ['REMOTE_WRITE'] } },
          path,
        );
        expect(p.cq.pollUntil(1, 200_000_000)[0]?.opcode).toBe('BIND_MW');
        p.clientQp.postSend(
          {
            opcode: 'RDMA_WRITE',
            sgList: [src.sge(0, 4)],
            remote: { addr: target.addr, rkey: mw.rkey },
          },
          path,
        );
        expect(p.cq.pollUntil(1, 200_000_000)[0]?.status).toBe('SUCCESS');
        mw.close();
      } finally {
        await p.close();
      }
    });
  }
});
