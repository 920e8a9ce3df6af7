/**
 * RoCE responder assertions: the tester plays the requester towards an rxe QP, packet by
 * packet, and the device's answers, memory and QP state are compared after each step with
 * what the engine's RC responder rules (src/engine/roce/rc-responder.ts) predict for the
 * same packets. Nothing here states an expected answer: only the packets.
 */
import { psnAdd } from '../engine/roce/rc-responder.js';
import type { Assertion } from './assertion.js';
import { build, type RoceTarget, rawBth, type TesterPacket } from './roce-packets.js';

/** How the device QP is set up before the packets. */
export interface RoceQpSetup {
  /** Leave the QP in RESET or INIT, or move it to ERR after connecting; default RTS. */
  readonly state?: 'RESET' | 'INIT' | 'ERR';
  /** Receive buffers posted (lengths); default none. */
  readonly receives?: readonly number[];
  /** The responder's min_rnr_timer code; default 14. */
  readonly minRnrTimer?: number;
  /** The responder's max_dest_rd_atomic (saved Read and Atomic results); default 16. */
  readonly maxDestRdAtomic?: number;
  /**
   * Register the MR and the QP with FLUSH_GLOBAL (IBTA 1.5 FLUSH), where the line has it
   * (rxe from 6.2); default not.
   */
  readonly flush?: boolean;
}

/** What a step's builder gets: the target, the tester's first PSN. */
export interface RoceStepContext extends RoceTarget {
  readonly psn: number;
}

/** A RoCE assertion where the tester is the requester. */
export interface RoceResponderAssertion extends Assertion {
  readonly testerRole: 'requester';
  readonly setup?: RoceQpSetup;
  /** The packets, step by step; answers and memory are compared after each step. */
  readonly steps: (c: RoceStepContext) => readonly (readonly TesterPacket[])[];
}

const bytes = (...values: number[]): Uint8Array => Uint8Array.from(values);
/** Data that is not a byte palindrome, so a misplaced or reversed copy shows. */
const DATA_A = bytes(
  0x11,
  0x22,
  0x33,
  0x44,
  0x55,
  0x66,
  0x77,
  0x88,
  0x99,
  0xaa,
  0xbb,
  0xcc,
  0xdd,
  0xee,
  0xf0,
  0x0f,
);
const DATA_B = bytes(
  0xa1,
  0xb2,
  0xc3,
  0xd4,
  0xe5,
  0xf6,
  0x07,
  0x18,
  0x29,
  0x3a,
  0x4b,
  0x5c,
  0x6d,
  0x7e,
  0x8f,
  0x90,
);
const ADD = 0x0102_0304_0506_0708n;
/**
 * Half the 24-bit PSN space: the IBTA Vol. 1 (§9.7, the PSN rules) limits a send queue to
 * 2^23 outstanding PSNs so that the responder can split the space in two, "the valid
 * region and the invalid region": the 2^23 PSNs behind the expected one (duplicates,
 * §9.7.5.1.3) and the 2^23 from it on (the expected PSN, then out of sequence, §9.7.5.1.2).
 */
const PSN_HALF = 0x80_0000;

const base = { provider: 'rxe', testerRole: 'requester' } as const;

/** 2^64: an address this close below it plus a DMA Length wraps to a small u64. */
const WRAP_VA = 1n << 64n;

/**
 * The rxe receive-path fix of 2026 the VA-wrap rows reproduce: `mr_check_range()` (rxe_mr.c)
 * compared `iova + length` with the region's end in u64, so an address plus length that
 * wraps passed (6.12.95 still has that form); 7.3.4 compares `iova - mr->ibmr.iova` with
 * `mr->ibmr.length - length` instead.
 */
export const RXE_2026_FIXES = {
  mrCheckRangeOverflow: {
    title: 'RDMA/rxe: mr_check_range() integer overflow (an iova + length that wraps 2^64 passed)',
  },
} as const;

