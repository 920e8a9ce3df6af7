/**
 * The interop scenarios, as data: families of short verbs programs (docs/interop.md).
 * Values are exact 64-bit numbers that are not byte palindromes, so that a byte-order
 * slip anywhere (wire, memory, completion) shows.
 */
import type { Access } from '../verbs/mr.js';
import { traitsOf } from './operations.js';
import {
  type Connection,
  DEVICES,
  type DeviceName,
  type Operation,
  type Scenario,
  type Step,
} from './scenario.js';

const WORD = 0x0123456789abcdefn;
const ADDEND = 0x1111111122222222n;
/** WORD + WRAPPING_ADDEND = 2^64: the sum wraps to exactly zero. */
const WRAPPING_ADDEND = 0xfedcba9876543211n;
const SWAP = 0x0fedcba987654321n;
const PAYLOAD = 0x8877665544332211n;
const IMM = 0x12345678;

const ATOMIC_MR = ['LOCAL_WRITE', 'REMOTE_READ', 'REMOTE_WRITE', 'REMOTE_ATOMIC'] as const;
const NO_ATOMIC_MR = ['LOCAL_WRITE', 'REMOTE_READ', 'REMOTE_WRITE'] as const;
const NO_ATOMIC_QP: readonly Access[] = ['REMOTE_READ', 'REMOTE_WRITE'];
/** Not a multiple of 8: RFC 7306 §5.1 and IBTA o9-21 want naturally aligned atomics. */
const MISALIGNED = 12;
/** The last word of the 32-byte MR, and the word just past its end. */
const LAST_WORD = 24;
const PAST_END = 32;

const FETCH_ADD: Operation = { kind: 'ATOMIC_FETCH_AND_ADD', add: ADDEND };

/** A device and post API a family runs on, and how its pairs connect (default: DEVICES). */
interface Target {
  readonly device: DeviceName;
  readonly postPath: 'legacy' | 'ex';
  readonly connect?: Connection;
}

/** rxe through both post APIs; siw through ibv_post_send (libsiw has no ibv_wr_*). */
const EVERY_TARGET: readonly Target[] = [
  { device: 'rxe0', postPath: 'legacy' },
  { device: 'rxe0', postPath: 'ex' },
  { device: 'siw0', postPath: 'legacy' },
];

/**
 * rxe pairs connected through rdma_cm (ib_cm over RoCE) next to the by-hand ones, through
 * both post APIs (rdma_create_qp_ex makes the extended QP).
 */
const RXE_CM_TARGETS: readonly Target[] = [
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
function single(op: Operation): Step[] {
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
function failing(op: Operation): Step[] {
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

interface Row {
  readonly suffix: string;
  readonly title: string;
  readonly program: readonly Step[];
  readonly initialAt?: number;
  readonly remoteAccess?: readonly Access[];
  readonly responderQpAccess?: readonly Access[];
  readonly initiatorDepth?: number;
  readonly rnrRetry?: number;
  readonly minRnrTimer?: number;
  readonly timeout?: number;
  /**
   * The row needs a by-hand bring-up (QP attributes rdma_cm does not let a program set:
   * the responder QP's access at bring-up, rnr_retry, min_rnr_timer): rxe only.
   */
  readonly byHand?: boolean;
  /** Ids keep the first suite's names: `rxe-fetch-add` for ibv_post_send, `-ex` for ibv_wr_*. */
  readonly capture?: boolean;
  /** The responder QPs receive through an SRQ (scenario.ts `srq`). */
  readonly srq?: boolean;
}

function family(name: string, targets: readonly Target[], rows: readonly Row[]): Scenario[] {
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
        ...(row.initiatorDepth === undefined ? {} : { initiatorDepth: row.initiatorDepth }),
        ...(row.rnrRetry === undefined ? {} : { rnrRetry: row.rnrRetry }),
        ...(row.minRnrTimer === undefined ? {} : { minRnrTimer: row.minRnrTimer }),
        ...(row.timeout === undefined ? {} : { timeout: row.timeout }),
        ...(row.srq === true ? { srq: true } : {}),
        program: row.program,
        // Only siw traffic can be captured: rxe loops QP-to-QP traffic back internally.
        captureWire: t.device === 'siw0' && (row.capture ?? true),
      })),
  );
}

