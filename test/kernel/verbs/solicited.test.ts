/**
 * The solicited-only CQ arm on real devices (issue 23): `cq.next({ solicitedOnly: true })`
 * is `ibv_req_notify_cq(cq, 1)`; only a receive of a request with the SE bit (IBTA 1.5
 * section 11.4.2.2; RFC 5040's Send with Solicited Event on iWARP) wakes it.
 */
import { afterAll, describe, expect, it } from 'vitest';
import {
  type Cq,
  connectPairByHand,
  openDevice,
  type Pd,
  type Qp,
  VerbsError,
} from '../../../src/verbs/index.js';
import { cmPair } from './fixtures.js';
import { NONE, ownResources } from './resources.js';

/**
 * What the responder sees of one Send, with and without SE, on its own CQ; `wakesOnSe`:
 * whether the device raises the solicited event at all.
 */
async function solicitedEvents(
  pd: Pd,
  requester: Qp,
  responder: Qp,
  responderCq: Cq,
  requesterCq: Cq,
  wakesOnSe: boolean,
): Promise<void> {
  const inbox = pd.allocMr(32, ['LOCAL_WRITE']);
  const src = pd.allocMr(8, ['LOCAL_WRITE']);
  responder.postRecv([{ sgList: [inbox.sge(0, 16)] }, { sgList: [inbox.sge(16, 16)] }]);

  // Without SE: the completion arrives, the solicited-only arm stays asleep. Absence is
  // shown by order, not by a short timeout (which passes whenever a loaded guest is slow,
  // issue 38): the responder's receive completion, and with it any event the device would
  // raise for it (rxe_cq_post calls the completion handler in the same step), exists
  // before the requester's ACK completes; after that and a turn of the event loop (which
  // reads the channel's descriptor) the arm must still be asleep. On rxe the Send with SE
  // that follows then wakes this same arm: the event came after it was posted.
  let sePosted = false;
  let wokeAfterSe: boolean | undefined;
  const arm = responderCq.next({ solicitedOnly: true, timeoutMs: wakesOnSe ? 60_000 : 3000 });
  const watched = arm.then(
    (wc) => {
      wokeAfterSe = sePosted;
      return wc;
    },
    (error: unknown) => {
      wokeAfterSe = sePosted;
      throw error;
    },
  );
  requester.postSend({ opcode: 'SEND', sgList: [src.sge()] });
  expect(requesterCq.pollUntil(1, 200_000_000)[0]?.status).toBe('SUCCESS');
  for (let i = 0; i < 3; i++) await new Promise((resolve) => setImmediate(resolve));
  expect(wokeAfterSe, 'the solicited-only arm woke for a Send without SE').toBeUndefined();

  // With SE: the arm fires and the wait resolves with the first receive on the CQ.
  sePosted = true;
  requester.postSend({ opcode: 'SEND', sgList: [src.sge()], solicited: true });
  expect(requesterCq.pollUntil(1, 200_000_000)[0]?.status).toBe('SUCCESS');
  if (wakesOnSe) {
    const wc = await watched;
    expect(wokeAfterSe).toBe(true);
    expect([wc.opcode, wc.status, wc.qpNum]).toEqual(['RECV', 'SUCCESS', responder.qpNum]);
    expect(responderCq.poll().map((w) => [w.opcode, w.status])).toEqual([['RECV', 'SUCCESS']]);
  } else {
    // siw: never woken (its source says why, below); the arm ends at its own deadline.
    await expect(watched).rejects.toBeInstanceOf(VerbsError);
    await expect(watched).rejects.toMatchObject({ code: 'ETIMEDOUT' });
    expect(responderCq.poll().map((w) => [w.opcode, w.status])).toEqual([
      ['RECV', 'SUCCESS'],
      ['RECV', 'SUCCESS'],
    ]);
  }
  inbox.close();
  src.close();
}

describe('the solicited-only arm (ibv_req_notify_cq(cq, 1))', () => {
  afterAll(() => expect(ownResources()).toEqual(NONE));

  it('rxe0: a Send without SE does not wake it, a Send with SE does', async () => {
    const ctx = openDevice('rxe0');
    try {
      const gid = ctx.findGid({ type: 'RoCEv2', ipv4: '192.0.2.1' });
      const pd = ctx.allocPd();
      const requesterCq = ctx.createCq({ cqe: 16 });
      const responderCq = ctx.createCq({ cqe: 16 });
      const a = pd.createQp({ sendCq: requesterCq });
      const b = pd.createQp({ sendCq: responderCq });
      connectPairByHand(a, b, gid, { aPsn: 0x31a2b3, bPsn: 0x03b2a1 });
      await solicitedEvents(pd, a, b, responderCq, requesterCq, true);
    } finally {
      ctx.close();
    }
  });

  // siw never raises it for a receive: siw_qp.c siw_rqe_complete calls
  // siw_cq_notify_now(cq, SIW_WQE_SIGNALLED), never with SIW_WQE_SOLICITED, so an arm for
  // solicited completions only (SIW_NOTIFY_SOLICITED) sleeps through a Send with SE
  // (measured on 6.1).
  it('siw0 (rdma_cm): a Send with SE does not wake it either (siw_rqe_complete)', async () => {
    const p = await cmPair('198.51.100.1');
    try {
      // cmPair shares one CQ: give the responder a CQ of its own through a second pair.
      const responderCq = p.ctx.createCq({ cqe: 16 });
      const requesterCq = p.ctx.createCq({ cqe: 16 });
      const channel = p.channel;
      const listener = channel.createId();
      listener.bindAddr('198.51.100.1', 0);
      listener.listen(1);
      const client = channel.createId();
      await client.resolveAddr('198.51.100.1', listener.localPort, { src: '198.51.100.1' });
      await client.resolveRoute();
      const a = client.createQp(p.pd, { sendCq: requesterCq });
      const connecting = client.connect({ initiatorDepth: 1, responderResources: 1 });
      const request = await listener.nextConnectRequest({ timeoutMs: 20_000 });
      const b = request.id.createQp(p.pd, { sendCq: responderCq });
      await Promise.all([
        connecting,
        request.id.accept({ initiatorDepth: 1, responderResources: 1 }),
      ]);
      try {
        await solicitedEvents(p.pd, a, b, responderCq, requesterCq, false);
      } finally {
        await Promise.allSettled([client.disconnect(), request.id.disconnect()]);
        for (const o of [a, b, client, request.id, listener, responderCq, requesterCq]) o.close();
      }
    } finally {
      await p.close();
    }
  });
});