export const ROCE_RESPONDER_ASSERTIONS: readonly RoceResponderAssertion[] = [
  {
    ...base,
    id: 'roce-responder-write-acknowledged',
    spec: 'IBTA Vol. 1 §9.7.5.1 (ACK), §9.4.3 (RDMA WRITE)',
    title: 'a Write ONLY at the expected PSN is placed and acknowledged',
    hostile: false,
    steps: (c) => [[build.write(c, c.psn, 0, DATA_A)]],
  },
  {
    ...base,
    id: 'roce-responder-duplicate-write',
    spec: 'IBTA Vol. 1 §9.7.5.1.3 (duplicate requests), C9-121',
    title: 'a duplicate Write is acknowledged and not placed again',
    hostile: false,
    steps: (c) => [[build.write(c, c.psn, 0, DATA_A)], [build.write(c, c.psn, 0, DATA_B)]],
  },
  {
    ...base,
    id: 'roce-responder-duplicate-send',
    spec: 'IBTA Vol. 1 §9.7.5.1.3 (duplicate requests)',
    title: 'a duplicate Send is acknowledged and consumes no second receive',
    hostile: false,
    setup: { receives: [64, 64] },
    steps: (c) => [[build.send(c, c.psn, DATA_A)], [build.send(c, c.psn, DATA_B)]],
  },
  {
    ...base,
    id: 'roce-responder-duplicate-atomic',
    spec: 'IBTA Vol. 1 §9.7.5.1.3, C9-121 (an Atomic is not executed twice)',
    title: 'a duplicate FetchAdd is answered from the saved result, memory added once',
    hostile: false,
    steps: (c) => [[build.fetchAdd(c, c.psn, 8, ADD)], [build.fetchAdd(c, c.psn, 8, ADD)]],
  },
  {
    ...base,
    id: 'roce-responder-duplicate-read',
    spec: 'IBTA Vol. 1 §9.7.5.1.3 (a duplicate Read is executed again)',
    title: 'a duplicate Read returns the memory as it is now',
    hostile: false,
    steps: (c) => [
      [build.read(c, c.psn, 0, 16)],
      [build.write(c, psnAdd(c.psn, 1), 0, DATA_B)],
      [build.read(c, c.psn, 0, 16)],
    ],
  },
  {
    ...base,
    id: 'roce-responder-atomic-beyond-max-dest-rd-atomic',
    spec: 'IBTA Vol. 1 §9.7.5.1.3, C9-121 (duplicates answered from the saved results), §9.4.5',
    title:
      'with max_dest_rd_atomic 1, two FetchAdds: the duplicate of the newer is replayed, the older one no longer kept is dropped',
    hostile: false,
    setup: { maxDestRdAtomic: 1 },
    steps: (c) => [
      [build.fetchAdd(c, c.psn, 8, ADD)],
      [build.fetchAdd(c, psnAdd(c.psn, 1), 16, ADD)],
      [build.fetchAdd(c, psnAdd(c.psn, 1), 16, ADD)],
      [build.fetchAdd(c, c.psn, 8, ADD)],
    ],
  },
  {
    ...base,
    id: 'roce-responder-psn-ahead-one-nak',
    spec: 'IBTA Vol. 1 §9.7.5.2.1 (PSN Sequence Error), C9-113',
    title:
      'PSNs ahead of the expected one get one PSN Sequence Error NAK, then the expected PSN works',
    hostile: true,
    steps: (c) => [
      [build.write(c, psnAdd(c.psn, 2), 0, DATA_A), build.write(c, psnAdd(c.psn, 3), 0, DATA_B)],
      [build.write(c, c.psn, 16, DATA_B)],
    ],
  },
  {
    ...base,
    id: 'roce-responder-psn-far-behind',
    spec: 'IBTA Vol. 1 §9.7 (at most 2^23 PSNs outstanding: the valid and invalid regions), §9.7.5.1.2, §9.7.5.1.3 (duplicates: a Write acknowledged, C9-105; an Atomic with no saved result, C9-121)',
    title:
      'PSNs at the edges of the two halves: 2^23 behind is a duplicate (a Write acknowledged and not placed, a FetchAdd never executed dropped), 2^23 - 1 ahead one PSN Sequence Error NAK',
    hostile: true,
    // After the first Write the expected PSN is c.psn + 1.
    steps: (c) => [
      [build.write(c, c.psn, 0, DATA_A)],
      [build.write(c, psnAdd(c.psn, 1 + PSN_HALF), 16, DATA_B)],
      [build.write(c, psnAdd(c.psn, PSN_HALF), 16, DATA_B)],
      [build.fetchAdd(c, psnAdd(c.psn, 2 + PSN_HALF), 8, ADD)],
    ],
  },
  {
    ...base,
    id: 'roce-responder-read-far-behind',
    spec: 'IBTA Vol. 1 §9.7.5.1.3 (a duplicate Read is executed again), §9.7 (the valid region)',
    title:
      'a Read 2^23 PSNs behind the expected one, never executed, is a duplicate Read: executed (again)',
    hostile: true,
    steps: (c) => [
      [build.write(c, c.psn, 0, DATA_A)],
      [build.read(c, psnAdd(c.psn, 1 + PSN_HALF), 0, 16)],
    ],
  },
  {
    ...base,
    id: 'roce-responder-middle-without-first',
    spec: 'IBTA Vol. 1 §9.7.5.1.4 (opcode sequence), §9.7.5.2.2 (Invalid Request)',
    title: 'an RDMA WRITE MIDDLE with no FIRST is an opcode sequence error',
    hostile: true,
    steps: (c) => [
      [
        build.write(c, c.psn, 0, new Uint8Array(1024).fill(0x5a), {
          opcode: 'RC_RDMA_WRITE_MIDDLE',
        }),
      ],
    ],
  },
  {
    ...base,
    id: 'roce-responder-payload-over-pmtu',
    spec: 'IBTA Vol. 1 §9.7.5.1.5 (length), C9-76',
    title: 'a Write ONLY whose payload exceeds the path MTU (1024) is refused',
    hostile: true,
    steps: (c) => [[build.write(c, c.psn, 0, new Uint8Array(1200).fill(0x3c))]],
  },
  {
    ...base,
    id: 'roce-responder-payload-beyond-reth',
    spec: 'IBTA Vol. 1 §9.7.5.1.5 (length), C9-76',
    title: 'a Write ONLY carrying more than its RETH DMA length is refused',
    hostile: true,
    steps: (c) => [[build.write(c, c.psn, 0, DATA_A, { dmaLength: 8 })]],
  },
  {
    ...base,
    id: 'roce-responder-pad-count-mismatch',
    spec: 'IBTA Vol. 1 §9.2 (PadCnt), §9.7.5.1.5 (length)',
    title: 'a Write ONLY whose PadCnt leaves fewer bytes than the RETH length is refused',
    hostile: true,
    steps: (c) => [
      [build.write(c, c.psn, 0, DATA_A.subarray(0, 13), { dmaLength: 16, padCount: 3 })],
    ],
  },
  {
    ...base,
    id: 'roce-responder-bad-icrc-dropped',
    spec: 'IBTA Vol. 1 Annex A17.3.3 (ICRC), §9.6 (a packet failing validation is dropped)',
    title: 'a bad ICRC is dropped silently and the next good packet works',
    hostile: true,
    steps: (c) => [
      [build.write(c, c.psn, 0, DATA_A, { icrcXor: 0x1 })],
      [build.write(c, c.psn, 0, DATA_B)],
    ],
  },
  {
    ...base,
    id: 'roce-responder-unknown-opcode-multicast',
    spec: 'IBTA Vol. 1 §9.6 (reserved opcode: dropped)',
    title:
      'one datagram with the reserved BTH opcode 0xff to the multicast QPN is dropped; the QP still works',
    hostile: true,
    regression: {
      title:
        'RDMA/rxe: Reject unknown opcodes before ICRC processing (KASAN out-of-bounds read in crc32_le, then panic)',
    },
    steps: (c) => {
      const transport = new Uint8Array(36);
      transport.set(rawBth(0xff, 0xffffff, c.psn), 0);
      return [
        [build.raw('opcode 0xff to QPN 0xffffff, 40-byte UDP payload', transport)],
        [build.write(c, c.psn, 0, DATA_A)],
      ];
    },
  },
  {
    ...base,
    id: 'roce-responder-unknown-opcode',
    spec: 'IBTA Vol. 1 §9.6 (reserved opcode: dropped)',
    title: 'a reserved RC opcode (0x1f) to the QP is dropped; the QP still works',
    hostile: true,
    steps: (c) => {
      const transport = new Uint8Array(28);
      transport.set(rawBth(0x1f, c.qpn, c.psn), 0);
      return [[build.raw('opcode 0x1f to the QP', transport)], [build.write(c, c.psn, 0, DATA_A)]];
    },
  },
  {
    ...base,
    id: 'roce-responder-wrong-transport-opcode',
    spec: 'IBTA Vol. 1 §9.6 (an opcode of another transport service is dropped)',
    title: 'a UD SEND ONLY to an RC QP is dropped',
    hostile: true,
    setup: { receives: [64] },
    steps: (c) => {
      const transport = new Uint8Array(12 + 8 + 16);
      transport.set(rawBth(0x64, c.qpn, c.psn), 0);
      return [
        [build.raw('UD_SEND_ONLY to an RC QP', transport)],
        [build.write(c, c.psn, 0, DATA_A)],
      ];
    },
  },
  {
    ...base,
    id: 'roce-responder-qp-reset',
    spec: 'IBTA Vol. 1 §10.3.1 (a QP in RESET drops packets)',
    title: 'a Write to a QP in RESET is dropped',
    hostile: true,
    setup: { state: 'RESET' },
    steps: (c) => [[build.write(c, c.psn, 0, DATA_A)]],
  },
  {
    ...base,
    id: 'roce-responder-qp-init',
    spec: 'IBTA Vol. 1 §10.3.1 (a QP in INIT drops packets)',
    title: 'a Write to a QP in INIT is dropped',
    hostile: true,
    setup: { state: 'INIT' },
    steps: (c) => [[build.write(c, c.psn, 0, DATA_A)]],
  },
  {
    ...base,
    id: 'roce-responder-qp-err',
    spec: 'IBTA Vol. 1 §10.3.1 (a QP in ERR drops packets)',
    title: 'a Write to a QP in ERR is dropped',
    hostile: true,
    setup: { state: 'ERR' },
    steps: (c) => [[build.write(c, c.psn, 0, DATA_A)]],
  },
  {
    ...base,
    id: 'roce-responder-unknown-qpn',
    spec: 'IBTA Vol. 1 §9.6 (no such QP: dropped)',
    title: 'a Write to a QPN that does not exist is dropped',
    hostile: true,
    steps: (c) => [[build.write({ ...c, qpn: (c.qpn + 0x100) & 0xffffff }, c.psn, 0, DATA_A)]],
  },
  {
    ...base,
    id: 'roce-responder-atomic-misaligned',
    spec: 'IBTA Vol. 1 o9-21 (atomics are 8-byte aligned), §9.7.5.2.2',
    title: 'a FetchAdd at an address that is not 8-byte aligned is an Invalid Request',
    hostile: true,
    steps: (c) => [[build.fetchAdd(c, c.psn, 4, ADD)]],
  },
  {
    ...base,
    id: 'roce-responder-atomic-write-zero-length',
    spec: 'IBTA 1.5 Annex A19, oA19-28 (ATOMIC WRITE is exactly 8 bytes)',
    title: 'a zero-length ATOMIC WRITE is refused and leaves the memory as it was',
    hostile: true,
    regression: {
      title: 'RDMA/rxe: Reject non-8-byte ATOMIC_WRITE payloads (kernel memory leaked into the MR)',
      cve: 'CVE-2026-46114',
    },
    steps: (c) => [[build.atomicWrite(c, c.psn, 8, new Uint8Array(0), 0)]],
  },
  {
    ...base,
    id: 'roce-responder-atomic-write-misaligned',
    spec: 'IBTA 1.5 Annex A19, o9-21 (8-byte aligned)',
    title: 'an ATOMIC WRITE at an address that is not 8-byte aligned is refused',
    hostile: true,
    steps: (c) => [[build.atomicWrite(c, c.psn, 4, DATA_A.subarray(0, 8), 8)]],
  },
  {
    ...base,
    id: 'roce-responder-flush-acknowledged',
    spec: 'IBTA 1.5 Annex A19 (FLUSH: FETH, RETH; answered by an RDMA READ Response without data), Vol. 1 Annex A17.3.3 (ICRC)',
    title:
      'a FLUSH (memory range, global visibility) with the standard ICRC to an MR with the FLUSH right is acknowledged, memory unchanged',
    hostile: false,
    setup: { flush: true },
    steps: (c) => [[build.flush(c, c.psn, 0, 16)]],
  },
  {
    ...base,
    id: 'roce-responder-va-wrap-write',
    spec: 'IBTA Vol. 1 §9.4.3 (RETH), C9-88 (the range lies within the region), §9.7.5.2.4 (remote access error)',
    title:
      'a Write whose VA + DMA Length wraps past 2^64 is NAKed (remote access error), nothing placed',
    hostile: true,
    regression: RXE_2026_FIXES.mrCheckRangeOverflow,
    steps: (c) => [[build.write({ ...c, va: WRAP_VA - 16n }, c.psn, 0, DATA_A)]],
  },
  {
    ...base,
    id: 'roce-responder-va-wrap-read',
    spec: 'IBTA Vol. 1 §9.4.4 (RDMA READ), C9-88, §9.7.5.2.4 (remote access error)',
    title:
      'a Read whose VA + DMA Length wraps past 2^64 is NAKed (remote access error), nothing read',
    hostile: true,
    regression: RXE_2026_FIXES.mrCheckRangeOverflow,
    steps: (c) => [[build.read({ ...c, va: WRAP_VA - 16n }, c.psn, 0, 64)]],
  },
  {
    ...base,
    id: 'roce-responder-va-wrap-atomic',
    spec: 'IBTA Vol. 1 §9.4.5 (ATOMIC), C9-88, §9.7.5.2.4 (remote access error)',
    title:
      'a FetchAdd at VA 2^64 - 8 (its 8 bytes end exactly at the wrap) is NAKed, memory unchanged',
    hostile: true,
    regression: RXE_2026_FIXES.mrCheckRangeOverflow,
    steps: (c) => [[build.fetchAdd({ ...c, va: WRAP_VA - 8n }, c.psn, 0, ADD)]],
  },
  {
    ...base,
    id: 'roce-responder-send-no-receive-rnr',
    spec: 'IBTA Vol. 1 §9.7.5.2.8 (RNR NAK), Table 45 (timer)',
    title: 'a Send with no receive posted gets an RNR NAK with the responder min_rnr_timer',
    hostile: false,
    setup: { minRnrTimer: 14 },
    steps: (c) => [[build.send(c, c.psn, DATA_A)]],
  },
  {
    ...base,
    id: 'roce-responder-write-imm-no-receive-rnr',
    spec: 'IBTA Vol. 1 §9.7.5.2.8 (RNR NAK), Table 45 (timer)',
    title: 'a Write with Immediate with no receive posted gets an RNR NAK with the min_rnr_timer',
    hostile: false,
    setup: { minRnrTimer: 9 },
    steps: (c) => [
      [build.write(c, c.psn, 0, DATA_A, { opcode: 'RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE' })],
    ],
  },
];
