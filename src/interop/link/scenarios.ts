/**
 * The wire scenarios of the two-guest mode (`run --link`): programs whose packets cross a
 * real link between two guests (src/runtime/pair.ts), so that the capture shows what rxe
 * and siw put on the wire. Each is an ordinary Scenario (same data, same report rows);
 * the requester runs in guest A, the responder (its MR and receives) in guest B.
 *
 * A link program is deliberately small: receives the responder posts before the
 * connection is ready, one post of work requests, the requester's completions. Error
 * programs post a single request, so that the packets after a NAK are deterministic.
 */
import type { Access } from '../../verbs/mr.js';
import { type ReceiveUse, traitsOf } from '../operations.js';
import type { Operation, Scenario, Step } from '../scenario.js';
import { FAULT_LINK_SCENARIOS } from './fault-scenarios.js';

const WORD = 0x0123456789abcdefn;
const ADDEND = 0x1111111122222222n;
const SWAP = 0x0fedcba987654321n;
const PAYLOAD = 0x8877665544332211n;
const IMM = 0x12345678;
/** Not a multiple of 8: IBTA o9-21 wants naturally aligned atomics. */
const MISALIGNED = 12;

const ATOMIC_MR: readonly Access[] = [
  'LOCAL_WRITE',
  'REMOTE_READ',
  'REMOTE_WRITE',
  'REMOTE_ATOMIC',
];
const NO_ATOMIC_MR: readonly Access[] = ['LOCAL_WRITE', 'REMOTE_READ', 'REMOTE_WRITE'];

/** The responder's min_rnr_timer (IBTA Table 45 encoding 12: 0.64 ms), as the RNR NAK carries it. */
export const LINK_MIN_RNR_TIMER = 12;
/** The first PSN each side sends with: distinct, non-zero, not palindromes. */
export const LINK_REQUESTER_PSN = 0x12a5c3;
export const LINK_RESPONDER_PSN = 0x5c3a12;

interface LinkRow {
  readonly suffix: string;
  readonly title: string;
  readonly family: string;
  readonly wrs: readonly Operation[];
  /** Receives the responder posts before the requester posts (default: one per consumer). */
  readonly receives?: number;
  readonly initialAt?: number;
  readonly remoteAccess?: readonly Access[];
  readonly rnrRetry?: number;
  /** `ex`: the ibv_wr_* API (librxe checks atomic alignment only on ibv_post_send). */
  readonly postPath?: 'legacy' | 'ex';
}

/** The receives the program's requests consume, in post order (operations.ts). */
function receivesFor(wrs: readonly Operation[]): ReceiveUse[] {
  return wrs.flatMap((w) => {
    const use = traitsOf(w.kind).consumesReceive;
    return use === null ? [] : [use];
  });
}

function programOf(row: LinkRow): Step[] {
  const uses = receivesFor(row.wrs);
  const receives = row.receives ?? uses.length;
  return [
    ...Array.from(
      { length: receives },
      (_, i): Step => ({
        do: 'post-recv',
        for: uses[i] ?? 'send',
      }),
    ),
    { do: 'post-send', wrs: row.wrs },
    { do: 'wait', side: 'requester', count: row.wrs.length },
  ];
}

function linkScenario(device: 'rxe0' | 'siw0', row: LinkRow): Scenario {
  return {
    id: `link-${device === 'rxe0' ? 'rxe' : 'siw'}-${row.suffix}${row.postPath === 'ex' ? '-ex' : ''}`,
    name: `link-${row.suffix}`,
    title: `${row.title}${row.postPath === 'ex' ? ', ibv_wr_*' : ''} (across the link)`,
    family: row.family,
    device,
    postPath: row.postPath ?? 'legacy',
    initial: WORD,
    ...(row.initialAt === undefined ? {} : { initialAt: row.initialAt }),
    remoteAccess: row.remoteAccess ?? ATOMIC_MR,
    ...(row.rnrRetry === undefined ? {} : { rnrRetry: row.rnrRetry }),
    program: programOf(row),
    captureWire: true,
  };
}

const FETCH_ADD: Operation = { kind: 'ATOMIC_FETCH_AND_ADD', add: ADDEND };