/** One operation of each kind, as the first suite had them. */
const BASIC: readonly Row[] = [
  {
    suffix: 'write',
    title: 'RDMA Write',
    program: single({ kind: 'RDMA_WRITE', payload: PAYLOAD }),
  },
  { suffix: 'send', title: 'Send', program: single({ kind: 'SEND', payload: PAYLOAD }) },
  { suffix: 'read', title: 'RDMA Read', program: single({ kind: 'RDMA_READ' }) },
];

const ATOMICS: readonly Row[] = [
  { suffix: 'fetch-add', title: 'FetchAdd', program: single(FETCH_ADD) },
  {
    suffix: 'fetch-add-zero',
    title: 'FetchAdd of 0 (the RFC 7306 capability probe)',
    program: single({ kind: 'ATOMIC_FETCH_AND_ADD', add: 0n }),
  },
  {
    suffix: 'fetch-add-wrap',
    title: 'FetchAdd wrapping at 2^64',
    program: single({ kind: 'ATOMIC_FETCH_AND_ADD', add: WRAPPING_ADDEND }),
  },
  {
    suffix: 'cmp-swap-match',
    title: 'CmpSwap, compare matches',
    program: single({ kind: 'ATOMIC_CMP_AND_SWP', compare: WORD, swap: SWAP }),
  },
  {
    suffix: 'cmp-swap-mismatch',
    title: 'CmpSwap, compare differs in one bit',
    program: single({ kind: 'ATOMIC_CMP_AND_SWP', compare: WORD ^ 1n, swap: SWAP }),
  },
  {
    suffix: 'atomic-first-word',
    title: 'FetchAdd on the first word of the MR',
    initialAt: 0,
    program: single({ ...FETCH_ADD, target: 0 }),
  },
  {
    suffix: 'atomic-last-word',
    title: 'FetchAdd on the last word of the MR',
    initialAt: LAST_WORD,
    program: single({ ...FETCH_ADD, target: LAST_WORD }),
  },
  {
    suffix: 'atomic-burst',
    title: 'six FetchAdds in one post, initiator depth 1',
    initiatorDepth: 1,
    capture: false,
    program: [
      {
        do: 'post-send',
        wrs: Array.from({ length: 6 }, (_, i) => ({ ...FETCH_ADD, add: ADDEND * BigInt(i + 1) })),
      },
      { do: 'wait', side: 'requester', count: 6 },
      { do: 'query', side: 'requester' },
      { do: 'query', side: 'responder' },
    ],
  },
];

const ATOMIC_ERRORS: readonly Row[] = [
  {
    suffix: 'misaligned',
    title: 'misaligned FetchAdd',
    initialAt: MISALIGNED,
    program: failing({ ...FETCH_ADD, target: MISALIGNED }),
  },
  {
    suffix: 'no-remote-atomic',
    title: 'FetchAdd on an MR without REMOTE_ATOMIC',
    remoteAccess: NO_ATOMIC_MR,
    program: failing(FETCH_ADD),
  },
  {
    suffix: 'qp-no-atomic',
    title: 'FetchAdd to a QP brought up without remote atomic access',
    responderQpAccess: NO_ATOMIC_QP,
    byHand: true,
    program: failing(FETCH_ADD),
  },
  {
    suffix: 'qp-atomic-removed',
    title: 'FetchAdd after a modify at RTS removed remote atomic access',
    program: [{ do: 'modify', side: 'responder', access: NO_ATOMIC_QP }, ...failing(FETCH_ADD)],
  },
  {
    suffix: 'atomic-invalid-rkey',
    title: 'FetchAdd with an rkey the responder never issued',
    program: failing({ ...FETCH_ADD, rkey: 'invalid' }),
  },
  {
    suffix: 'atomic-invalid-lkey',
    title: 'FetchAdd whose local SGE has an lkey never issued',
    program: failing({ ...FETCH_ADD, local: 'invalid-lkey' }),
  },
  {
    suffix: 'atomic-short-sge',
    title: 'FetchAdd whose local SGE is 4 bytes',
    program: failing({ ...FETCH_ADD, local: 'short' }),
  },
  {
    suffix: 'atomic-no-sge',
    title: 'FetchAdd without a local SGE',
    program: failing({ ...FETCH_ADD, local: 'none' }),
  },
  {
    suffix: 'atomic-past-end',
    title: 'FetchAdd one word past the end of the MR',
    program: failing({ ...FETCH_ADD, target: PAST_END }),
  },
];

