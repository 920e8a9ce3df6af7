/**
 * Wire probes for a siw that speaks RFC 7306 (the patched siw.ko of patches/siw/ with
 * rfc7306=1): our userspace iWARP peer sends Atomic Requests and Immediate Data to a real
 * siw QP acting as Responder, and the reference engine, configured as an RNIC with the
 * extensions and the same memory, answers the same messages. Both answers are compared:
 * the messages sent back (wire lines), the target memory afterwards, and what a receive
 * got. The 64-bit values are not byte palindromes.
 */
import { makeAtomicRequest, makeImmediateData } from '../codec/iwarp/build.js';
import type { RdmapMessage } from '../codec/iwarp/messages.js';
import type { Access as AccessFlag } from '../verbs/mr.js';
import type { SiwTarget } from './siw-peer.js';

/** One side's answer, each part a string so that they compare and print as they are. */
export interface Rfc7306Answer {
  /** The messages sent back, one wire line each. */
  readonly wire: string;
  /** The target memory afterwards (hex of the whole MR). */
  readonly memory: string;
  /** The receive completion: `none`, or `ok bytes=<n> imm=<hex>|- data=<hex of 8>`. */
  readonly receive: string;
}

export interface Rfc7306Probe {
  readonly id: string;
  readonly title: string;
  /** Access flags of the siw MR (the engine registers the same buffer with the same). */
  readonly access: readonly AccessFlag[];
  /** Whether the siw QP (and the engine) have one receive posted for the whole MR. */
  readonly postReceive: boolean;
  /** The 64-bit word at the MR's first byte before the probe (host byte order). */
  readonly initialWord: bigint;
  /** The IRD siw accepts the connection with (and the engine's). */
  readonly ird: number;
  readonly messages: (target: SiwTarget) => readonly RdmapMessage[];
}

const ATOMIC_TARGET: readonly AccessFlag[] = ['LOCAL_WRITE', 'REMOTE_ATOMIC'];
const INITIAL = 0x0123456789abcdefn;

const fetchAdd = (
  target: SiwTarget,
  msn: number,
  fields: { add: bigint; mask?: bigint; offset?: bigint },
): RdmapMessage =>
  makeAtomicRequest({
    operation: 'fetch-add',
    messageSequenceNumber: msn,
    requestIdentifier: 0x0a0b0c00 + msn,
    remoteSTag: target.stag,
    remoteTaggedOffset: target.address + (fields.offset ?? 0n),
    addOrSwapData: fields.add,
    ...(fields.mask === undefined ? {} : { addOrSwapMask: fields.mask }),
  });

