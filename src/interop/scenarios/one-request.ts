/**
 * One request per program: the first suite's operations, the atomics (RFC 7306 §5, IBTA
 * o9-21) and their errors, and the immediate-data operations.
 */
import {
  ADDEND,
  FETCH_ADD,
  failing,
  IMM,
  LAST_WORD,
  MISALIGNED,
  NO_ATOMIC_MR,
  NO_ATOMIC_QP,
  PAST_END,
  PAYLOAD,
  type Row,
  SWAP,
  single,
  WORD,
  WRAPPING_ADDEND,
} from './family.js';

/** One operation of each kind, as the first suite had them. */
export const BASIC: readonly Row[] = [
  {
    suffix: 'write',
    title: 'RDMA Write',
    program: single({ kind: 'RDMA_WRITE', payload: PAYLOAD }),
  },
  { suffix: 'send', title: 'Send', program: single({ kind: 'SEND', payload: PAYLOAD }) },
  { suffix: 'read', title: 'RDMA Read', program: single({ kind: 'RDMA_READ' }) },
];

export const ATOMICS: readonly Row[] = [
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

export const ATOMIC_ERRORS: readonly Row[] = [
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

export const IMMEDIATE: readonly Row[] = [
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