const IMMEDIATE: readonly Row[] = [
  {
    suffix: 'write-imm',
    title: 'RDMA Write with Immediate, 8 bytes',
    program: single({ kind: 'RDMA_WRITE_WITH_IMM', payload: PAYLOAD, immData: IMM }),
  },
  {
    suffix: 'write-imm-16',
    title: 'RDMA Write with Immediate, 16 bytes',
    program: single({ kind: 'RDMA_WRITE_WITH_IMM', payload: PAYLOAD, immData: IMM, length: 16 }),
  },
  {
    suffix: 'write-imm-0',
    title: 'RDMA Write with Immediate, 0 bytes',
    program: single({ kind: 'RDMA_WRITE_WITH_IMM', payload: PAYLOAD, immData: IMM, length: 0 }),
  },
  {
    suffix: 'send-imm',
    title: 'Send with Immediate',
    program: single({ kind: 'SEND_WITH_IMM', payload: PAYLOAD, immData: IMM }),
  },
  {
    suffix: 'send-solicited',
    title: 'Send with the solicited-event flag',
    program: single({ kind: 'SEND', payload: PAYLOAD, solicited: true }),
  },
  {
    suffix: 'send-imm-solicited',
    title: 'Send with Immediate and the solicited-event flag',
    program: single({ kind: 'SEND_WITH_IMM', payload: PAYLOAD, immData: IMM, solicited: true }),
  },
  {
    suffix: 'write-imm-solicited',
    title: 'RDMA Write with Immediate and the solicited-event flag (RFC 7306 §6, with SE)',
    program: single({
      kind: 'RDMA_WRITE_WITH_IMM',
      payload: PAYLOAD,
      immData: IMM,
      solicited: true,
    }),
  },
];

/**
 * How long an ordering program waits for each completion: libsiw silently drops the second
 * request of a list it cannot carry (libsiw-list-refusal-lost), whose completion never comes.
 */
const ORDERING_WAIT_MS = 3000;

/** RFC 7306 §7 sequences, in one post list; the trace is judged by the ordering checker. */
const ORDERING: readonly Row[] = [
  {
    suffix: 'order-write-then-write-imm',
    title: 'RDMA Write then Write with Immediate (RFC 7306 §7)',
    program: [
      { do: 'post-recv', for: 'write-imm' },
      {
        do: 'post-send',
        wrs: [
          { kind: 'RDMA_WRITE', payload: SWAP, target: 16 },
          { kind: 'RDMA_WRITE_WITH_IMM', payload: PAYLOAD, immData: IMM },
        ],
      },
      { do: 'wait', side: 'requester', count: 2, timeoutMs: ORDERING_WAIT_MS },
      { do: 'wait', side: 'responder', count: 1, timeoutMs: ORDERING_WAIT_MS },
    ],
  },
  {
    suffix: 'order-atomic-then-read',
    title: 'FetchAdd then RDMA Read of the same word (RFC 7306 §7)',
    program: [
      { do: 'post-send', wrs: [FETCH_ADD, { kind: 'RDMA_READ' }] },
      { do: 'wait', side: 'requester', count: 2, timeoutMs: ORDERING_WAIT_MS },
    ],
  },
  {
    suffix: 'order-send-then-atomic',
    title: 'Send then FetchAdd (RFC 7306 §7)',
    program: [
      { do: 'post-recv', for: 'send' },
      {
        do: 'post-send',
        wrs: [
          { kind: 'SEND', payload: PAYLOAD },
          { ...FETCH_ADD, target: 16 },
        ],
      },
      { do: 'wait', side: 'requester', count: 2, timeoutMs: ORDERING_WAIT_MS },
      { do: 'wait', side: 'responder', count: 1, timeoutMs: ORDERING_WAIT_MS },
    ],
  },
  {
    suffix: 'order-two-atomics',
    title: 'FetchAdd then CmpSwap expecting its sum (RFC 7306 §7)',
    program: [
      {
        do: 'post-send',
        wrs: [FETCH_ADD, { kind: 'ATOMIC_CMP_AND_SWP', compare: WORD + ADDEND, swap: SWAP }],
      },
      { do: 'wait', side: 'requester', count: 2, timeoutMs: ORDERING_WAIT_MS },
    ],
  },
];

