/**
 * What the devices did in a link scenario, as the same fields the engine side gives
 * (predict.ts): the verbs fields guest A recorded, and the scenario's frames cut out of
 * the link capture and decoded by the codec (every RoCEv2 frame with its ICRC checked;
 * siw's TCP stream reassembled into MPA/DDP/RDMAP).
 */
import { type CaptureDecode, decodeCaptureMessages } from '../../codec/capture/index.js';
import { decodeFrame } from '../../codec/net/frame.js';
import { decodeCapture } from '../../codec/pcap/capture.js';
import { encodePcap } from '../../codec/pcap/pcap.js';
import { type CompletionPart, fieldName } from '../../judge/observation.js';
import { type WireRegion, wireLine } from '../../judge/wire.js';
import { formatValue } from '../compare-format.js';
import { hammerFields } from '../observe.js';
import { orderingField } from '../ordering-trace.js';
import { transportTimeoutMs } from '../rnr-timing.js';
import {
  DEVICES,
  type Outcome,
  type Scenario,
  watchedOffsets,
  wordAt,
  workRequestsOf,
  wrName,
} from '../scenario.js';
import {
  lostWireOf,
  retryExhaustionMs,
  retryTimersClass,
  writeStreamOf,
} from './fault-scenarios.js';
import { hammerStepOf } from './hammer.js';
import type { LinkObservation } from './protocol.js';
import { type RocePacketView, roceFields, roceWireFields } from './roce-fields.js';
import { observedStreamFields } from './stream-outcome.js';
import { tcpRepeats, wireRepeats } from './wire-repeats.js';

/** The guests' addresses on the RoCE link (A, B): requests come from A. */
export interface LinkPeers {
  readonly requester: string;
  readonly responder: string;
}

/**
 * The verbs fields guest A recorded; `repeatedRequests`, the requests repeated on the wire
 * (a faulty-wire scenario), decides a lost wire's `after` field.
 */
function verbsFields(
  scenario: Scenario,
  observation: LinkObservation,
  repeatedRequests?: number,
): Record<string, string> {
  // A program without a post (a hammer step only) has no post1, as the engine says.
  const fields: Record<string, string> = {
    [fieldName({ kind: 'post', n: 1 })]:
      workRequestsOf(scenario).length === 0 ? '—' : observation.post,
  };
  if (observation.badWr !== undefined)
    fields[fieldName({ kind: 'post', n: 1, badWr: true })] = `wr${observation.badWr + 1}`;
  const operations = workRequestsOf(scenario);
  const waited = operations.length;
  for (let n = 1; n <= waited; n++) {
    const wc = observation.requester[n - 1];
    const put = (part: CompletionPart, value: string) => {
      fields[fieldName({ kind: 'completion', side: 'requester', n, part })] = value;
    };
    if (wc === undefined) {
      put('status', 'none');
      continue;
    }
    put('wr', wrName(BigInt(wc.wrId)));
    put('status', wc.status);
    if (wc.fetched !== undefined) put('fetched', formatValue(BigInt(wc.fetched)));
    const lost = lostWireOf(scenario);
    if (lost !== undefined && repeatedRequests !== undefined)
      put('after', retryTimersClass(lost, wc.status, repeatedRequests));
  }
  const step = hammerStepOf(scenario);
  if (step !== undefined && observation.hammer !== undefined)
    Object.assign(
      fields,
      hammerFields(
        1,
        observation.hammer.post,
        observation.hammer.succeeded,
        observation.hammer.fetched.map((v) => BigInt(v)),
        BigInt(observation.hammer.before),
        step.add,
      ),
    );
  // The ordering checker on the completions the requester polled (ordering-trace.ts), as
  // the engine's run gets it (program.ts): the link polls the requester's CQ only.
  if (operations.length > 1)
    fields[fieldName({ kind: 'ordering' })] = orderingField(scenario, fields);
  if (observation.memory !== '') {
    const memory = new Uint8Array(Buffer.from(observation.memory, 'hex'));
    for (const offset of watchedOffsets(scenario))
      fields[fieldName({ kind: 'memory', offset })] = formatValue(wordAt(memory, offset));
  }
  return fields;
}

function regionsOf(observation: LinkObservation): WireRegion[] {
  return [
    { name: 'remote', stag: observation.remote.rkey, base: BigInt(observation.remote.addr) },
    { name: 'local', stag: observation.local.lkey, base: BigInt(observation.local.addr) },
  ];
}

