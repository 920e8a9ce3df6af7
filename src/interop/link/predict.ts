/**
 * What the engine says a link scenario puts on the wire and shows the program.
 *
 * RoCEv2: the requests are the engine's own encoding (`workRequestToRoce`, IBTA §9.4),
 * starting at the requester's first PSN. The responses follow from the engine's run of
 * the same scenario (`projectRoce`): per request up to the first failure, IBTA §9.7.5.1
 * (one ACK per acknowledged message: Send, Write; §9.7.4.1.5 an RDMA READ Response
 * ONLY for a Read carrying the bytes; §9.7.4.1.6 an ATOMIC Acknowledge carrying the
 * original value the engine's atomic fetched), each with the request's PSN and the MSN
 * of completed messages (§9.7.5.1.2); at the failure the NAK the engine's failure table
 * names (IBTA Table 44; §9.7.5.2.8), or for a missing receive an RNR NAK with the
 * responder's min_rnr_timer (§9.7.5.2.8; the rnr_retry of 0 ends the exchange there).
 *
 * iWARP: the engine's message lines for the scenario (expected.ts), as the one-guest suite
 * compares them.
 */
import { AethNakCode, type AethSyndrome, encodeAethSyndrome } from '../../codec/roce/aeth.js';
import type { ExtensionHeaders } from '../../codec/roce/headers.js';
import { BthOpcode } from '../../codec/roce/opcodes.js';
import { projectRoce } from '../../engine/projection/project.js';
import { workRequestToRoce } from '../../engine/requester/to-roce.js';
import { ENGINE_REGIONS, expectedOutcome, verbsScenarioOf } from '../expected.js';
import { DEVICES, type Outcome, type Scenario } from '../scenario.js';
import { type RocePacketView, roceWireFields } from './roce-fields.js';
import { LINK_MIN_RNR_TIMER, LINK_REQUESTER_PSN } from './scenarios.js';

/** The engine's stand-in QP numbers (any distinct values; fields name QPs by role). */
export const ENGINE_QPS = { requester: 0x000111, responder: 0x000222 } as const;

const PSN_MASK = 0xff_ffff;
/** rxe's path MTU for the link QPs (connectRcByHand default). */
const MTU = 1024;

/** The verbs fields of the program the link observes (the rest of a program is not run). */
export const LINK_VERBS_FIELD =
  /^(post1(\.bad_wr)?|requester\.wc\d+\.(wr|status|fetched)|mem\[-?\d+\])$/;

function pick(fields: Readonly<Record<string, string>>, pattern: RegExp): Record<string, string> {
  return Object.fromEntries(Object.entries(fields).filter(([name]) => pattern.test(name)));
}

function response(
  opcode: keyof typeof BthOpcode,
  psn: number,
  syndrome: AethSyndrome,
  msn: number,
  extra: ExtensionHeaders = {},
  payload: Uint8Array = new Uint8Array(0),
): RocePacketView {
  return {
    opcode: BthOpcode[opcode],
    psn,
    destinationQp: ENGINE_QPS.requester,
    solicitedEvent: false,
    headers: { AETH: { syndrome: encodeAethSyndrome(syndrome), msn }, ...extra },
    aethSyndrome: syndrome,
    payload,
    icrc: 'valid',
  };
}

/** The RoCEv2 packets the engine predicts, both directions. */
export function predictRocePackets(scenario: Scenario): {
  requests: RocePacketView[];
  responses: RocePacketView[];
} {
  const verbs = verbsScenarioOf(scenario);
  const projected = projectRoce(verbs, ENGINE_QPS.responder);
  const state = { destinationQp: ENGINE_QPS.responder, psn: LINK_REQUESTER_PSN, mtu: MTU };
  const requests: RocePacketView[] = [];
  const responses: RocePacketView[] = [];
  const original = new Map(
    projected.requester.completions.map((wc) => [wc.wrId, wc.atomicOriginal] as const),
  );
  const failedAt = projected.requester.completions.findIndex((wc) => wc.status !== 'SUCCESS');
  const failedWrId = failedAt < 0 ? undefined : projected.requester.completions[failedAt]?.wrId;
  let msn = 0;
  for (const wr of verbs.workRequests) {
    const encoded = workRequestToRoce(wr, state);
    if (!encoded.ok) break;
    const packets = encoded.packets.map(
      (p): RocePacketView => ({
        opcode: p.bth.opcode,
        psn: p.bth.psn & PSN_MASK,
        destinationQp: p.bth.destinationQp,
        solicitedEvent: p.bth.solicitedEvent ?? false,
        headers: p.headers,
        payload: p.payload ?? new Uint8Array(0),
        icrc: 'valid',
      }),
    );
    requests.push(...packets);
    const last = packets[packets.length - 1];
    if (last === undefined) continue;
    if (wr.wrId === failedWrId) {
      // The NAK carries the failing request's PSN and the MSN of the last completed message.
      if (projected.failure === 'no-receive-buffer')
        responses.push(
          response('RC_ACKNOWLEDGE', last.psn, { kind: 'RNR_NAK', timer: LINK_MIN_RNR_TIMER }, msn),
        );
      else if (projected.nak !== undefined && projected.nak in AethNakCode)
        responses.push(
          response('RC_ACKNOWLEDGE', last.psn, { kind: 'NAK', code: projected.nak }, msn),
        );
      break;
    }
    msn += 1;
    const ack: AethSyndrome = { kind: 'ACK', creditCount: 31 };
    switch (wr.opcode) {
      case 'ATOMIC_FETCH_AND_ADD':
      case 'ATOMIC_CMP_AND_SWP':
        responses.push(
          response('RC_ATOMIC_ACKNOWLEDGE', last.psn, ack, msn, {
            AtomicAckETH: { originalRemoteData: original.get(wr.wrId) ?? 0n },
          }),
        );
        break;
      case 'RDMA_READ': {
        const remote = ENGINE_REGIONS.find((r) => r.name === 'remote');
        const region = remote === undefined ? undefined : projected.memory.get(remote.stag);
        const at = Number(wr.remoteAddr - (remote?.base ?? 0n));
        responses.push(
          response(
            'RC_RDMA_READ_RESPONSE_ONLY',
            last.psn,
            ack,
            msn,
            {},
            region?.slice(at, at + wr.length) ?? new Uint8Array(0),
          ),
        );
        break;
      }
      default:
        responses.push(response('RC_ACKNOWLEDGE', last.psn, ack, msn));
    }
  }
  return { requests, responses };
}

/** The engine's outcome of a link scenario: the verbs fields the link observes, the wire. */
export function expectedLinkOutcome(scenario: Scenario): Outcome {
  const expected = expectedOutcome(scenario);
  const fields = pick(expected.fields, LINK_VERBS_FIELD);
  if (DEVICES[scenario.device].transport === 'roce') {
    const { requests, responses } = predictRocePackets(scenario);
    Object.assign(fields, roceWireFields(requests, responses, ENGINE_QPS, ENGINE_REGIONS));
  } else if (expected.fields.wire !== undefined) {
    fields.wire = expected.fields.wire;
  }
  return expected.note === undefined ? { fields } : { fields, note: expected.note };
}
