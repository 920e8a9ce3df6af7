/**
 * Issue 34, the verbs pyverbs tests that were missing, on real devices: ibv_rereg_mr,
 * ibv_resize_cq, the extended CQ (ibv_create_cq_ex + ibv_start_poll / ibv_next_poll /
 * ibv_wc_read_*) and on-demand paging MRs, on rxe0 and siw0, on whichever kernel line
 * the guest runs (ODP: 7.3 only).
 */
import { release } from 'node:os';
import { afterAll, describe, expect, it } from 'vitest';
import {
  type Context,
  type Cq,
  connectPairByHand,
  createCqEx,
  type Mr,
  OdpUnsupportedError,
  openDevice,
  type Pd,
  type Qp,
  queryOdpCaps,
  regOdpMr,
  VerbsError,
} from '../../../src/verbs/index.js';
import { NONE, ownResources } from './resources.js';

function errorOf(fn: () => unknown): VerbsError {
  try {
    fn();
  } catch (e) {
    if (e instanceof VerbsError) return e;
    throw e;
  }
  throw new Error('expected a VerbsError');
}

/** Two RC QPs of rxe0 in loopback on `cq`. */
function rxePair(ctx: Context, pd: Pd, cq: Cq): { a: Qp; b: Qp } {
  const gid = ctx.findGid({ type: 'RoCEv2', ipv4: '192.0.2.1' });
  const a = pd.createQp({ sendCq: cq, maxSendWr: 32, maxRecvWr: 32 });
  const b = pd.createQp({ sendCq: cq, maxSendWr: 32, maxRecvWr: 32 });
  connectPairByHand(a, b, gid, { aPsn: 0x2c4e6a, bPsn: 0x1b3d5f });
  return { a, b };
}

/** One Send from a into b through `src` and `dst`; the receive's completion. */
function sendThrough(pair: { a: Qp; b: Qp }, cq: Cq, src: Mr, dst: Mr) {
  pair.b.postRecv({ sgList: [dst.sge()] });
  pair.a.postSend({ opcode: 'SEND', sgList: [src.sge()] });
  return cq.pollUntil(2).find((w) => w.opcode === 'RECV');
}

// The line the guest booted (os.release(): '6.1.0-56-amd64', '7.3.4+deb13-amd64').
const LINE = release().startsWith('6.1.')
  ? '6.1'
  : release().startsWith('6.12.')
    ? '6.12'
    : release().split('.').slice(0, 2).join('.');

describe('ibv_rereg_mr', () => {
  afterAll(() => expect(ownResources()).toEqual(NONE));

  it.each(['rxe0', 'siw0'])(
    'on %s: refused with EOPNOTSUPP naming the provider, the MR unchanged and usable',
    (device) => {
      using ctx = openDevice(device);
      using pd = ctx.allocPd();
      using other = ctx.allocPd();
      using mr = pd.regMr(Buffer.from('rereg-3a5c'), ['LOCAL_WRITE']);
      const before = { lkey: mr.lkey, rkey: mr.rkey, addr: mr.addr, length: mr.length };
      for (const changes of [
        { access: ['LOCAL_WRITE', 'REMOTE_WRITE'] as const },
        { pd: other },
        { buffer: Buffer.alloc(64) },
        // the 2026 rxe fix's case: a PD change with access rxe refuses (ZERO_BASED)
        { pd: other, access: ['LOCAL_WRITE', 'ZERO_BASED'] as const },
      ]) {
        const e = errorOf(() => mr.rereg(changes));
        expect(e.code).toBe('EOPNOTSUPP');
        expect(e.call).toBe('ibv_rereg_mr');
        expect(e.message).toMatch(
          device.startsWith('rxe')
            ? /librxe implements no rereg_mr/
            : /siw has no MR re-registration/,
        );
      }
      expect({ lkey: mr.lkey, rkey: mr.rkey, addr: mr.addr, length: mr.length }).toEqual(before);
      expect(mr.pd).toBe(pd);
      expect(mr.access).toEqual(['LOCAL_WRITE']);
      // the close cascade still goes through the old PD
      pd.close();
      expect(mr.closed).toBe(true);
    },
  );

  it('on rxe0: after a refused PD change the MR still serves a QP of its own PD', () => {
    using ctx = openDevice('rxe0');
    using pd = ctx.allocPd();
    using other = ctx.allocPd();
    using cq = ctx.createCq({ cqe: 16 });
    const pair = rxePair(ctx, pd, cq);
    using src = pd.regMr(Buffer.from('still-mine'), ['LOCAL_WRITE']);
    using dst = pd.regMr(Buffer.alloc(16), ['LOCAL_WRITE']);
    expect(
      errorOf(() => dst.rereg({ pd: other, access: ['LOCAL_WRITE', 'ZERO_BASED'] })).code,
    ).toBe('EOPNOTSUPP');
    const recv = sendThrough(pair, cq, src, dst);
    expect(recv?.status).toBe('SUCCESS');
    expect(dst.buffer.subarray(0, 10).toString()).toBe('still-mine');
  });
});

