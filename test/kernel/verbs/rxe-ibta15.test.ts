/**
 * Issue 11: IBTA 1.5 ATOMIC WRITE and FLUSH on rxe0 (not RFC 7306), as each kernel line
 * does them: absent on 6.1 (the kernel fails the Atomic Write locally, refuses the flush
 * MR rights; rdma-core 44 has no ibv_wr_flush), present from 6.2 (measured on 6.12 and
 * 7.3 with rdma-core 56.1). docs/kernels.md has the table.
 */
import { release } from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import { compareToBound } from '../../../src/judge/version-range.js';
import {
  type Access,
  type Context,
  connectRcByHand,
  LibraryTooOldError,
  libibverbsVersion,
  openDevice,
  type Pd,
} from '../../../src/verbs/index.js';

const KERNEL_HAS_IT = compareToBound(release(), '6.2') >= 0;
const LIBRARY_HAS_FLUSH = Number.parseInt(libibverbsVersion(), 10) >= 45;
const RW: Access[] = ['LOCAL_WRITE', 'REMOTE_WRITE', 'REMOTE_READ', 'REMOTE_ATOMIC'];
const INITIAL = 0x0123456789abcdefn;

let ctx: Context | undefined;
afterEach(() => {
  ctx?.close();
  ctx = undefined;
});

async function post(
  pd: Pd,
  qpOptions: { atomicWrite?: boolean; flush?: boolean },
  access: Access[],
  wr: (remote: { addr: bigint; rkey: number }) => Record<string, unknown>,
): Promise<{
  status: string;
  opcode: string | undefined;
  word: bigint;
  state: string | undefined;
}> {
  const c = ctx as Context;
  const gid = c.findGid({ type: 'RoCEv2', ipv4: '192.0.2.1' });
  const cq = c.createCq({ cqe: 8 });
  const a = pd.createQp({ sendCq: cq, extended: true, ...qpOptions });
  const b = pd.createQp({ sendCq: cq });
  const qpAccess: Access[] = [...RW, ...(KERNEL_HAS_IT ? (['FLUSH_GLOBAL'] as Access[]) : [])];
  connectRcByHand(a, {
    remote: { qpNum: b.qpNum, psn: 1, gid: gid.gid },
    localPsn: 2,
    sgidIndex: gid.index,
  });
  connectRcByHand(b, {
    remote: { qpNum: a.qpNum, psn: 2, gid: gid.gid },
    localPsn: 1,
    sgidIndex: gid.index,
    access: qpAccess,
  });
  const mr = pd.allocMr(32, access);
  mr.buffer.writeBigUInt64LE(INITIAL, 8);
  const local = pd.allocMr(8, ['LOCAL_WRITE']);
  a.postSend([{ ...wr(mr.remote(8)), sgList: [{ mr: local }] } as never], 'ex');
  const deadline = Date.now() + 5000;
  let wc = cq.poll(1)[0];
  while (wc === undefined && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 5));
    wc = cq.poll(1)[0];
  }
  return {
    status: wc?.status ?? 'none',
    opcode: wc?.status === 'SUCCESS' ? wc.opcode : undefined,
    word: mr.buffer.readBigUInt64LE(8),
    state: a.query().state,
  };
}

describe(`rxe0 ATOMIC WRITE and FLUSH on ${release()} (rdma-core ${libibverbsVersion()})`, () => {
  it('ATOMIC WRITE: places the 8 bytes from 6.2 on; fails locally on 6.1', async () => {
    ctx = openDevice('rxe0');
    const pd = ctx.allocPd();
    const got = await post(pd, { atomicWrite: true }, RW, (remote) => ({
      opcode: 'ATOMIC_WRITE',
      remote,
      atomicValue: 0x1122334455667788n,
    }));
    expect(got).toEqual(
      KERNEL_HAS_IT
        ? { status: 'SUCCESS', opcode: 'ATOMIC_WRITE', word: 0x1122334455667788n, state: 'RTS' }
        : { status: 'LOC_QP_OP_ERR', opcode: undefined, word: INITIAL, state: 'ERR' },
    );
  });

  it('an MR with a flush right: registered from 6.2 on; EINVAL on 6.1', () => {
    ctx = openDevice('rxe0');
    const pd = ctx.allocPd();
    let error: unknown;
    try {
      pd.allocMr(32, [...RW, 'FLUSH_GLOBAL']).close();
    } catch (e) {
      error = e;
    }
    if (KERNEL_HAS_IT) expect(error).toBeUndefined();
    else expect(error).toMatchObject({ name: 'VerbsError', code: 'EINVAL', call: 'ibv_reg_mr' });
  });

  it('FLUSH: completes with rdma-core >= 45 on 6.2+, a typed refusal on an older library', async () => {
    ctx = openDevice('rxe0');
    const pd = ctx.allocPd();
    if (!LIBRARY_HAS_FLUSH) {
      expect(() =>
        pd.createQp({ sendCq: (ctx as Context).createCq({ cqe: 4 }), extended: true, flush: true }),
      ).toThrow(LibraryTooOldError);
      return;
    }
    expect(KERNEL_HAS_IT).toBe(true);
    const got = await post(pd, { flush: true }, [...RW, 'FLUSH_GLOBAL'], (remote) => ({
      opcode: 'FLUSH',
      remote,
      flush: { length: 8n, placement: 'GLOBAL', selectivity: 'RANGE' },
    }));
    expect(got).toEqual({ status: 'SUCCESS', opcode: 'FLUSH', word: INITIAL, state: 'RTS' });
  });
});