/**
 * The RNR timers: the longest RNR timer, 655.36 ms (IBTA Table 45 code 0), against a 4.3 s
 * transport timer (timeout 20), far apart so the class a completion lands in cannot be
 * mistaken even with the jitter of an emulated guest on a loaded host (rnr-timing.ts): an
 * rnr_retry 0 answer took over 123 ms, then over 245 ms, at host load 17-21.
 */
const RNR_TIMERS = { minRnrTimer: 0, timeout: 20 } as const;

/** `steps` with the requester's first wait timed (its completion's timer class). */
function timed(steps: readonly Step[]): Step[] {
  const first = steps.findIndex((s) => s.do === 'wait' && s.side === 'requester');
  return steps.map((s, i) => (i === first && s.do === 'wait' ? { ...s, timed: true } : s));
}

/** `steps` without their receive (the request meets RNR NAKs). */
function withoutReceive(steps: readonly Step[]): Step[] {
  return steps.filter((s) => s.do !== 'post-recv');
}

/** A Send met by RNR NAKs, its receive posted `ms` after it. */
function lateReceive(ms: number, responderWaitMs?: number): Step[] {
  return [
    { do: 'post-send', wrs: [{ kind: 'SEND', payload: PAYLOAD }] },
    { do: 'sleep', ms },
    { do: 'post-recv', for: 'send' },
    { do: 'wait', side: 'requester', count: 1, timed: true },
    {
      do: 'wait',
      side: 'responder',
      count: 1,
      ...(responderWaitMs === undefined ? {} : { timeoutMs: responderWaitMs }),
    },
    { do: 'query', side: 'requester' },
    { do: 'query', side: 'responder' },
  ];
}

/**
 * RNR: rnr_retry and min_rnr_timer need a by-hand bring-up (rxe). iWARP has no RNR: a
 * Send that finds no receive is a DDP error that ends the stream (RFC 5041 §7.2,
 * RFC 5040 §7), which `send-no-recv` shows on both transports.
 */
const RNR: readonly Row[] = [
  {
    suffix: 'send-no-recv',
    title: 'Send, no receive posted (rnr_retry 0 on rxe; iWARP has no RNR)',
    rnrRetry: 0,
    ...RNR_TIMERS,
    program: timed(withoutReceive(failing({ kind: 'SEND', payload: PAYLOAD }))),
  },
  {
    suffix: 'send-imm-no-recv',
    byHand: true,
    title: 'Send with Immediate, no receive posted, rnr_retry 0',
    rnrRetry: 0,
    ...RNR_TIMERS,
    program: timed(
      withoutReceive(failing({ kind: 'SEND_WITH_IMM', payload: PAYLOAD, immData: IMM })),
    ),
  },
  {
    suffix: 'write-imm-no-recv',
    byHand: true,
    title: 'RDMA Write with Immediate, no receive posted, rnr_retry 0',
    rnrRetry: 0,
    ...RNR_TIMERS,
    program: timed(
      withoutReceive(failing({ kind: 'RDMA_WRITE_WITH_IMM', payload: PAYLOAD, immData: IMM })),
    ),
  },
  {
    suffix: 'rnr-retry-2',
    byHand: true,
    title: 'Send, no receive posted, rnr_retry 2',
    rnrRetry: 2,
    ...RNR_TIMERS,
    program: timed(withoutReceive(single({ kind: 'SEND', payload: PAYLOAD }))),
  },
  {
    suffix: 'rnr-retry-3-late-recv',
    byHand: true,
    title: 'Send, rnr_retry 3, receive posted 300 ms late (found by a retry)',
    rnrRetry: 3,
    ...RNR_TIMERS,
    program: lateReceive(300),
  },
  {
    suffix: 'rnr-retry-1-too-late',
    byHand: true,
    title: 'Send, rnr_retry 1, receive posted 1000 ms late (after the retries ran out)',
    rnrRetry: 1,
    ...RNR_TIMERS,
    program: lateReceive(1000, 500),
  },
  {
    suffix: 'rnr-infinite-late-recv',
    byHand: true,
    title: 'Send, rnr_retry 7 (infinite), receive posted 50 ms late',
    rnrRetry: 7,
    ...RNR_TIMERS,
    program: lateReceive(50),
  },
];

