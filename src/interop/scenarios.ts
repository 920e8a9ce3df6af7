/**
 * The interop scenarios, as data. Values are exact 64-bit numbers that are not byte
 * palindromes, so that a byte-order slip anywhere (wire, memory, completion) shows.
 */
import type { Scenario, ScenarioOperation } from './scenario.js';

const WORD = 0x0123456789abcdefn;
const ADDEND = 0x1111111122222222n;
/** WORD + WRAPPING_ADDEND = 2^64: the sum wraps to exactly zero. */
const WRAPPING_ADDEND = 0xfedcba9876543211n;
const SWAP = 0x0fedcba987654321n;
const PAYLOAD = 0x8877665544332211n;
const IMM = 0x12345678;

const ATOMIC_MR = ['LOCAL_WRITE', 'REMOTE_READ', 'REMOTE_WRITE', 'REMOTE_ATOMIC'] as const;
const NO_ATOMIC_MR = ['LOCAL_WRITE', 'REMOTE_READ', 'REMOTE_WRITE'] as const;
const ALIGNED = 8;
/** Not a multiple of 8: RFC 7306 §5.1 and IBTA o9-21 want naturally aligned atomics. */
const MISALIGNED = 12;

/** The operations every device is asked to do: [id suffix, title, operation]. */
const COMMON_OPERATIONS: readonly (readonly [string, string, ScenarioOperation])[] = [
  ['write', 'RDMA Write', { kind: 'RDMA_WRITE', payload: PAYLOAD }],
  ['send', 'Send', { kind: 'SEND', payload: PAYLOAD }],
  ['read', 'RDMA Read', { kind: 'RDMA_READ' }],
  ['fetch-add', 'FetchAdd', { kind: 'FETCH_AND_ADD', add: ADDEND }],
  ['fetch-add-wrap', 'FetchAdd wrapping at 2^64', { kind: 'FETCH_AND_ADD', add: WRAPPING_ADDEND }],
  [
    'cmp-swap-match',
    'CmpSwap, compare matches',
    { kind: 'CMP_AND_SWP', compare: WORD, swap: SWAP },
  ],
  [
    'cmp-swap-mismatch',
    'CmpSwap, compare differs in one bit',
    { kind: 'CMP_AND_SWP', compare: WORD ^ 1n, swap: SWAP },
  ],
  [
    'write-imm',
    'RDMA Write with Immediate',
    { kind: 'RDMA_WRITE_WITH_IMM', payload: PAYLOAD, imm: IMM },
  ],
  ['send-imm', 'Send with Immediate', { kind: 'SEND_WITH_IMM', payload: PAYLOAD, imm: IMM }],
];

function forDevice(device: 'rxe0' | 'siw0', prefix: string): Scenario[] {
  return COMMON_OPERATIONS.map(([suffix, title, operation]) => ({
    id: `${prefix}-${suffix}`,
    title,
    device,
    postPath: 'legacy',
    operation,
    initial: WORD,
    remoteOffset: ALIGNED,
    remoteAccess: ATOMIC_MR,
    // Only siw traffic can be captured: rxe loops QP-to-QP traffic back internally.
    captureWire: device === 'siw0',
  }));
}

const FETCH_ADD: ScenarioOperation = { kind: 'FETCH_AND_ADD', add: ADDEND };

/** Error paths, and the second post API, that only a device accepting atomics can reach. */
const RXE_ATOMIC_PATHS: Scenario[] = (
  [
    ['rxe-fetch-add-ex', 'FetchAdd through ibv_wr_*', 'ex', ALIGNED, ATOMIC_MR],
    [
      'rxe-misaligned-legacy',
      'misaligned FetchAdd, ibv_post_send',
      'legacy',
      MISALIGNED,
      ATOMIC_MR,
    ],
    ['rxe-misaligned-ex', 'misaligned FetchAdd, ibv_wr_*', 'ex', MISALIGNED, ATOMIC_MR],
    [
      'rxe-no-remote-atomic',
      'FetchAdd on an MR without REMOTE_ATOMIC',
      'legacy',
      ALIGNED,
      NO_ATOMIC_MR,
    ],
  ] as const
).map(([id, title, postPath, remoteOffset, remoteAccess]) => ({
  id,
  title,
  device: 'rxe0',
  postPath,
  operation: FETCH_ADD,
  initial: WORD,
  remoteOffset,
  remoteAccess,
  captureWire: false,
}));

/** Every scenario, rxe first (the faster device to fail on), then siw. */
export const SCENARIOS: readonly Scenario[] = [
  ...forDevice('rxe0', 'rxe'),
  ...RXE_ATOMIC_PATHS,
  ...forDevice('siw0', 'siw'),
];
