/**
 * Memory windows, type 1 and type 2, bound, used and invalidated (rxe).
 */
import type { Access } from '../../verbs/mr.js';
import type { Operation, Step } from '../scenario.js';
import {
  ATOMIC_MR,
  EVERY_TARGET,
  failing,
  PAYLOAD,
  type Row,
  SWAP,
  type Target,
} from './family.js';

/**
 * Memory windows (IBTA 1.5 §10.6.7) on rxe, through both post APIs (rxe has windows since
 * Linux 5.13). The responder MR is registered with MW_BIND; each program binds one window
 * over the whole MR (REMOTE_READ | REMOTE_WRITE) and addresses the target word through its
 * rkey. Not on siw: siw has no memory windows at all (drivers/infiniband/sw/siw sets no
 * alloc_mw in its ib_device_ops, libsiw none; ibv_alloc_mw fails with EOPNOTSUPP before
 * any program runs, and test/kernel/verbs/mw.test.ts asserts that refusal): every siw row
 * would compare the same refused bring-up, in guest time, and say nothing about Send with
 * Invalidate on iWARP (RFC 5040 §4.1, §5.3), which needs a window or a fast-registered MR.
 */
const WINDOW_MR: readonly Access[] = [...ATOMIC_MR, 'MW_BIND'];
export const WINDOW_TARGETS: readonly Target[] = EVERY_TARGET.filter((t) => t.device === 'rxe0');
const WINDOW_WRITE: Operation = { kind: 'RDMA_WRITE', payload: PAYLOAD, rkey: 'window' };
/** A Write after the window was invalidated: another payload, so a placement would show. */
const LATE_WINDOW_WRITE: Operation = { ...WINDOW_WRITE, payload: SWAP };

/** Write then Read of the target word through the window bound on `side`. */
function windowWriteRead(type: 1 | 2, side: 'requester' | 'responder'): Step[] {
  return [
    { do: 'bind-mw', type, side },
    { do: 'post-send', wrs: [WINDOW_WRITE, { kind: 'RDMA_READ', rkey: 'window' }] },
    { do: 'wait', side: 'requester', count: 2 },
    { do: 'query', side: 'requester' },
    { do: 'query', side: 'responder' },
  ];
}

export const MEMORY_WINDOWS: readonly Row[] = [
  {
    suffix: 'mw1-write-read',
    title: 'RDMA Write and Read through a type 1 window (ibv_bind_mw)',
    byHand: true,
    remoteAccess: WINDOW_MR,
    program: windowWriteRead(1, 'responder'),
  },
  {
    suffix: 'mw2-write-read',
    title: 'RDMA Write and Read through a type 2 window (IBV_WR_BIND_MW)',
    byHand: true,
    remoteAccess: WINDOW_MR,
    program: windowWriteRead(2, 'responder'),
  },
  {
    // IBTA 1.5 §10.6.7.1: a type 1 window belongs to the PD, usable through any of its QPs.
    suffix: 'mw1-other-qp',
    title: 'A type 1 window bound on the requester QP, used through the responder QP',
    byHand: true,
    remoteAccess: WINDOW_MR,
    program: windowWriteRead(1, 'requester'),
  },
  {
    // IBTA 1.5 §10.6.7: a window grants access to its own range only, so a Write inside
    // the MR but outside the window (MR offset 8; the window is bytes 16-31) is a remote
    // access error (R_Key violation), as for an address past an MR.
    suffix: 'mw2-outside-window',
    title: 'Write through a type 2 window over MR bytes 16-31, at MR offset 8',
    byHand: true,
    remoteAccess: WINDOW_MR,
    program: [
      { do: 'bind-mw', type: 2, side: 'responder', range: { at: 16, length: 16 } },
      { do: 'post-send', wrs: [WINDOW_WRITE] },
      { do: 'wait', side: 'requester', count: 1 },
      { do: 'query', side: 'requester' },
      { do: 'query', side: 'responder' },
    ],
  },
  {
    // IBTA 1.5 §10.6.7.2.1: a type 2 window is associated with the QP that bound it; an
    // access arriving on another QP is a remote access error (rxe_mw.c rxe_lookup_mw:
    // mw->qp != qp).
    suffix: 'mw2-other-qp',
    title: 'A type 2 window bound on the requester QP, used through the responder QP',
    byHand: true,
    remoteAccess: WINDOW_MR,
    program: [{ do: 'bind-mw', type: 2, side: 'requester' }, ...failing(WINDOW_WRITE)],
  },
  {
    // IBTA 1.5 §10.6.7.2.4: LOCAL_INV invalidates the window; a later access with its rkey
    // is an R_Key violation: NAK Remote Access Error (IBTA 1.5 §9.7.5.2.8), which moves the
    // responder QP to ERR as well (rxe_resp.c do_class_ac_error).
    suffix: 'mw2-invalidated',
    title: 'Write through a type 2 window, LOCAL_INV on the responder, Write again',
    byHand: true,
    remoteAccess: WINDOW_MR,
    program: [
      { do: 'bind-mw', type: 2, side: 'responder' },
      { do: 'post-send', wrs: [WINDOW_WRITE] },
      { do: 'wait', side: 'requester', count: 1 },
      { do: 'local-invalidate', side: 'responder' },
      ...failing(LATE_WINDOW_WRITE),
    ],
  },
  {
    // IBTA 1.5 §9.4.1 / §10.6.7.2.4 (RFC 5040 §5.3 on iWARP): the Send invalidates the
    // window as its receive completes (WITH_INV, invalidated_rkey); a later Write with that
    // rkey is a remote access error.
    suffix: 'mw2-send-with-inv',
    title: 'Send with Invalidate of a type 2 window, then a Write through it',
    byHand: true,
    remoteAccess: WINDOW_MR,
    program: [
      { do: 'bind-mw', type: 2, side: 'responder' },
      { do: 'post-recv', for: 'send' },
      { do: 'post-send', wrs: [{ kind: 'SEND_WITH_INV', payload: PAYLOAD }] },
      { do: 'wait', side: 'requester', count: 1 },
      { do: 'wait', side: 'responder', count: 1 },
      { do: 'post-send', wrs: [LATE_WINDOW_WRITE] },
      { do: 'wait', side: 'requester', count: 1 },
      { do: 'query', side: 'requester' },
      { do: 'query', side: 'responder' },
    ],
  },
];