/** The capture's frames of one scenario, as a pcap of their own (opens in Wireshark). */
function cutPcap(capture: Uint8Array, keep: (frameIndex: number) => boolean): Uint8Array {
  const file = decodeCapture(capture);
  if (!file.ok) throw file.error;
  const records = file.value.records.filter((_, i) => keep(i));
  const linkType = file.value.records[0]?.linkType ?? 1;
  return encodePcap(
    { linkType },
    records.map((r) => ({ timestampNs: r.timestampNs, data: r.data })),
  );
}

/** A decoded link capture, shared by every scenario of the run. */
export interface LinkCapture {
  readonly bytes: Uint8Array;
  readonly decoded: CaptureDecode;
}

export function decodeLinkCapture(bytes: Uint8Array): LinkCapture {
  const decoded = decodeCaptureMessages(bytes);
  if (!decoded.ok) throw decoded.error;
  return { bytes, decoded: decoded.value };
}

function roceOutcome(
  observation: LinkObservation,
  capture: LinkCapture,
  peers: LinkPeers,
): { fields: Record<string, string>; pcap: Uint8Array; note?: string } {
  const requests: RocePacketView[] = [];
  const responses: RocePacketView[] = [];
  const frames = new Set<number>();
  for (const item of capture.decoded.items) {
    if (item.kind !== 'roce' || !item.packet.ok) continue;
    const source = String(item.frame.network?.header.source ?? '');
    const packet = item.packet.value;
    const request =
      source === peers.requester && packet.bth.destinationQp === observation.responderQpn;
    const reply =
      source === peers.responder && packet.bth.destinationQp === observation.requesterQpn;
    if (!request && !reply) continue;
    frames.add(item.frameIndex);
    const view: RocePacketView = {
      opcode: packet.bth.opcode,
      psn: packet.bth.psn,
      destinationQp: packet.bth.destinationQp,
      solicitedEvent: packet.bth.solicitedEvent,
      headers: packet.headers,
      ...(packet.aethSyndrome === undefined ? {} : { aethSyndrome: packet.aethSyndrome }),
      payload: packet.payload,
      icrc:
        item.icrc === undefined
          ? 'unchecked'
          : item.icrc.valid
            ? 'valid'
            : `bad stored=${formatValue(item.icrc.stored)} computed=${formatValue(item.icrc.computed)}`,
    };
    (request ? requests : responses).push(view);
  }
  // A retransmission (IBTA 9.7.6: after the local ACK timeout the requester sends the
  // same packet again, same PSN; the responder answers a duplicate again) is timing, not
  // protocol: identical packets count once, and the outcome's note says how many repeats.
  const regions = regionsOf(observation);
  const qpsOf = {
    requester: observation.requesterQpn ?? -1,
    responder: observation.responderQpn ?? -1,
  };
  const once = (list: RocePacketView[], direction: 'req' | 'resp') => {
    const seen = new Set<string>();
    return list.filter((view) => {
      // Numbered alike (1): packets that differ only in their place count once.
      const key = JSON.stringify(roceFields(direction, 1, view, qpsOf, regions));
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    });
  };
  const uniqueRequests = once(requests, 'req');
  const uniqueResponses = once(responses, 'resp');
  const repeats =
    requests.length - uniqueRequests.length + responses.length - uniqueResponses.length;
  return {
    fields: roceWireFields(uniqueRequests, uniqueResponses, qpsOf, regions),
    pcap: cutPcap(capture.bytes, (i) => frames.has(i)),
    ...(repeats > 0
      ? { note: `${repeats} retransmitted packet(s) on the wire (identical, counted once)` }
      : {}),
  };
}

function iwarpOutcome(
  observation: LinkObservation,
  capture: LinkCapture,
): { fields: Record<string, string>; pcap: Uint8Array } {
  const port = observation.serverPort ?? -1;
  const connection = capture.decoded.connections.findIndex((c) => c.server.port === port);
  const lines = capture.decoded.items.flatMap((item) =>
    item.kind === 'fpdu' && item.connection === connection && item.fpdu.message.ok
      ? [
          wireLine(
            item.direction === 'client-to-server' ? 'requester' : 'responder',
            item.fpdu.message.value,
            regionsOf(observation),
          ),
        ]
      : [],
  );
  const file = decodeCapture(capture.bytes);
  const frames = new Set<number>();
  if (file.ok)
    file.value.records.forEach((record, i) => {
      const frame = decodeFrame(record.linkType, record.data);
      const t = frame.ok ? frame.value.transport : undefined;
      if (t?.kind === 'tcp' && (t.header.sourcePort === port || t.header.destinationPort === port))
        frames.add(i);
    });
  return { fields: { wire: lines.join('\n') }, pcap: cutPcap(capture.bytes, (i) => frames.has(i)) };
}

