/**
 * The QP a guided sequence goes to (guided-input.ts's `GuidedSetup`), on rxe_t: RC, UC or
 * UD, brought through RESET -> INIT -> RTR -> RTS only as far as the set-up's state (then
 * SQD or ERR from RTS), with receives posted on it or on an SRQ, its IRD, and for UD a
 * multicast group. These are what rxe_recv.c's check_type_state(), check_addr() and
 * check_keys() and rxe_resp.c's state, resource and RNR branches look at beside the packet.
 * The attributes per transition are those ibv_modify_qp requires of each type (IBTA Vol. 1
 * §11.2.5.2, Table 93; rdma-core's ibv_modify_qp(3)): UC has no IRD, RNR timer or timeouts,
 * UD has a Q_Key and no peer.
 */
import type { DatagramOptions } from '../probe/roce-datagram.js';
import { TESTER_ADDRESS } from '../probe/roce-datagram.js';
import {
  DEVICE_PSN,
  ROCE_TESTER_MTU,
  type RoceRunEnvironment,
} from '../probe/roce-responder-run.js';
import { mappedGid, ROCE_TESTBED, TESTER_QPN } from '../probe/roce-testbed.js';
import type { Mr } from '../verbs/mr.js';
import { attachMcast, MULTICAST_QPN } from '../verbs/multicast.js';
import type { Qp } from '../verbs/qp.js';
import type { Srq } from '../verbs/srq.js';
import type { GuidedSetup } from './guided-input.js';

/** The Q_Key of the guided fuzz's UD QPs and of its UD packets' DETH. */
export const GUIDED_QKEY = 0x1d2c3b4a;
/** The IPv4 multicast group a UD set-up joins (RFC 5771 administratively scoped). */
export const GUIDED_MULTICAST_ADDRESS = ROCE_TESTBED.multicastGroup;
/** The address "another connection" sends from: on the tester's subnet, not the tester. */
export const OTHER_SOURCE_ADDRESS = '203.0.113.77';
/** The GSI QP's Q_Key (IBTA §13.5.1; rxe_recv.c check_keys()). */
export const GSI_QKEY = 0x80010000;
/** The memory each sequence targets (bytes). */
export const GUIDED_MR_LENGTH = 4 * 4096;

/** A set-up made: the QP, its memory, where packets go and how they are sent. */
export interface GuidedQp {
  readonly qp: Qp;
  readonly mr: Mr;
  /** The QPN the steps name (the multicast QPN for a multicast set-up, 1 for the GSI QP). */
  readonly qpn: number;
  /** The R_Key the steps name (the window's, for a window set-up). */
  readonly rKey: number;
  /** The Q_Key a UD step's DETH carries. */
  readonly qkey: number;
  /** Source and destination addresses of the steps' IPv4 packets. */
  readonly datagram: DatagramOptions;
  /** Moves the QP to the set-up's `after` state, if any (once the sequence is sent). */
  after(): void;
  close(): void;
}

const ORDER = ['RESET', 'INIT', 'RTR', 'RTS'] as const;

/** Brings `qp` of `type` from RESET to `state` facing the tester. */
function bringTo(env: RoceRunEnvironment, qp: Qp, setup: GuidedSetup, startPsn: number): void {
  const type = setup.type ?? 'RC';
  const state = setup.state ?? 'RTS';
  const until = state === 'SQD' || state === 'ERR' ? 3 : ORDER.indexOf(state);
  const av = {
    port: 1,
    grh: { dgid: mappedGid(TESTER_ADDRESS), sgidIndex: env.device.sgidIndex, hopLimit: 64 },
  };
  for (let k = 1; k <= until; k++) {
    const to = ORDER[k] as (typeof ORDER)[number];
    if (to === 'INIT')
      qp.modify(
        type === 'UD'
          ? { state: to, pkeyIndex: 0, port: 1, qkey: GUIDED_QKEY }
          : {
              state: to,
              pkeyIndex: 0,
              port: 1,
              access: setup.noRemoteAccess
                ? ['LOCAL_WRITE']
                : type === 'UC'
                  ? ['LOCAL_WRITE', 'REMOTE_WRITE']
                  : [
                      'LOCAL_WRITE',
                      'REMOTE_WRITE',
                      'REMOTE_READ',
                      'REMOTE_ATOMIC',
                      ...(setup.flush ? (['FLUSH_GLOBAL', 'FLUSH_PERSISTENT'] as const) : []),
                    ],
            },
      );
    else if (to === 'RTR')
      qp.modify(
        type === 'UD'
          ? { state: to }
          : {
              state: to,
              pathMtu: ROCE_TESTER_MTU,
              destQpNum: TESTER_QPN,
              rqPsn: startPsn,
              av,
              ...(type === 'RC'
                ? { maxDestRdAtomic: setup.maxDestRdAtomic ?? 16, minRnrTimer: 12 }
                : {}),
            },
      );
    else
      qp.modify(
        type === 'RC'
          ? { state: to, sqPsn: DEVICE_PSN, maxRdAtomic: 16, timeout: 10, retryCnt: 1, rnrRetry: 0 }
          : { state: to, sqPsn: DEVICE_PSN },
      );
  }
  if (state === 'SQD' || state === 'ERR') qp.modify({ state });
}

