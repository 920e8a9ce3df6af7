/**
 * Issue 34: misuse of the verbs added there (rereg, resize, the extended CQ, multicast,
 * ODP): bad handles, wrong arguments, wrong order and closed objects are typed errors
 * (VerbsArgumentError, VerbsError EBADF / EINVAL), never a crash, and change nothing.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { verbsExt } from '../../../src/verbs/ext-native.js';
import {
  attachMcast,
  createCqEx,
  detachMcast,
  openDevice,
  readyUd,
  regOdpMr,
  VerbsArgumentError,
  VerbsError,
} from '../../../src/verbs/index.js';
import { NONE, ownResources } from './resources.js';

function code(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (e) {
    if (e instanceof VerbsError) return e.code;
    if (e instanceof VerbsArgumentError) return 'VerbsArgumentError';
    return (e as Error).name;
  }
  return undefined;
}

describe('misuse of the issue 34 verbs on rxe0', () => {
  afterAll(() => expect(ownResources()).toEqual(NONE));

  it('rereg: wrong arguments are VerbsArgumentErrors, a closed MR or PD EBADF', () => {
    using ctx = openDevice('rxe0');
    using pd = ctx.allocPd();
    const mr = pd.regMr(Buffer.alloc(16), ['LOCAL_WRITE']);
    expect(code(() => mr.rereg({}))).toBe('VerbsArgumentError');
    expect(code(() => mr.rereg(null as never))).toBe('VerbsArgumentError');
    expect(code(() => mr.rereg({ buffer: Buffer.alloc(0) }))).toBe('VerbsArgumentError');
    expect(code(() => mr.rereg({ buffer: 'x' as never }))).toBe('VerbsArgumentError');
    expect(code(() => mr.rereg({ access: ['NOT_A_FLAG' as never] }))).toBe('UnknownNameError');
    expect(code(() => mr.rereg({ pd: {} as never }))).toBe('VerbsArgumentError');
    expect(code(() => mr.rereg({ pd: { native: {} } as never }))).toBe('VerbsArgumentError');
    const closedPd = ctx.allocPd();
    closedPd.close();
    expect(code(() => mr.rereg({ pd: closedPd }))).toBe('EBADF');
    // a PD of another context
    using ctx2 = openDevice('rxe0');
    using pd2 = ctx2.allocPd();
    expect(code(() => mr.rereg({ pd: pd2 }))).toBe('VerbsArgumentError');
    // raw native calls with unknown flags or none
    const native = mr.native as unknown as { rereg(...a: unknown[]): unknown };
    expect(code(() => native.rereg(8, undefined, undefined, 0))).toBe('VerbsArgumentError');
    expect(code(() => native.rereg(0, undefined, undefined, 0))).toBe('VerbsArgumentError');
    expect(mr.closed).toBe(false);
    mr.close();
    expect(code(() => mr.rereg({ access: ['LOCAL_WRITE'] }))).toBe('EBADF');
  });

  it('resize: a bad size is a VerbsArgumentError, a closed CQ EBADF, a non-CQ refused', () => {
    using ctx = openDevice('rxe0');
    const cq = ctx.createCq({ cqe: 8 });
    for (const bad of [0, -1, 1.5, 2 ** 31, Number.NaN, '8' as never])
      expect(code(() => cq.resize(bad))).toBe('VerbsArgumentError');
    expect(code(() => verbsExt().resizeCq({} as never, 8))).toBe('VerbsArgumentError');
    // beyond the device's max_cqe: the kernel's EINVAL
    expect(code(() => cq.resize(0x7fffffff))).toBe('EINVAL');
    cq.close();
    expect(code(() => cq.resize(16))).toBe('EBADF');
  });

  it('the extended CQ: bad options, pollEx on a plain CQ, after close', () => {
    using ctx = openDevice('rxe0');
    expect(code(() => createCqEx(ctx, { cqe: 0 }))).toBe('VerbsArgumentError');
    expect(code(() => createCqEx(ctx, { channel: 'yes' as never }))).toBe('VerbsArgumentError');
    expect(code(() => createCqEx(ctx, { timestamps: ['NOW' as never] }))).toBe(
      'VerbsArgumentError',
    );
    expect(code(() => createCqEx(ctx, { timestamps: 'x' as never }))).toBe('VerbsArgumentError');
    expect(code(() => createCqEx(ctx, null as never))).toBe('VerbsArgumentError');
    const cq = createCqEx(ctx, { cqe: 4, channel: false });
    for (const bad of [0, 257, 2.5]) expect(code(() => cq.pollEx(bad))).toBe('VerbsArgumentError');
    const ext = verbsExt();
    using plain = ctx.createCq({ cqe: 4 });
    const words = new Uint32Array(64);
    const stamps = new BigUint64Array(8);
    expect(code(() => ext.pollCqEx(plain.native, words, stamps, 1))).toBe('VerbsArgumentError');
    expect(code(() => ext.pollCqEx(cq.native, new Uint32Array(1), stamps, 1))).toBe(
      'VerbsArgumentError',
    );
    expect(code(() => ext.pollCqEx(cq.native, words, new BigUint64Array(0), 1))).toBe(
      'VerbsArgumentError',
    );
    expect(code(() => ext.pollCqEx(cq.native, stamps as never, words as never, 1))).toBe(
      'VerbsArgumentError',
    );
    expect(code(() => ext.createCqEx(ctx.native, 4, false, 1 << 9))).toBe('VerbsArgumentError');
    expect(cq.pollEx()).toEqual([]);
    ctx.close();
    expect(code(() => cq.pollEx())).toBe('EBADF');
    expect(code(() => createCqEx(ctx))).toBe('EBADF');
  });

  it('multicast: bad GIDs and LIDs, an RC QP, a unicast GID, detach before attach, a closed QP', () => {
    using ctx = openDevice('rxe0');
    using pd = ctx.allocPd();
    using cq = ctx.createCq({ cqe: 8 });
    const ud = pd.createQp({ sendCq: cq, type: 'UD' });
    readyUd(ud, { qkey: 1 });
    using rc = pd.createQp({ sendCq: cq });
    for (const gid of [Buffer.alloc(15), 'ff0e::1', '239.1.2', 42 as never])
      expect(code(() => attachMcast(ud, gid))).toBe('VerbsArgumentError');
    for (const lid of [-1, 0x10000, 0.5])
      expect(code(() => attachMcast(ud, '239.1.1.1', lid))).toBe('VerbsArgumentError');
    expect(code(() => attachMcast({ native: {} } as never, '239.1.1.1'))).toBe(
      'VerbsArgumentError',
    );
    expect(code(() => attachMcast(rc, '239.1.1.1'))).toBe('EINVAL');
    expect(code(() => attachMcast(ud, '192.0.2.1'))).toBe('EINVAL');
    const detachFirst = code(() => detachMcast(ud, '239.1.1.2'));
    expect(detachFirst).toMatch(/^E/); // a VerbsError, whichever errno the line answers
    attachMcast(ud, '239.1.1.1');
    attachMcast(ud, '239.1.1.1'); // a second attach of the same group is no error
    detachMcast(ud, '239.1.1.1');
    // closing a QP still attached detaches it first (uverbs refuses EBUSY otherwise)
    attachMcast(ud, '239.1.1.3');
    ud.close();
    expect(ud.closed).toBe(true);
    expect(code(() => attachMcast(ud, '239.1.1.1'))).toBe('EBADF');
  });

  it('ODP: a wrong buffer or access is refused before the device is asked', () => {
    using ctx = openDevice('rxe0');
    using pd = ctx.allocPd();
    expect(code(() => regOdpMr(pd, 'x' as never, ['LOCAL_WRITE']))).toBe('VerbsArgumentError');
    expect(code(() => regOdpMr(pd, Buffer.alloc(8), ['BAD' as never]))).toBe('UnknownNameError');
    expect(code(() => regOdpMr(pd, Buffer.alloc(8), 'LOCAL_WRITE' as never))).toBe(
      'VerbsArgumentError',
    );
    pd.close();
    expect(code(() => regOdpMr(pd, Buffer.alloc(8), ['LOCAL_WRITE']))).toBe('EBADF');
  });
});