/** Several QPs hammering one word, in the suite's process or one process each. */
const CONCURRENCY: readonly Row[] = [
  {
    suffix: 'concurrent-fetch-add',
    title: 'four QPs, 1000 FetchAdd(+1) each, on one word',
    capture: false,
    program: [{ do: 'hammer', qps: 4, count: 1000, add: 1n }],
  },
  {
    suffix: 'concurrent-fetch-add-processes',
    title: 'three processes, one QP each, 1000 FetchAdd(+1) each, on one word',
    capture: false,
    program: [{ do: 'hammer', qps: 3, count: 1000, add: 1n, across: 'processes' }],
  },
];

/**
 * IBTA 1.5 memory placement (Vol. 1 Annex A19: ATOMIC WRITE, FLUSH; NOT RFC 7306, which
 * has neither, so no siw rows): rxe through ibv_wr_* (ibv_wr_flush needs rdma-core 45).
 * rxe has them from 6.2; on 6.1 the runs show the refusals (known-behaviour.ts).
 */
const IBTA15_TARGETS: readonly Target[] = [{ device: 'rxe0', postPath: 'ex' }];
/** What an ATOMIC WRITE places: not WORD, not a byte palindrome. */
const ATOMIC_WRITE_VALUE = 0x0f1e2d3c4b5a6978n;
const ATOMIC_WRITE: Operation = { kind: 'ATOMIC_WRITE', atomicValue: ATOMIC_WRITE_VALUE };
/** The MR rights and responder QP enables a FLUSH of global visibility needs. */
const FLUSH_GLOBAL_MR: readonly Access[] = [...ATOMIC_MR, 'FLUSH_GLOBAL'];
const FLUSH_QP: readonly Access[] = [
  'REMOTE_READ',
  'REMOTE_WRITE',
  'REMOTE_ATOMIC',
  'FLUSH_GLOBAL',
  'FLUSH_PERSISTENT',
];
const FLUSH_WORD: Operation = {
  kind: 'FLUSH',
  flush: { length: 8n, placement: 'GLOBAL', selectivity: 'RANGE' },
};
const IBTA15: readonly Row[] = [
  {
    suffix: 'atomic-write',
    title: 'ATOMIC WRITE of 8 bytes (IBTA 1.5 A19)',
    byHand: true,
    program: single(ATOMIC_WRITE),
  },
  {
    suffix: 'atomic-write-misaligned',
    title: 'misaligned ATOMIC WRITE',
    byHand: true,
    initialAt: MISALIGNED,
    program: failing({ ...ATOMIC_WRITE, target: MISALIGNED }),
  },
  {
    suffix: 'atomic-write-no-remote-write',
    title: 'ATOMIC WRITE to an MR without REMOTE_WRITE',
    byHand: true,
    remoteAccess: ['LOCAL_WRITE', 'REMOTE_READ', 'REMOTE_ATOMIC'],
    program: failing(ATOMIC_WRITE),
  },
  {
    suffix: 'atomic-write-then-read',
    title: 'ATOMIC WRITE then RDMA Read of the same word',
    byHand: true,
    program: [
      { do: 'post-send', wrs: [ATOMIC_WRITE, { kind: 'RDMA_READ' }] },
      { do: 'wait', side: 'requester', count: 2, timeoutMs: ORDERING_WAIT_MS },
      { do: 'query', side: 'requester' },
    ],
  },
  {
    suffix: 'flush-global-range',
    title: 'FLUSH of one word, global visibility',
    byHand: true,
    remoteAccess: FLUSH_GLOBAL_MR,
    responderQpAccess: FLUSH_QP,
    program: single(FLUSH_WORD),
  },
  {
    suffix: 'flush-global-mr',
    title: 'FLUSH of the whole MR, global visibility',
    byHand: true,
    remoteAccess: FLUSH_GLOBAL_MR,
    responderQpAccess: FLUSH_QP,
    program: single({
      kind: 'FLUSH',
      target: 0,
      flush: { length: 32n, placement: 'GLOBAL', selectivity: 'MR' },
    }),
  },
  {
    suffix: 'flush-range-past-end',
    title: 'FLUSH of a range running past the end of the MR',
    byHand: true,
    remoteAccess: FLUSH_GLOBAL_MR,
    responderQpAccess: FLUSH_QP,
    program: failing({
      ...FLUSH_WORD,
      target: LAST_WORD,
      flush: { ...FLUSH_WORD.flush, length: 16n } as const,
    }),
  },
  {
    suffix: 'flush-persistent-no-right',
    title: 'FLUSH for persistence to an MR with only FLUSH_GLOBAL',
    byHand: true,
    remoteAccess: FLUSH_GLOBAL_MR,
    responderQpAccess: FLUSH_QP,
    program: failing({
      kind: 'FLUSH',
      flush: { length: 8n, placement: 'PERSISTENT', selectivity: 'RANGE' },
    }),
  },
  {
    suffix: 'flush-no-right',
    title: 'FLUSH to an MR without IBV_ACCESS_FLUSH_*',
    byHand: true,
    responderQpAccess: FLUSH_QP,
    program: failing(FLUSH_WORD),
  },
  {
    suffix: 'flush-qp-no-enable',
    title: 'FLUSH to a responder QP without the flush enables',
    byHand: true,
    remoteAccess: FLUSH_GLOBAL_MR,
    responderQpAccess: ['REMOTE_READ', 'REMOTE_WRITE', 'REMOTE_ATOMIC'],
    program: failing(FLUSH_WORD),
  },
  {
    suffix: 'write-then-flush',
    title: 'RDMA Write then FLUSH of the word it wrote',
    byHand: true,
    remoteAccess: FLUSH_GLOBAL_MR,
    responderQpAccess: FLUSH_QP,
    program: [
      { do: 'post-send', wrs: [{ kind: 'RDMA_WRITE', payload: PAYLOAD }, FLUSH_WORD] },
      { do: 'wait', side: 'requester', count: 2, timeoutMs: ORDERING_WAIT_MS },
      { do: 'query', side: 'requester' },
      { do: 'query', side: 'responder' },
    ],
  },
];