describe('ibv_resize_cq', () => {
  afterAll(() => expect(ownResources()).toEqual(NONE));

  it('on rxe0: grows, then refuses to shrink below the completions held (EINVAL), losing none', async () => {
    using ctx = openDevice('rxe0');
    using pd = ctx.allocPd();
    using cq = ctx.createCq({ cqe: 8 });
    const pair = rxePair(ctx, pd, cq);
    const granted = cq.resize(40);
    expect(granted).toBeGreaterThanOrEqual(40);
    expect(cq.cqe).toBe(granted);
    using src = pd.regMr(Buffer.from('x'), ['LOCAL_WRITE']);
    using dst = pd.regMr(Buffer.alloc(12), ['LOCAL_WRITE']);
    // 12 Sends and their 12 receives: 24 completions, three times what the CQ was made for
    for (let i = 0; i < 12; i++) pair.b.postRecv({ sgList: [dst.sge(i, 1)] });
    for (let i = 0; i < 12; i++) pair.a.postSend({ opcode: 'SEND', sgList: [src.sge()] });
    // (loopback on rxe completes them within milliseconds; none is polled before the resize)
    await new Promise((r) => setTimeout(r, 1000));
    const refused = errorOf(() => cq.resize(2));
    expect(refused.code).toBe('EINVAL');
    expect(cq.cqe).toBe(granted);
    const held = cq.pollUntil(24);
    expect(held.filter((w) => w.status === 'SUCCESS')).toHaveLength(24);
    expect(held.filter((w) => w.opcode === 'RECV')).toHaveLength(12);
    expect(cq.poll()).toEqual([]);
    expect(dst.buffer.toString()).toBe('x'.repeat(12));
  });

  it('on siw0: EOPNOTSUPP naming libsiw, the CQ unchanged', () => {
    using ctx = openDevice('siw0');
    using cq = ctx.createCq({ cqe: 8 });
    const cqe = cq.cqe;
    const e = errorOf(() => cq.resize(64));
    expect(e.code).toBe('EOPNOTSUPP');
    expect(e.call).toBe('ibv_resize_cq');
    expect(e.message).toMatch(/libsiw implements no ibv_resize_cq/);
    expect(cq.cqe).toBe(cqe);
    expect(cq.poll()).toEqual([]);
  });
});

describe('the extended CQ', () => {
  afterAll(() => expect(ownResources()).toEqual(NONE));

  it('on rxe0: QPs complete into it; pollEx reads each field through ibv_wc_read_*', () => {
    using ctx = openDevice('rxe0');
    using pd = ctx.allocPd();
    const cq = createCqEx(ctx, { cqe: 16 });
    const pair = rxePair(ctx, pd, cq);
    using src = pd.regMr(Buffer.from('cq-ex-0x5e'), ['LOCAL_WRITE']);
    using dst = pd.regMr(Buffer.alloc(32), ['LOCAL_WRITE']);
    pair.b.postRecv({ wrId: 0x1122334455667788n, sgList: [dst.sge()] });
    pair.a.postSend({
      wrId: 0x0102030405060708n,
      opcode: 'SEND_WITH_IMM',
      immData: 0x0a0b0c0d,
      sgList: [src.sge()],
    });
    const wcs: ReturnType<typeof cq.pollEx> = [];
    const deadline = Date.now() + 10_000;
    while (wcs.length < 2 && Date.now() < deadline) wcs.push(...cq.pollEx(4));
    const send = wcs.find((w) => w.opcode === 'SEND');
    const recv = wcs.find((w) => w.opcode === 'RECV');
    expect(send).toMatchObject({
      status: 'SUCCESS',
      wrId: 0x0102030405060708n,
      qpNum: pair.a.qpNum,
    });
    expect(recv).toMatchObject({
      status: 'SUCCESS',
      wrId: 0x1122334455667788n,
      qpNum: pair.b.qpNum,
      byteLen: 10,
      immData: 0x0a0b0c0d,
    });
    expect(recv?.completionTimestamp).toBeUndefined();
    expect(dst.buffer.subarray(0, 10).toString()).toBe('cq-ex-0x5e');
    expect(pair.a.inFlight.send).toBe(0); // retired through pollEx
    ctx.close(); // the cascade closes the extended CQ
    expect(cq.closed).toBe(true);
    expect(errorOf(() => cq.pollEx()).code).toBe('EBADF');
  });

  it('on rxe0: completion timestamps are refused (EOPNOTSUPP naming librxe)', () => {
    using ctx = openDevice('rxe0');
    const e = errorOf(() => createCqEx(ctx, { timestamps: ['COMPLETION_TIMESTAMP'] }));
    expect(e.code).toBe('EOPNOTSUPP');
    expect(e.message).toMatch(/RXE_SUP_WC_EX_FLAGS/);
  });

  it('on siw0: EOPNOTSUPP naming libsiw', () => {
    using ctx = openDevice('siw0');
    const e = errorOf(() => createCqEx(ctx));
    expect(e.code).toBe('EOPNOTSUPP');
    expect(e.call).toBe('ibv_create_cq_ex');
    expect(e.message).toMatch(/libsiw implements no ibv_create_cq_ex/);
  });
});

