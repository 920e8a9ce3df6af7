/**
 * How a family of scenarios is made: the exact values, the devices and post APIs a family
 * runs on, the one-request and error programs, and `family`, which makes a row a scenario
 * per target.
 */
import type { Access } from '../../verbs/mr.js';
import { traitsOf } from '../operations.js';
import {
  type Connection,
  DEVICES,
  type DeviceName,
  type Operation,
  type QpAttributes,
  qpAttributesOf,
  type Scenario,
  type Step,
} from '../scenario.js';

export const WORD = 0x0123456789abcdefn;
export const ADDEND = 0x1111111122222222n;
/** WORD + WRAPPING_ADDEND = 2^64: the sum wraps to exactly zero. */
export const WRAPPING_ADDEND = 0xfedcba9876543211n;
export const SWAP = 0x0fedcba987654321n;
export const PAYLOAD = 0x8877665544332211n;
export const IMM = 0x12345678;

export const ATOMIC_MR = ['LOCAL_WRITE', 'REMOTE_READ', 'REMOTE_WRITE', 'REMOTE_ATOMIC'] as const;
export const NO_ATOMIC_MR = ['LOCAL_WRITE', 'REMOTE_READ', 'REMOTE_WRITE'] as const;
export const NO_ATOMIC_QP: readonly Access[] = ['REMOTE_READ', 'REMOTE_WRITE'];
/** Not a multiple of 8: RFC 7306 §5.1 and IBTA o9-21 want naturally aligned atomics. */
export const MISALIGNED = 12;
/** The last word of the 32-byte MR, and the word just past its end. */
export const LAST_WORD = 24;
export const PAST_END = 32;

export const FETCH_ADD: Operation = { kind: 'ATOMIC_FETCH_AND_ADD', add: ADDEND };

/** A device and post API a family runs on, and how its pairs connect (default: DEVICES). */
export interface Target {
  readonly device: DeviceName;
  readonly postPath: 'legacy' | 'ex';
  readonly connect?: Connection;
}

/** rxe through both post APIs; siw through ibv_post_send (libsiw has no ibv_wr_*). */
export const EVERY_TARGET: readonly Target[] = [
  { device: 'rxe0', postPath: 'legacy' },
  { device: 'rxe0', postPath: 'ex' },
  { device: 'siw0', postPath: 'legacy' },
];

/**
 * rxe pairs connected through rdma_cm (ib_cm over RoCE) next to the by-hand ones, through
 * both post APIs (rdma_create_qp_ex makes the extended QP).
 */
export const RXE_CM_TARGETS: readonly Target[] = [
  { device: 'rxe0', postPath: 'legacy', connect: 'rdma-cm' },
  { device: 'rxe0', postPath: 'ex', connect: 'rdma-cm' },
];

/** `rxe`, `siw`; `rxe-cm` for rxe pairs connected through rdma_cm. */
function prefix(t: Target): string {
  if (t.device === 'siw0') return 'siw';
  return t.connect === 'rdma-cm' ? 'rxe-cm' : 'rxe';
}

/** How titles and report rows name a bring-up a target asks for. */
const CONNECTION_LABEL: Readonly<Record<Connection, string>> = {
  'by-hand': 'by hand',
  'rdma-cm': 'rdma_cm',
};

/** How the target's pairs connect. */
function connectionOfTarget(t: Target): Connection {
  return t.connect ?? DEVICES[t.device].connect;
}

/**
 * The program of one work request: its receive (if it consumes one), the post, both
 * sides' completions, both QPs' states.
 */
export function single(op: Operation): Step[] {
  const consumes = traitsOf(op.kind).consumesReceive;
  return [
    ...(consumes === null ? [] : [{ do: 'post-recv', for: consumes } as const]),
    { do: 'post-send', wrs: [op] },
    { do: 'wait', side: 'requester', count: 1 },
    { do: 'wait', side: 'responder', count: 1 },
    { do: 'query', side: 'requester' },
    { do: 'query', side: 'responder' },
  ];
}

/**
 * An error program: the failing request, both completions and QP states, then a further
 * post on each QP and what it gets: a FetchAdd on the requester (a flush once the QP is
 * in ERR), an RDMA Write back from the responder (flushed if the responder is in ERR,
 * retried until it gives up if only the requester is).
 */
export function failing(op: Operation): Step[] {
  return [
    ...single(op),
    { do: 'post-send', wrs: [FETCH_ADD] },
    { do: 'wait', side: 'requester', count: 1 },
    { do: 'query', side: 'requester' },
    { do: 'post-send', side: 'responder', wrs: [{ kind: 'RDMA_WRITE' }] },
    // Retry exhaustion takes timeout 14 (67 ms) x (retry_cnt 7 + 1), about 0.5 s.
    { do: 'wait', side: 'responder', count: 1, timeoutMs: 2000 },
    { do: 'query', side: 'responder' },
  ];
}

export interface Row extends QpAttributes {
  readonly suffix: string;
  readonly title: string;
  readonly program: readonly Step[];
  readonly initialAt?: number;
  readonly remoteAccess?: readonly Access[];
  readonly responderQpAccess?: readonly Access[];
  /**
   * The row needs a by-hand bring-up (QP attributes rdma_cm does not let a program set:
   * the responder QP's access at bring-up, rnr_retry, min_rnr_timer): rxe only.
   */
  readonly byHand?: boolean;
  /** Ids keep the first suite's names: `rxe-fetch-add` for ibv_post_send, `-ex` for ibv_wr_*. */
  readonly capture?: boolean;
  /** The responder QPs receive through an SRQ (scenario.ts `srq`). */
  readonly srq?: boolean;
  /** UD multicast: a UD requester and two UD receiving QPs (scenario.ts `ud`). */
  readonly ud?: boolean;
}

export function family(name: string, targets: readonly Target[], rows: readonly Row[]): Scenario[] {
  return targets.flatMap((t) =>
    rows
      .filter((row) => row.byHand !== true || connectionOfTarget(t) === 'by-hand')
      .map((row) => ({
        id: `${prefix(t)}-${row.suffix}${t.postPath === 'ex' ? '-ex' : ''}`,
        // A matrix row per program and bring-up: the columns are device and post API.
        name: `${row.suffix}${t.connect === undefined ? '' : ` (${CONNECTION_LABEL[t.connect]})`}`,
        title: `${row.title}${t.postPath === 'ex' ? ', ibv_wr_*' : ''}${t.connect === undefined ? '' : `, ${CONNECTION_LABEL[t.connect]}`}`,
        family: name,
        device: t.device,
        postPath: t.postPath,
        ...(t.connect === undefined ? {} : { connect: t.connect }),
        initial: WORD,
        ...(row.initialAt === undefined ? {} : { initialAt: row.initialAt }),
        remoteAccess: row.remoteAccess ?? ATOMIC_MR,
        ...(row.responderQpAccess === undefined
          ? {}
          : { responderQpAccess: row.responderQpAccess }),
        ...qpAttributesOf(row),
        ...(row.srq === true ? { srq: true } : {}),
        ...(row.ud === true ? { ud: true } : {}),
        program: row.program,
        // Only siw traffic can be captured: rxe loops QP-to-QP traffic back internally.
        captureWire: t.device === 'siw0' && (row.capture ?? true),
      })),
  );
}
