/**
 * Issue 34: UD multicast on rxe0 (siw has no UD QP). A UD Send to a multicast GID with
 * the multicast QPN reaches the QPs attached to the group (ibv_attach_mcast) and not one
 * that detached (ibv_detach_mcast).
 *
 * rxe sends to a multicast group through the IP stack (rxe_net.c rxe_send: the
 * destination GID is not its own, so no internal loopback) and its attach only adds the
 * group's MAC to the netdev's filter (rxe_mcast.c): the IP layer delivers the looped-back
 * copy of the datagram to the local UDP port 4791 only when this host has joined the IP
 * group on that interface, which a dgram socket's addMembership does here.
 */
import { createSocket } from 'node:dgram';
import { afterAll, describe, expect, it } from 'vitest';
import {
  attachMcast,
  detachMcast,
  MULTICAST_QPN,
  mcastGidBytes,
  openDevice,
  readyUd,
  VerbsError,
} from '../../../src/verbs/index.js';
import { NONE, ownResources } from './resources.js';

const GROUP = '239.1.52.34';
const QKEY = 0x4d2c1b0a;

describe('UD multicast on rxe0', () => {
  afterAll(() => expect(ownResources()).toEqual(NONE));

  it('a Send to the group reaches the attached QP, not the detached one', async () => {
    const membership = createSocket({ type: 'udp4', reuseAddr: true });
    await new Promise<void>((r) => membership.bind(0, '0.0.0.0', () => r()));
    try {
      membership.addMembership(GROUP, '192.0.2.1');
      using ctx = openDevice('rxe0');
      const gid = ctx.findGid({ type: 'RoCEv2', ipv4: '192.0.2.1' });
      using pd = ctx.allocPd();
      using sendCq = ctx.createCq({ cqe: 8 });
      using attachedCq = ctx.createCq({ cqe: 8 });
      using detachedCq = ctx.createCq({ cqe: 8 });
      using sender = pd.createQp({ sendCq, type: 'UD' });
      using attached = pd.createQp({ sendCq: attachedCq, type: 'UD' });
      using detached = pd.createQp({ sendCq: detachedCq, type: 'UD' });
      for (const qp of [sender, attached, detached]) readyUd(qp, { qkey: QKEY });
      attachMcast(attached, GROUP);
      attachMcast(detached, mcastGidBytes(GROUP));
      detachMcast(detached, GROUP);
      using ah = pd.createAh({
        port: 1,
        grh: { dgid: mcastGidBytes(GROUP), sgidIndex: gid.index, hopLimit: 1 },
      });
      using src = pd.regMr(Buffer.from('to-the-group-34'), ['LOCAL_WRITE']);
      using dstA = pd.regMr(Buffer.alloc(40 + 32), ['LOCAL_WRITE']);
      using dstD = pd.regMr(Buffer.alloc(40 + 32), ['LOCAL_WRITE']);
      attached.postRecv({ sgList: [dstA.sge()] });
      detached.postRecv({ sgList: [dstD.sge()] });
      sender.postSend({
        opcode: 'SEND',
        sgList: [src.sge()],
        ud: { ah, remoteQpn: MULTICAST_QPN, remoteQkey: QKEY },
      });
      expect(sendCq.pollUntil(1)[0]?.status).toBe('SUCCESS');
      let recv: ReturnType<typeof attachedCq.poll> = [];
      try {
        recv = attachedCq.pollUntil(1, 20_000_000);
      } catch (e) {
        if (!(e instanceof VerbsError) || e.code !== 'ETIMEDOUT') throw e;
      }
      expect(recv[0]?.status).toBe('SUCCESS');
      expect(recv[0]?.srcQp).toBe(sender.qpNum);
      expect(dstA.buffer.subarray(40, 55).toString()).toBe('to-the-group-34');
      await new Promise((r) => setTimeout(r, 200));
      expect(detachedCq.poll()).toEqual([]);
      expect(dstD.buffer.every((b) => b === 0)).toBe(true);
    } finally {
      membership.close();
    }
  });
});
