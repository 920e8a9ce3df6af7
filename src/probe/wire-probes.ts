/**
 * Wire probes: RDMAP messages that our own userspace iWARP peer sends to a real siw QP,
 * built with the codec. RFC 7306 §1.1 says how a peer without the extensions answers an
 * extension message (a capability probe): a Terminate. The same message goes through
 * the reference engine configured as such a peer, and the two answers are compared.
 * `run` sent them until issue 31; they are the tester's assertions of the same ids now
 * (iwarp-assertions.ts, `rdma-interop probe --assertion 'siw-probe-*'`).
 */

import { makeAtomicRequest, makeImmediateData, makeSend } from '../codec/iwarp/index.js';
import type { RdmapMessage } from '../codec/iwarp/messages.js';

export interface WireProbe {
  readonly id: string;
  readonly title: string;
  /** The message our peer sends as its first FPDU after the MPA exchange. */
  readonly message: RdmapMessage;
}

/** The 64-bit values are not byte palindromes, as everywhere in the suite. */
export const WIRE_PROBES: readonly WireProbe[] = [
  {
    id: 'siw-probe-atomic-request',
    title: 'RFC 7306 Atomic Request (FetchAdd) to siw',
    message: makeAtomicRequest({
      operation: 'fetch-add',
      messageSequenceNumber: 1,
      requestIdentifier: 0x0a0b0c0d,
      remoteSTag: 0x1a2b3c4d,
      remoteTaggedOffset: 0x0123456789abcde8n,
      addOrSwapData: 0x1111111122222222n,
    }),
  },
  {
    id: 'siw-probe-immediate-data',
    title: 'RFC 7306 Immediate Data to siw',
    message: makeImmediateData({ messageSequenceNumber: 1, immediateData: 0x0123456789abcdefn }),
  },
  {
    id: 'siw-probe-send',
    title: 'RFC 5040 Send to siw (control: no Terminate)',
    message: makeSend({
      messageSequenceNumber: 1,
      payload: Uint8Array.of(0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11),
    }),
  },
];
