/**
 * Connecting RC QPs by hand (InfiniBand / RoCE): RESET -> INIT -> RTR -> RTS with the
 * peer's GID, QPN and PSN exchanged out of band. Not possible on iWARP (siw), where a QP
 * reaches RTS only through rdma_cm (see `cm.ts`).
 */
import type { Mtu } from '../ibverbs/constants.js';
import { VerbsArgumentError } from './errors.js';
import type { Access } from './mr.js';
import type { Qp } from './qp.js';

/** A QP argument: anything with `modify` (tests pass scripted QPs); checked before any call. */
function requireQp(field: string, qp: unknown): void {
  if (typeof (qp as { modify?: unknown } | null | undefined)?.modify !== 'function')
    throw new VerbsArgumentError(field, 'not a QP');
}

/** An object argument (parameters), checked before any call. */
function requireParams(field: string, value: unknown): void {
  if (typeof value !== 'object' || value === null)
    throw new VerbsArgumentError(field, 'not an object');
}

/** What one side tells the other. */
export interface RcEndpoint {
  readonly qpNum: number;
  /** The first PSN this side sends with. */
  readonly psn: number;
  /** The side's GID (16 bytes; for RoCE v2 the IPv4-mapped one). */
  readonly gid: Buffer;
}

/** Parameters of {@link connectRcByHand}. */
export interface RcConnectParams {
  /** The peer. */
  readonly remote: RcEndpoint;
  /** This side's first send PSN. */
  readonly localPsn: number;
  /** This side's GID index (RoCE v2 on rxe: the IPv4-mapped entry, usually 1). */
  readonly sgidIndex: number;
  readonly port?: number;
  readonly mtu?: Mtu;
  /** Outstanding reads/atomics this side may issue (ORD). */
  readonly maxRdAtomic?: number;
  /** Incoming reads/atomics this side accepts (IRD). */
  readonly maxDestRdAtomic?: number;
  /** Remote access this QP grants. */
  readonly access?: readonly Access[];
  readonly timeout?: number;
  readonly retryCnt?: number;
  readonly rnrRetry?: number;
  readonly minRnrTimer?: number;
}

/** Moves `qp` from RESET to RTS facing `params.remote`. */
export function connectRcByHand(qp: Qp, params: RcConnectParams): void {
  requireQp('qp', qp);
  requireParams('params', params);
  requireParams('params.remote', params.remote);
  const port = params.port ?? 1;
  qp.modify({
    state: 'INIT',
    pkeyIndex: 0,
    port,
    access: params.access ?? ['LOCAL_WRITE', 'REMOTE_WRITE', 'REMOTE_READ', 'REMOTE_ATOMIC'],
  });
  qp.modify({
    state: 'RTR',
    pathMtu: params.mtu ?? 1024,
    destQpNum: params.remote.qpNum,
    rqPsn: params.remote.psn,
    maxDestRdAtomic: params.maxDestRdAtomic ?? 16,
    minRnrTimer: params.minRnrTimer ?? 12,
    av: {
      port,
      grh: { dgid: params.remote.gid, sgidIndex: params.sgidIndex, hopLimit: 64 },
    },
  });
  qp.modify({
    state: 'RTS',
    sqPsn: params.localPsn,
    maxRdAtomic: params.maxRdAtomic ?? 16,
    timeout: params.timeout ?? 14,
    retryCnt: params.retryCnt ?? 7,
    rnrRetry: params.rnrRetry ?? 7,
  });
}

/** Moves a UD `qp` from RESET to RTS (no peer: each send names its destination). */
export function readyUd(qp: Qp, params: { qkey: number; port?: number; sqPsn?: number }): void {
  requireQp('qp', qp);
  requireParams('params', params);
  qp.modify({ state: 'INIT', pkeyIndex: 0, port: params.port ?? 1, qkey: params.qkey });
  qp.modify({ state: 'RTR' });
  qp.modify({ state: 'RTS', sqPsn: params.sqPsn ?? 0 });
}

/** What differs between the two ends of {@link connectPairByHand}; the rest is shared. */
export type PairSideParams = Omit<RcConnectParams, 'remote' | 'localPsn' | 'sgidIndex'>;

/** Parameters of {@link connectPairByHand}. */
export interface PairConnectParams extends PairSideParams {
  /** `a`'s first send PSN (default 0x1234); `b`'s is `bPsn` (default 0x5678). */
  readonly aPsn?: number;
  readonly bPsn?: number;
  /** Per-side settings over the shared ones (e.g. one side's access or rnr_retry). */
  readonly a?: PairSideParams;
  readonly b?: PairSideParams;
}

/**
 * Connects two QPs of one device to each other (loopback through the device's own GID
 * `gid`): both RESET -> INIT -> RTR -> RTS, each facing the other. Distinct PSNs by
 * default, so that a PSN mix-up cannot pass unnoticed.
 */
export function connectPairByHand(
  a: Qp,
  b: Qp,
  gid: { readonly index: number; readonly gid: Buffer },
  params: PairConnectParams = {},
): void {
  requireQp('a', a);
  requireQp('b', b);
  requireParams('gid', gid);
  requireParams('params', params);
  const { aPsn = 0x1234, bPsn = 0x5678, a: onlyA, b: onlyB, ...shared } = params;
  connectRcByHand(a, {
    ...shared,
    ...onlyA,
    sgidIndex: gid.index,
    remote: { qpNum: b.qpNum, psn: bPsn, gid: gid.gid },
    localPsn: aPsn,
  });
  connectRcByHand(b, {
    ...shared,
    ...onlyB,
    sgidIndex: gid.index,
    remote: { qpNum: a.qpNum, psn: aPsn, gid: gid.gid },
    localPsn: bPsn,
  });
}
