/**
 * Ordering (RFC 7306 §7 sequences in one post list) and concurrency (several QPs on one
 * word).
 */
import { ADDEND, FETCH_ADD, IMM, PAYLOAD, type Row, SWAP, WORD } from './family.js';

/**
 * How long an ordering program waits for each completion: libsiw silently drops the second
 * request of a list it cannot carry (libsiw-list-refusal-lost), whose completion never comes.
 */
export const ORDERING_WAIT_MS = 3000;

/** RFC 7306 §7 sequences, in one post list; the trace is judged by the ordering checker. */
export const ORDERING: readonly Row[] = [
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

/** Several QPs hammering one word, in the suite's process or one process each. */
export const CONCURRENCY: readonly Row[] = [
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