/** The device's outcome of `scenario` from guest A's observation and the link capture. */
export function observedLinkOutcome(
  scenario: Scenario,
  observation: LinkObservation,
  capture: LinkCapture,
  peers: LinkPeers,
): Outcome {
  if (!scenario.captureWire) return faultyWireOutcome(scenario, observation, capture, peers);
  const wire: { fields: Record<string, string>; pcap: Uint8Array; note?: string } =
    DEVICES[scenario.device].transport === 'roce'
      ? roceOutcome(observation, capture, peers)
      : iwarpOutcome(observation, capture);
  return {
    fields: { ...verbsFields(scenario, observation), ...wire.fields },
    pcap: wire.pcap,
    ...(wire.note === undefined ? {} : { note: wire.note }),
  };
}

/** Every QP pair of the scenario: [requester QPN, responder QPN]. */
export function qpPairsOf(observation: LinkObservation): [number, number][] {
  return [
    [observation.requesterQpn ?? -1, observation.responderQpn ?? -1],
    ...(observation.extraQpns ?? []).map(([r, s]): [number, number] => [r, s]),
  ];
}

/**
 * A faulty-wire scenario (fault-scenarios.ts): the verbs fields only, the scenario's
 * frames of every QP as its pcap, and what was repeated as the note.
 */
function faultyWireOutcome(
  scenario: Scenario,
  observation: LinkObservation,
  capture: LinkCapture,
  peers: LinkPeers,
): Outcome {
  const mine = new Set(qpPairsOf(observation).flat());
  const frames = new Set<number>();
  for (const item of capture.decoded.items)
    if (item.kind === 'roce' && item.packet.ok && mine.has(item.packet.value.bth.destinationQp))
      frames.add(item.frameIndex);
  const repeats = repeatsNote(scenario, observation, capture, peers);
  const stream = writeStreamOf(scenario);
  if (stream !== undefined) {
    const observed = observedStreamFields(scenario, stream, observation, capture);
    return {
      fields: observed.fields,
      pcap: cutPcap(capture.bytes, (i) => frames.has(i)),
      note: `${observed.note}; ${repeats}`,
    };
  }
  // A lost wire's timers are counted on the wire: the capture is guest A's side of the
  // relay, where every transmission shows before the relay drops it (A requests: the
  // faulty-wire runs are one-way).
  const lostRepeats =
    lostWireOf(scenario) === undefined || DEVICES[scenario.device].transport !== 'roce'
      ? undefined
      : wireRepeats(capture, qpPairsOf(observation), peers).repeatedRequests;
  return {
    fields: verbsFields(scenario, observation, lostRepeats),
    pcap: cutPcap(capture.bytes, (i) => frames.has(i)),
    note: `${repeats}${lostNote(scenario, observation)}`,
  };
}

/** What the transports repeated at guest A's side: RoCE packets, or siw's TCP segments. */
function repeatsNote(
  scenario: Scenario,
  observation: LinkObservation,
  capture: LinkCapture,
  peers: LinkPeers,
): string {
  if (DEVICES[scenario.device].transport !== 'roce') {
    const tcp = tcpRepeats(capture, observation.serverPort ?? -1);
    return `${tcp.repeatedRequests} of ${tcp.requests} TCP segments A->B and ${tcp.repeatedResponses} of ${tcp.responses} B->A retransmitted on guest A's side`;
  }
  const repeats = wireRepeats(capture, qpPairsOf(observation), peers);
  return `${repeats.repeatedRequests} of ${repeats.requests} requests and ${repeats.repeatedResponses} of ${repeats.responses} responses repeated on guest A's side`;
}

/**
 * A lost-wire scenario: when its completion came on the guest's clock and when the
 * prediction had it due; shown, never compared (the `after` field counts on the wire).
 */
function lostNote(scenario: Scenario, observation: LinkObservation): string {
  const lost = lostWireOf(scenario);
  const elapsed = observation.requester[0]?.elapsedMs;
  if (lost === undefined || elapsed === undefined) return '';
  return `; completed after ${elapsed} ms, due after ${Math.round(retryExhaustionMs(lost))} ms ((1 + ${lost.retryCnt}) x ${transportTimeoutMs(lost.timeout).toFixed(1)} ms)`;
}
