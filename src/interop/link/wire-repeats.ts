/**
 * What a faulty wire made the transports repeat, read from a link capture: RoCEv2 packets
 * sent again with the same PSN (IBTA 9.7.6: the requester retransmits after its local ACK
 * timeout or a NAK sequence error; the responder answers every duplicate), and, at the
 * responder's side of the relay, duplicate Atomic requests and whether each was answered
 * from the responder's saved result (IBTA 9.4.5 o9-28: a duplicate atomic is not executed
 * again; the AtomicAckETH repeats the original value). A duplicate answered with a
 * different original value would mean the Atomic ran twice.
 */
import { decodeFrame } from '../../codec/net/frame.js';
import { decodeCapture } from '../../codec/pcap/capture.js';
import type { LinkCapture, LinkPeers } from './observed.js';

export interface WireRepeats {
  readonly requests: number;
  /** Request packets whose QP, PSN and opcode came before. */
  readonly repeatedRequests: number;
  readonly responses: number;
  readonly repeatedResponses: number;
  /** Atomic requests (AtomicETH) whose QP and PSN came before. */
  readonly duplicateAtomics: number;
  /** Of those PSNs: answered at least twice, every AtomicAckETH with the same original value. */
  readonly answeredFromSavedResult: number;
  /** Of those PSNs: AtomicAckETHs with different original values (executed twice). */
  readonly answeredDifferently: number;
}

export const NO_REPEATS: WireRepeats = {
  requests: 0,
  repeatedRequests: 0,
  responses: 0,
  repeatedResponses: 0,
  duplicateAtomics: 0,
  answeredFromSavedResult: 0,
  answeredDifferently: 0,
};

/**
 * The repeats of the QP pairs `qps` ([requester QPN, responder QPN] each) in `capture`:
 * requests come from `peers.requester` to a responder QP, responses the other way.
 */
export function wireRepeats(
  capture: LinkCapture,
  qps: readonly (readonly [number, number])[],
  peers: LinkPeers,
): WireRepeats {
  const requesterQps = new Set(qps.map(([r]) => r));
  const responderQps = new Set(qps.map(([, r]) => r));
  const seenRequests = new Set<string>();
  const seenResponses = new Set<string>();
  const duplicateAtomicPsns = new Set<string>();
  /** Original values each atomic PSN was answered with. */
  const originals = new Map<string, bigint[]>();
  let requests = 0;
  let repeatedRequests = 0;
  let responses = 0;
  let repeatedResponses = 0;
  let duplicateAtomics = 0;
  for (const item of capture.decoded.items) {
    if (item.kind !== 'roce' || !item.packet.ok) continue;
    const source = String(item.frame.network?.header.source ?? '');
    const packet = item.packet.value;
    const qp = packet.bth.destinationQp;
    const psn = `${qp}:${packet.bth.psn}`;
    const key = `${psn}:${packet.bth.opcode}`;
    if (source === peers.requester && responderQps.has(qp)) {
      requests += 1;
      if (seenRequests.has(key)) {
        repeatedRequests += 1;
        if (packet.opcode.headers.includes('AtomicETH')) {
          duplicateAtomics += 1;
          duplicateAtomicPsns.add(psn);
        }
      }
      seenRequests.add(key);
    } else if (source === peers.responder && requesterQps.has(qp)) {
      responses += 1;
      if (seenResponses.has(key)) repeatedResponses += 1;
      seenResponses.add(key);
      const original = packet.headers.AtomicAckETH?.originalRemoteData;
      if (original !== undefined) {
        // Keyed by the requester's QP on the way back: map to the request's responder QP.
        const pair = qps.find(([r]) => r === qp);
        const requestPsn = `${pair?.[1] ?? -1}:${packet.bth.psn}`;
        originals.set(requestPsn, [...(originals.get(requestPsn) ?? []), original]);
      }
    }
  }
  let answeredFromSavedResult = 0;
  let answeredDifferently = 0;
  for (const psn of duplicateAtomicPsns) {
    const values = originals.get(psn) ?? [];
    // Answered once only (the duplicate met the request still in progress): neither.
    if (values.length < 2) continue;
    if (values.every((v) => v === values[0])) answeredFromSavedResult += 1;
    else answeredDifferently += 1;
  }
  return {
    requests,
    repeatedRequests,
    responses,
    repeatedResponses,
    duplicateAtomics,
    answeredFromSavedResult,
    answeredDifferently,
  };
}

/**
 * The TCP segments of siw's connections to B's listening `port` in a link capture, and
 * how many were retransmissions: a segment with data whose direction, sequence number and
 * length came before (RFC 9293 §3.8.1: TCP resends unacknowledged data from the same
 * sequence number; a duplicate the relay made counts too, at B's side). In WireRepeats'
 * terms, requests are A's segments to the port (A connects), responses B's back.
 */
export function tcpRepeats(capture: LinkCapture, port: number): WireRepeats {
  const file = decodeCapture(capture.bytes);
  const seen = new Set<string>();
  const counts = { requests: 0, repeatedRequests: 0, responses: 0, repeatedResponses: 0 };
  if (!file.ok) return NO_REPEATS;
  for (const record of file.value.records) {
    const frame = decodeFrame(record.linkType, record.data);
    const t = frame.ok ? frame.value.transport : undefined;
    if (!frame.ok || t?.kind !== 'tcp' || frame.value.payload.length === 0) continue;
    const toServer = t.header.destinationPort === port;
    if (!toServer && t.header.sourcePort !== port) continue;
    const key = `${t.header.sourcePort}>${t.header.destinationPort}:${t.header.sequenceNumber}:${frame.value.payload.length}`;
    const repeated = seen.has(key);
    seen.add(key);
    if (toServer) {
      counts.requests += 1;
      if (repeated) counts.repeatedRequests += 1;
    } else {
      counts.responses += 1;
      if (repeated) counts.repeatedResponses += 1;
    }
  }
  return { ...NO_REPEATS, ...counts };
}