/**
 * How long the responder's solicited-only arm waits for its event. Woken, it returns at
 * once; unwoken (a Send without SE) the scenario spends the whole wait, so it is short.
 */
const SOLICITED_WAIT_MS = 1000;

/**
 * A Send with or without the Solicited Event bit into a responder CQ armed for solicited
 * completions only (ibv_req_notify_cq(cq, 1)): IBTA 1.5 §11.4.2.2 and RFC 5040 §5.3 say
 * the event comes for the SE Send only. The completion itself comes either way.
 */
function solicitedSend(solicited: boolean): Step[] {
  return [
    { do: 'post-recv', for: 'send' },
    { do: 'arm-solicited', side: 'responder', timeoutMs: SOLICITED_WAIT_MS },
    { do: 'post-send', wrs: [{ kind: 'SEND', payload: PAYLOAD, solicited }] },
    { do: 'cq-event', side: 'responder' },
    { do: 'wait', side: 'requester', count: 1 },
    { do: 'wait', side: 'responder', count: 1 },
  ];
}

const SOLICITED: readonly Row[] = [
  {
    suffix: 'solicited-event',
    title: 'Send with SE into a CQ armed for solicited completions',
    program: solicitedSend(true),
  },
  {
    suffix: 'unsolicited-no-event',
    title: 'Send without SE into a CQ armed for solicited completions',
    program: solicitedSend(false),
  },
];

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
const WINDOW_TARGETS: readonly Target[] = EVERY_TARGET.filter((t) => t.device === 'rxe0');
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