/** RoCEv2 on rxe0: every header kind, every AETH syndrome kind a single request can draw. */
const RXE_ROWS: readonly LinkRow[] = [
  { suffix: 'fetch-add', title: 'FetchAdd', family: 'link-atomics', wrs: [FETCH_ADD] },
  {
    suffix: 'cmp-swap',
    title: 'CmpSwap, compare matches',
    family: 'link-atomics',
    wrs: [{ kind: 'ATOMIC_CMP_AND_SWP', compare: WORD, swap: SWAP }],
  },
  {
    suffix: 'atomic-pair',
    title: 'FetchAdd then CmpSwap on the sum, one post (PSN sequence)',
    family: 'link-atomics',
    wrs: [FETCH_ADD, { kind: 'ATOMIC_CMP_AND_SWP', compare: WORD + ADDEND, swap: SWAP }],
  },
  {
    suffix: 'write',
    title: 'RDMA Write of 16 bytes',
    family: 'link-basic',
    wrs: [{ kind: 'RDMA_WRITE', payload: PAYLOAD, length: 16 }],
  },
  {
    suffix: 'write-imm',
    title: 'RDMA Write with immediate',
    family: 'link-immediate',
    wrs: [{ kind: 'RDMA_WRITE_WITH_IMM', payload: PAYLOAD, immData: IMM }],
  },
  {
    suffix: 'send-imm',
    title: 'Send with immediate',
    family: 'link-immediate',
    wrs: [{ kind: 'SEND_WITH_IMM', payload: PAYLOAD, immData: IMM }],
  },
  {
    suffix: 'send-solicited',
    title: 'Send with IBV_SEND_SOLICITED (BTH SE bit)',
    family: 'link-basic',
    wrs: [{ kind: 'SEND', payload: PAYLOAD, solicited: true }],
  },
  {
    suffix: 'read',
    title: 'RDMA Read of the target word',
    family: 'link-basic',
    wrs: [{ kind: 'RDMA_READ' }],
  },
  {
    suffix: 'atomic-bad-rkey',
    title: 'FetchAdd with an rkey never issued (NAK remote access error)',
    family: 'link-naks',
    wrs: [{ ...FETCH_ADD, rkey: 'invalid' }],
  },
  {
    suffix: 'write-bad-rkey',
    title: 'RDMA Write with an rkey never issued (NAK remote access error)',
    family: 'link-naks',
    wrs: [{ kind: 'RDMA_WRITE', payload: PAYLOAD, rkey: 'invalid' }],
  },
  {
    suffix: 'no-remote-atomic',
    title: 'FetchAdd on an MR without REMOTE_ATOMIC (NAK remote access error)',
    family: 'link-naks',
    remoteAccess: NO_ATOMIC_MR,
    wrs: [FETCH_ADD],
  },
  {
    suffix: 'misaligned',
    title: 'misaligned FetchAdd (NAK invalid request)',
    family: 'link-naks',
    // ibv_post_send refuses it in librxe (judge/records/rxe.ts librxe-atomic-alignment).
    postPath: 'ex',
    initialAt: MISALIGNED,
    wrs: [{ ...FETCH_ADD, target: MISALIGNED }],
  },
  {
    suffix: 'send-rnr',
    title: 'Send with no receive posted, rnr_retry 0 (RNR NAK)',
    family: 'link-naks',
    receives: 0,
    rnrRetry: 0,
    wrs: [{ kind: 'SEND', payload: PAYLOAD }],
  },
];

/** iWARP on siw0 (kernel TCP between the guests): what the one-guest suite captures on siw0. */
const SIW_ROWS: readonly LinkRow[] = [
  {
    suffix: 'write',
    title: 'RDMA Write',
    family: 'link-basic',
    wrs: [{ kind: 'RDMA_WRITE', payload: PAYLOAD }],
  },
  {
    suffix: 'send',
    title: 'Send',
    family: 'link-basic',
    wrs: [{ kind: 'SEND', payload: PAYLOAD }],
  },
  {
    suffix: 'send-solicited',
    title: 'Send with IBV_SEND_SOLICITED (Send with Solicited Event)',
    family: 'link-basic',
    wrs: [{ kind: 'SEND', payload: PAYLOAD, solicited: true }],
  },
  { suffix: 'read', title: 'RDMA Read', family: 'link-basic', wrs: [{ kind: 'RDMA_READ' }] },
  { suffix: 'fetch-add', title: 'FetchAdd', family: 'link-atomics', wrs: [FETCH_ADD] },
  {
    suffix: 'cmp-swap',
    title: 'CmpSwap, compare matches',
    family: 'link-atomics',
    wrs: [{ kind: 'ATOMIC_CMP_AND_SWP', compare: WORD, swap: SWAP }],
  },
  {
    suffix: 'write-imm',
    title: 'RDMA Write with immediate',
    family: 'link-immediate',
    wrs: [{ kind: 'RDMA_WRITE_WITH_IMM', payload: PAYLOAD, immData: IMM }],
  },
  {
    suffix: 'send-imm',
    title: 'Send with immediate',
    family: 'link-immediate',
    wrs: [{ kind: 'SEND_WITH_IMM', payload: PAYLOAD, immData: IMM }],
  },
];

export const LINK_SCENARIOS: readonly Scenario[] = [
  ...RXE_ROWS.map((row) => linkScenario('rxe0', row)),
  ...SIW_ROWS.map((row) => linkScenario('siw0', row)),
];

/** The link scenario with this id (the faulty-wire ones included), or undefined. */
export function linkScenarioById(id: string): Scenario | undefined {
  return [...LINK_SCENARIOS, ...FAULT_LINK_SCENARIOS].find((s) => s.id === id);
}