describe(`on-demand paging MRs (line ${LINE})`, () => {
  afterAll(() => expect(ownResources()).toEqual(NONE));

  it('siw0 has none: OdpUnsupportedError (EOPNOTSUPP) before the kernel', () => {
    using ctx = openDevice('siw0');
    using pd = ctx.allocPd();
    expect(queryOdpCaps(ctx).supported).toBe(false);
    const e = errorOf(() => regOdpMr(pd, Buffer.alloc(64), ['LOCAL_WRITE']));
    expect(e).toBeInstanceOf(OdpUnsupportedError);
    expect(e.code).toBe('EOPNOTSUPP');
  });

  // One test per device whatever the line (no skip): the line picks what is asserted.
  it('rxe0: typed refusals before 7.3; on 7.3 ODP MRs work, with their write-permission rule', () => {
    if (LINE === '6.1' || LINE === '6.12') refusedBefore73();
    else odpOn73();
  });

  function refusedBefore73(): void {
    using ctx = openDevice('rxe0');
    using pd = ctx.allocPd();
    expect(queryOdpCaps(ctx)).toMatchObject({ supported: false, rc: [] });
    expect(errorOf(() => regOdpMr(pd, Buffer.alloc(64), ['LOCAL_WRITE']))).toBeInstanceOf(
      OdpUnsupportedError,
    );
    // asked directly, the kernel refuses the flag (ib_check_mr_access): EINVAL on 6.1
    const direct = errorOf(() => pd.regMr(Buffer.alloc(64), ['LOCAL_WRITE', 'ON_DEMAND'])).code;
    if (LINE === '6.1') expect(direct).toBe('EINVAL');
    else expect(['EINVAL', 'EOPNOTSUPP']).toContain(direct);
  }

  // 7.3: an RDMA Write into an ODP MR completes, at the page start (a defect); a read-only
  // one serves reads and refuses writes.
  function odpOn73(): void {
    using ctx = openDevice('rxe0');
    using pd = ctx.allocPd();
    using cq = ctx.createCq({ cqe: 16 });
    const caps = queryOdpCaps(ctx);
    expect(caps).toMatchObject({ supported: true, implicit: false });
    expect(caps.rc).toEqual(expect.arrayContaining(['SEND', 'RECV', 'WRITE', 'READ']));
    const pair = rxePair(ctx, pd, cq);
    using src = pd.regMr(Buffer.from('odp-7e3a'), ['LOCAL_WRITE']);
    // page-aligned (allocMr), so that where the bytes land stays inside the MR
    using writable = pd.allocMr(4096, ['LOCAL_WRITE', 'REMOTE_WRITE', 'ON_DEMAND']);
    pair.a.postSend({ opcode: 'RDMA_WRITE', sgList: [src.sge()], remote: writable.remote(100) });
    expect(cq.pollUntil(1)[0]?.status).toBe('SUCCESS');
    // Linux 7.3.4 rxe_odp.c __rxe_odp_mr_copy copies to the kmap'd page's base
    // (dest = user_va, lines 207-210) and never adds the in-page offset it computed: the
    // bytes asked for at offset 100 land at offset 0: the defect
    // rxe-odp-copy-ignores-page-offset (src/judge/records/rxe.ts; repro/
    // rxe-odp-copy-ignores-page-offset.c; patches/rxe-fixes/7.3/0004).
    expect(writable.buffer.indexOf('odp-7e3a')).toBe(0);
    expect(writable.buffer.subarray(100, 108).every((b) => b === 0)).toBe(true);
    // the write-permission rule: no write right, no write (the pages fault in read-only)
    using readOnly = pd.allocMr(4096, ['REMOTE_READ', 'ON_DEMAND']);
    readOnly.buffer.write('read-only-odp', 0);
    using back = pd.regMr(Buffer.alloc(13), ['LOCAL_WRITE']);
    pair.a.postSend({ opcode: 'RDMA_READ', sgList: [back.sge()], remote: readOnly.remote(0) });
    expect(cq.pollUntil(1)[0]?.status).toBe('SUCCESS');
    expect(back.buffer.toString()).toBe('read-only-odp');
    pair.a.postSend({ opcode: 'RDMA_WRITE', sgList: [src.sge()], remote: readOnly.remote(0) });
    expect(cq.pollUntil(1)[0]?.status).toBe('REM_ACCESS_ERR');
    expect(readOnly.buffer.subarray(0, 13).toString()).toBe('read-only-odp');
    // and, as for every MR, a remote write right needs the local one (EINVAL)
    expect(errorOf(() => regOdpMr(pd, Buffer.alloc(64), ['REMOTE_WRITE'])).code).toBe('EINVAL');
  }
});
