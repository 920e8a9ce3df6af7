import { afterAll, describe, expect, it } from 'vitest';
import { openDevice, readyUd, VerbsArgumentError, VerbsError } from '../../../src/verbs/index.js';
import { NONE, ownResources } from './resources.js';

// UD on rxe0 (siw has RC only): datagrams through an address handle, with the 40-byte
// GRH slot at the start of each receive buffer (RoCE: IBTA A16 / verbs convention).
describe('UD datagrams on rxe0', () => {
  afterAll(() => expect(ownResources()).toEqual(NONE));

  it('SEND_WITH_IMM through an address handle: src_qp, GRH flag, payload after 40 bytes', async () => {
    using ctx = openDevice('rxe0');
    const gid = ctx.findGid({ type: 'RoCEv2', ipv4: '192.0.2.1' });
    using pd = ctx.allocPd();
    using cq = ctx.createCq({ cqe: 32 });
    using a = pd.createQp({ sendCq: cq, type: 'UD' });
    using b = pd.createQp({ sendCq: cq, type: 'UD' });
    const QKEY = 0x11223344;
    readyUd(a, { qkey: QKEY });
    readyUd(b, { qkey: QKEY });
    using ah = pd.createAh({ port: 1, grh: { dgid: gid.gid, sgidIndex: gid.index, hopLimit: 64 } });
    using src = pd.regMr(Buffer.from('datagram-7306'), ['LOCAL_WRITE']);
    using dst = pd.regMr(Buffer.alloc(40 + 64), ['LOCAL_WRITE']);
    b.postRecv({ sgList: [dst.sge()] });
    a.postSend({
      opcode: 'SEND_WITH_IMM',
      sgList: [src.sge()],
      immData: 0x0a0b0c0d,
      ud: { ah, remoteQpn: b.qpNum, remoteQkey: QKEY },
    });
    const recv = cq.pollUntil(2).find((w) => w.opcode === 'RECV');
    expect(recv?.status).toBe('SUCCESS');
    expect(recv?.srcQp).toBe(a.qpNum);
    expect(recv?.flags).toEqual(['GRH', 'WITH_IMM']);
    expect(recv?.immData).toBe(0x0a0b0c0d);
    expect(recv?.byteLen).toBe(40 + 13);
    expect(dst.buffer.subarray(40, 53).toString()).toBe('datagram-7306');
    expect(a.inFlight.send).toBe(0);
  });

  it('refuses a closed address handle and an AH that is not one, before posting', () => {
    using ctx = openDevice('rxe0');
    const gid = ctx.findGid({ type: 'RoCEv2' });
    using pd = ctx.allocPd();
    using cq = ctx.createCq({ cqe: 8 });
    using qp = pd.createQp({ sendCq: cq, type: 'UD' });
    readyUd(qp, { qkey: 1 });
    const ah = pd.createAh({ grh: { dgid: gid.gid, sgidIndex: gid.index } });
    ah.close();
    expect(() => qp.postSend({ opcode: 'SEND', ud: { ah, remoteQpn: 1, remoteQkey: 1 } })).toThrow(
      VerbsError,
    );
    expect(() =>
      qp.postSend({ opcode: 'SEND', ud: { ah: {} as never, remoteQpn: 1, remoteQkey: 1 } }),
    ).toThrow(VerbsArgumentError);
    expect(qp.inFlight.send).toBe(0);
  });
});