/** Creates and brings up the QP of `setup` for a sequence starting at `startPsn`. */
export function openGuidedQp(
  env: RoceRunEnvironment,
  setup: GuidedSetup,
  startPsn: number,
): GuidedQp {
  const type = setup.type ?? 'RC';
  const opened: { close(): void }[] = [];
  const keep = <T extends { close(): void }>(r: T): T => {
    opened.unshift(r);
    return r;
  };
  const closeAll = () => {
    for (const r of opened.splice(0)) r.close();
  };
  try {
    const window = setup.window === true && type === 'RC' && (setup.state ?? 'RTS') === 'RTS';
    const mr = keep(
      env.device.pd.allocMr(GUIDED_MR_LENGTH, [
        'LOCAL_WRITE',
        'REMOTE_WRITE',
        'REMOTE_READ',
        'REMOTE_ATOMIC',
        ...(window ? (['MW_BIND'] as const) : []),
        // Global visibility only: rxe refuses FLUSH_PERSISTENT on memory that is not pmem.
        ...(setup.flush ? (['FLUSH_GLOBAL'] as const) : []),
        ...(setup.odp ? (['ON_DEMAND'] as const) : []),
      ]),
    );
    const srq: Srq | undefined = setup.srq
      ? keep(env.device.pd.createSrq({ maxWr: 8, maxSge: 1 }))
      : undefined;
    const qp = keep(
      env.device.pd.createQp({
        sendCq: env.device.cq,
        type,
        ...(srq === undefined ? {} : { srq }),
      }),
    );
    bringTo(env, qp, setup, startPsn);
    let rKey = mr.rkey;
    if (window) {
      const mw = keep(env.device.pd.allocMw(1));
      rKey = qp.bindMw(mw, { mr, access: ['REMOTE_WRITE', 'REMOTE_READ', 'REMOTE_ATOMIC'] });
    }
    const multicast = type === 'UD' && setup.multicast === true && setup.gsi !== true;
    if (multicast) {
      // Two QPs in the group: rxe_rcv_mcast_pkt() clones the packet for all but the last.
      attachMcast(qp, mappedGid(GUIDED_MULTICAST_ADDRESS));
      const other = keep(env.device.pd.createQp({ sendCq: env.device.cq, type: 'UD' }));
      bringTo(env, other, { type: 'UD' }, startPsn);
      attachMcast(other, mappedGid(GUIDED_MULTICAST_ADDRESS));
      other.postRecv({ wrId: 99n, sgList: [mr.sge(GUIDED_MR_LENGTH - 512, 512)] });
    }
    const recvs = setup.recvs ?? 4;
    const bytes = setup.recvBytes ?? 2048;
    // Receives need INIT at least (ibv_post_recv on a RESET QP fails); a UD receive's
    // first 40 bytes hold the GRH.
    if (setup.state !== 'RESET' || srq !== undefined)
      for (let i = 0; i < recvs; i++) {
        const wr = { wrId: BigInt(i + 1), sgList: [mr.sge(i * bytes, bytes)] };
        if (srq !== undefined) srq.postRecv(wr);
        else qp.postRecv(wr);
      }
    if (srq !== undefined && setup.srqLimit) srq.modify({ limit: 2 });
    const gsi = type === 'UD' && setup.gsi === true;
    return {
      qp,
      mr,
      qpn: multicast ? MULTICAST_QPN : gsi ? 1 : qp.qpNum,
      rKey,
      qkey: gsi ? GSI_QKEY : GUIDED_QKEY,
      datagram: {
        ...(setup.otherSource ? { source: OTHER_SOURCE_ADDRESS } : {}),
        ...(multicast ? { destination: GUIDED_MULTICAST_ADDRESS } : {}),
      },
      close: closeAll,
      after() {
        if (setup.after === undefined) return;
        try {
          qp.modify({ state: setup.after });
        } catch {
          // A QP in a state that cannot go there (RESET already, say): nothing to do.
        }
      },
    };
  } catch (error) {
    closeAll();
    throw error;
  }
}