const MEMORY_WINDOWS: readonly Row[] = [
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

/** A Send from the requester's `qp` and its requester completion (the SRQ programs). */
function sendFrom(qp: 'first' | 'second', payload: bigint): Step[] {
  return [
    { do: 'post-send', wrs: [{ kind: 'SEND', payload }], qp },
    { do: 'wait', side: 'requester', count: 1 },
  ];
}

/** Four receives on the SRQ. */
const FOUR_SRQ_RECEIVES: readonly Step[] = Array.from({ length: 4 }, () => ({
  do: 'post-recv' as const,
  for: 'send' as const,
}));

/** How long an SRQ event wait that should see none waits (it spends all of it). */
const NO_SRQ_EVENT_MS = 300;

/**
 * Shared receive queues (IBTA 1.5 §10.2.9) on every device: rxe (both post APIs) and siw
 * (libsiw and siw have SRQs: siw_create_srq, siw_post_srq_recv, the limit in
 * siw_qp_rx.c siw_rqe_get).
 */
const SRQ: readonly Row[] = [
  {
    // §10.2.9: the SRQ's receives are taken in the order they were posted, by whichever
    // QP a Send arrives on; each completion names its QP (qp_num). Each Send is waited
    // for before the next, so the arrival order is the posting order. Not captured: the
    // two connections' messages would interleave in one capture, each with its own MSNs.
    suffix: 'srq-two-qps',
    title: 'Sends from two QPs into one SRQ: receives taken in posting order',
    srq: true,
    capture: false,
    program: [
      ...FOUR_SRQ_RECEIVES,
      ...sendFrom('first', PAYLOAD),
      ...sendFrom('second', PAYLOAD ^ 0x00ff_00ff_00ff_00ffn),
      ...sendFrom('second', SWAP),
      ...sendFrom('first', WORD ^ 0xf0f0_0000_0000_0f0fn),
      { do: 'wait', side: 'responder', count: 4 },
      { do: 'query', side: 'requester' },
      { do: 'query', side: 'responder' },
    ],
  },
  {
    // §10.2.9.2 / §11.6.3.3: with 4 receives and the limit armed at 2, the first two
    // Sends leave 3 and 2 (not fewer than 2: no event), the third leaves 1: the event,
    // once, and the limit is disarmed (reads 0; rxe_resp.c get_srq_wqe sets srq->limit = 0).
    suffix: 'srq-limit',
    title: 'SRQ limit 2 over 4 receives: SRQ_LIMIT_REACHED at the third Send only',
    srq: true,
    program: [
      ...FOUR_SRQ_RECEIVES,
      { do: 'srq-limit', limit: 2 },
      ...sendFrom('first', PAYLOAD),
      ...sendFrom('first', SWAP),
      { do: 'wait', side: 'responder', count: 2 },
      { do: 'srq-event', timeoutMs: NO_SRQ_EVENT_MS },
      ...sendFrom('first', WORD ^ 0xf0f0_0000_0000_0f0fn),
      { do: 'wait', side: 'responder', count: 1 },
      { do: 'srq-event', timeoutMs: 5000 },
    ],
  },
];

/**
 * One-operation programs of the first suite, and the solicited event, on rdma_cm-connected
 * rxe pairs: the bring-up differs (ib_cm sets the QP attributes), the programs do not.
 */
const RDMA_CM: readonly Row[] = [
  ...BASIC,
  ...ATOMICS.filter((row) => row.suffix === 'fetch-add'),
  ...SOLICITED.filter((row) => row.suffix === 'solicited-event'),
];

/** Every scenario, rxe first (the faster device to fail on), then siw. */
export const SCENARIOS: readonly Scenario[] = [
  ...family(
    'basic',
    EVERY_TARGET.filter((t) => t.postPath === 'legacy'),
    BASIC,
  ),
  ...family('atomics', EVERY_TARGET, ATOMICS),
  ...family('atomic-errors', EVERY_TARGET, ATOMIC_ERRORS),
  ...family('immediate', EVERY_TARGET, IMMEDIATE),
  ...family('ordering', EVERY_TARGET, ORDERING),
  ...family('rnr', EVERY_TARGET, RNR),
  ...family('concurrency', EVERY_TARGET, CONCURRENCY),
  ...family('ibta15', IBTA15_TARGETS, IBTA15),
  ...family('solicited', EVERY_TARGET, SOLICITED),
  ...family('rdma-cm', RXE_CM_TARGETS, RDMA_CM),
  ...family('memory-windows', WINDOW_TARGETS, MEMORY_WINDOWS),
  ...family('srq', EVERY_TARGET, SRQ),
].sort((a, b) => (a.device === b.device ? 0 : a.device === 'rxe0' ? -1 : 1));
