/**
 * The interop scenarios, as data. Values are exact 64-bit numbers that are not byte
 * palindromes, so that a byte-order slip anywhere (wire, memory, completion) shows.
 */
import type { Scenario } from './scenario.js';

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

function forDevice(device: 'rxe0' | 'siw0', prefix: string): Scenario[] {
  const captureWire = device === 'siw0';
  const common = {
    device,
    postPath: 'legacy',
    initial: WORD,
    remoteAccess: ATOMIC_MR,
    captureWire,
  } as const;
  return [
    {
      ...common,
      id: `${prefix}-write`,
      title: 'RDMA Write',
      operation: { kind: 'RDMA_WRITE', payload: PAYLOAD },
      remoteOffset: ALIGNED,
    },
    {
      ...common,
      id: `${prefix}-send`,
      title: 'Send',
      operation: { kind: 'SEND', payload: PAYLOAD },
      remoteOffset: ALIGNED,
    },
    {
      ...common,
      id: `${prefix}-read`,
      title: 'RDMA Read',
      operation: { kind: 'RDMA_READ' },
      remoteOffset: ALIGNED,
    },
    {
      id: `${prefix}-fetch-add`,
      title: 'FetchAdd',
      device,
      postPath: 'legacy',
      operation: { kind: 'FETCH_AND_ADD', add: ADDEND },
      initial: WORD,
      remoteOffset: ALIGNED,
      remoteAccess: ATOMIC_MR,
      captureWire,
    },
    {
      id: `${prefix}-fetch-add-wrap`,
      title: 'FetchAdd wrapping at 2^64',
      device,
      postPath: 'legacy',
      operation: { kind: 'FETCH_AND_ADD', add: WRAPPING_ADDEND },
      initial: WORD,
      remoteOffset: ALIGNED,
      remoteAccess: ATOMIC_MR,
      captureWire,
    },
    {
      id: `${prefix}-cmp-swap-match`,
      title: 'CmpSwap, compare matches',
      device,
      postPath: 'legacy',
      operation: { kind: 'CMP_AND_SWP', compare: WORD, swap: SWAP },
      initial: WORD,
      remoteOffset: ALIGNED,
      remoteAccess: ATOMIC_MR,
      captureWire,
    },
    {
      id: `${prefix}-cmp-swap-mismatch`,
      title: 'CmpSwap, compare differs in one bit',
      device,
      postPath: 'legacy',
      operation: { kind: 'CMP_AND_SWP', compare: WORD ^ 1n, swap: SWAP },
      initial: WORD,
      remoteOffset: ALIGNED,
      remoteAccess: ATOMIC_MR,
      captureWire,
    },
    {
      id: `${prefix}-write-imm`,
      title: 'RDMA Write with Immediate',
      device,
      postPath: 'legacy',
      operation: { kind: 'RDMA_WRITE_WITH_IMM', payload: PAYLOAD, imm: IMM },
      initial: WORD,
      remoteOffset: ALIGNED,
      remoteAccess: ATOMIC_MR,
      captureWire,
    },
    {
      id: `${prefix}-send-imm`,
      title: 'Send with Immediate',
      device,
      postPath: 'legacy',
      operation: { kind: 'SEND_WITH_IMM', payload: PAYLOAD, imm: IMM },
      initial: WORD,
      remoteOffset: ALIGNED,
      remoteAccess: ATOMIC_MR,
      captureWire,
    },
  ];
}

/** Error paths that only a device that accepts atomics can reach. */
const RXE_ERRORS: Scenario[] = [
  {
    id: 'rxe-fetch-add-ex',
    title: 'FetchAdd through ibv_wr_*',
    device: 'rxe0',
    postPath: 'ex',
    operation: { kind: 'FETCH_AND_ADD', add: ADDEND },
    initial: WORD,
    remoteOffset: ALIGNED,
    remoteAccess: ATOMIC_MR,
    captureWire: false,
  },
  {
    id: 'rxe-misaligned-legacy',
    title: 'misaligned FetchAdd, ibv_post_send',
    device: 'rxe0',
    postPath: 'legacy',
    operation: { kind: 'FETCH_AND_ADD', add: ADDEND },
    initial: WORD,
    remoteOffset: MISALIGNED,
    remoteAccess: ATOMIC_MR,
    captureWire: false,
  },
  {
    id: 'rxe-misaligned-ex',
    title: 'misaligned FetchAdd, ibv_wr_*',
    device: 'rxe0',
    postPath: 'ex',
    operation: { kind: 'FETCH_AND_ADD', add: ADDEND },
    initial: WORD,
    remoteOffset: MISALIGNED,
    remoteAccess: ATOMIC_MR,
    captureWire: false,
  },
  {
    id: 'rxe-no-remote-atomic',
    title: 'FetchAdd on an MR without REMOTE_ATOMIC',
    device: 'rxe0',
    postPath: 'legacy',
    operation: { kind: 'FETCH_AND_ADD', add: ADDEND },
    initial: WORD,
    remoteOffset: ALIGNED,
    remoteAccess: NO_ATOMIC_MR,
    captureWire: false,
  },
];

/** Every scenario, rxe first (the faster device to fail on), then siw. */
export const SCENARIOS: readonly Scenario[] = [
  ...forDevice('rxe0', 'rxe'),
  ...RXE_ERRORS,
  ...forDevice('siw0', 'siw'),
];