export const RFC7306_PROBES: readonly Rfc7306Probe[] = [
  {
    id: 'siw-rfc7306-fetch-add',
    title: 'FetchAdd, Add Mask 0 (the verbs FETCH_AND_ADD): one 64-bit addition',
    access: ATOMIC_TARGET,
    postReceive: false,
    initialWord: INITIAL,
    ird: 4,
    messages: (t) => [fetchAdd(t, 1, { add: 0x1111111122222222n })],
  },
  {
    id: 'siw-rfc7306-fetch-add-masked',
    title: 'masked FetchAdd: two 32-bit fields, the carry out of the low one discarded (§5.1.1)',
    access: ATOMIC_TARGET,
    postReceive: false,
    initialWord: 0x00000001ffffffffn,
    ird: 4,
    messages: (t) => [fetchAdd(t, 1, { add: 0x0000000300000002n, mask: 0x8000000080000000n })],
  },
  {
    id: 'siw-rfc7306-cmp-swap-masked',
    title: 'masked CmpSwap: the low half compares equal, the Swap Mask replaces two 16-bit lanes',
    access: ATOMIC_TARGET,
    postReceive: false,
    initialWord: INITIAL,
    ird: 4,
    messages: (t) => [
      makeAtomicRequest({
        operation: 'cmp-swap',
        messageSequenceNumber: 1,
        requestIdentifier: 0x1a2b3c4d,
        remoteSTag: t.stag,
        remoteTaggedOffset: t.address,
        compareData: 0xfedcba9889abcdefn,
        compareMask: 0x00000000ffffffffn,
        addOrSwapData: 0x1122334455667788n,
        addOrSwapMask: 0xffff0000ffff0000n,
      }),
    ],
  },
  {
    id: 'siw-rfc7306-cmp-swap-miss',
    title: 'CmpSwap that does not compare equal: memory untouched, the original returned',
    access: ATOMIC_TARGET,
    postReceive: false,
    initialWord: INITIAL,
    ird: 4,
    messages: (t) => [
      makeAtomicRequest({
        operation: 'cmp-swap',
        messageSequenceNumber: 1,
        requestIdentifier: 0x1a2b3c4e,
        remoteSTag: t.stag,
        remoteTaggedOffset: t.address,
        compareData: 0x0123456789abcdeen,
        addOrSwapData: 0x1122334455667788n,
      }),
    ],
  },
  {
    id: 'siw-rfc7306-two-atomics-in-order',
    title: 'two FetchAdds back to back: two Atomic Responses in request order (§5.2.2)',
    access: ATOMIC_TARGET,
    postReceive: false,
    initialWord: INITIAL,
    ird: 4,
    messages: (t) => [
      fetchAdd(t, 1, { add: 0x0000000100000001n }),
      fetchAdd(t, 2, { add: 0x0000001000000010n }),
    ],
  },
  {
    id: 'siw-rfc7306-atomic-misaligned',
    title: 'FetchAdd on an address that is not 64-bit aligned: Terminate, memory untouched (§8.2)',
    access: ATOMIC_TARGET,
    postReceive: false,
    initialWord: INITIAL,
    ird: 4,
    messages: (t) => [fetchAdd(t, 1, { add: 0x1111111122222222n, offset: 4n })],
  },
  {
    id: 'siw-rfc7306-atomic-unauthorised',
    title: 'FetchAdd on a region without Remote Atomic access: Remote Protection Error',
    access: ['LOCAL_WRITE', 'REMOTE_WRITE', 'REMOTE_READ'],
    postReceive: false,
    initialWord: INITIAL,
    ird: 4,
    messages: (t) => [fetchAdd(t, 1, { add: 0x1111111122222222n })],
  },
  {
    id: 'siw-rfc7306-atomic-ird-overflow',
    title: 'IRD 1 and three Atomic Requests at once: more requests than the IRD (§5.2)',
    access: ATOMIC_TARGET,
    postReceive: false,
    initialWord: INITIAL,
    ird: 1,
    messages: (t) => [
      fetchAdd(t, 1, { add: 1n }),
      fetchAdd(t, 2, { add: 2n }),
      fetchAdd(t, 3, { add: 3n }),
    ],
  },
  {
    id: 'siw-rfc7306-immediate-with-receive',
    title: 'Immediate Data with a receive posted: the receive completes with the 8 bytes',
    access: ['LOCAL_WRITE'],
    postReceive: true,
    initialWord: 0n,
    ird: 4,
    messages: () => [
      makeImmediateData({ messageSequenceNumber: 1, immediateData: 0x0123456789abcdefn }),
    ],
  },
  {
    id: 'siw-rfc7306-immediate-se-with-receive',
    title: 'Immediate Data with SE with a receive posted',
    access: ['LOCAL_WRITE'],
    postReceive: true,
    initialWord: 0n,
    ird: 4,
    messages: () => [
      makeImmediateData({
        messageSequenceNumber: 1,
        immediateData: 0x00000000cafe1234n,
        solicitedEvent: true,
      }),
    ],
  },
  {
    id: 'siw-rfc7306-immediate-no-receive',
    title: 'Immediate Data without a receive: DDP Untagged Buffer Error, no buffer (§6.3)',
    access: ['LOCAL_WRITE'],
    postReceive: false,
    initialWord: 0n,
    ird: 4,
    messages: () => [
      makeImmediateData({ messageSequenceNumber: 1, immediateData: 0x0123456789abcdefn }),
    ],
  },
];
