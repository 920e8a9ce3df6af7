/**
 * The verbs projection: for a scenario (responder memory, posted receives, a list of work
 * requests), what a verbs user sees on each side — completions (opcode, status, byte_len,
 * imm_data, flags) and the QP state afterwards — on iWARP and on RoCEv2.
 *
 * Both projections run the same reference engine (Requester + Responder) for the
 * semantics (memory effects, which check fails), then speak the transport's language:
 * iWARP answers a failure with a Terminate (RFC 5040 §4.8, RFC 7306 §8), RoCE with an
 * IBTA NAK whose class gives the requester's status (failure table, rxe_resp.c).
 */

import {
  requireArray,
  requireBigint,
  requireBoolean,
  requireInteger,
  requireName,
  requireObject,
} from '../../arguments.js';
import type { RdmapMessage, Terminate } from '../../codec/iwarp/messages.js';
import {
  DEFAULT_IWARP_PROFILE,
  type IwarpProfile,
  requireIwarpProfile,
} from '../../codec/iwarp/profiles.js';
import type { AethNakCodeName } from '../../codec/roce/aeth.js';
import type { RocePacketFields } from '../../codec/roce/packet.js';
import type { QpState } from '../../ibverbs/qp-state.js';
import { type EngineFailure, failureRow } from '../errors/failure-table.js';
import { runPlacementRequest } from '../ibta15/placement-request.js';
import {
  type TaggedBufferRegistration,
  TaggedBufferTable,
  type TaggedWindowBinding,
} from '../memory/tagged-buffer.js';
import type { TracedEvent, TracedOperation } from '../ordering/checker.js';
import { Requester } from '../requester/requester.js';
import { type RoceSendState, workRequestToRoce } from '../requester/to-roce.js';
import {
  type InvalidWorkRequest,
  isPlacementRequest,
  type NotExpressible,
  type WorkRequest,
} from '../requester/work-request.js';
import { Responder } from '../responder/responder.js';
import type { ReceiveBuffer, ReceiveCompletion } from '../responder/types.js';
import { nakCompletionStatus, RNR_RETRY_EXCEEDED_STATUS } from '../roce/rc-requester.js';
import { type TerminateStatusModel, terminateStatus } from './terminate-status.js';
import { TraceRecorder } from './trace.js';
import {
  errorCompletion,
  immediateValue,
  type SideOutcome,
  type WorkCompletion,
} from './work-completion.js';

/** A scenario, transport-neutral. */
export interface VerbsScenario {
  /** iWARP profile (default `rfc7306`). */
  readonly profile?: IwarpProfile;
  readonly responder: {
    readonly buffers: readonly TaggedBufferRegistration[];
    readonly receives?: readonly ReceiveBuffer[];
    /** Default 16. */
    readonly ird?: number;
    /** iWARP only: false models a peer without RFC 7306 atomics (siw). */
    readonly supportsAtomics?: boolean;
    /** iWARP only: false models a peer without RFC 7306 Immediate Data (siw). */
    readonly supportsImmediateData?: boolean;
    readonly protectionDomain?: number;
    /** Memory windows bound over the buffers above before the first request. */
    readonly windows?: readonly ResponderWindow[];
    /**
     * The responder QP's remote access enables (`qp_access_flags`, an ACCESS_FLAGS mask;
     * default every right). Checked apart from the regions' rights: a request the QP does
     * not enable is the failure `qp-access-disabled` (RoCE: NAK Invalid Request).
     */
    readonly qpAccess?: number;
  };
  readonly requester?: {
    /** Default 16. */
    readonly ord?: number;
    /** Buffers RDMA Read data lands in. */
    readonly localBuffers?: readonly TaggedBufferRegistration[];
  };
  readonly workRequests: readonly WorkRequest[];
  /** How an iWARP Requester reports a received Terminate (default `reference`). */
  readonly iwarpStatusModel?: TerminateStatusModel;
  /**
   * RoCE receive-completion flags: `reference` (IBTA: no GRH flag on RC) or `rxe`, which
   * sets GRH on every user receive completion (rxe_resp.c `do_complete`:
   * `uwc->wc_flags = IB_WC_GRH`). Default `reference`.
   */
  readonly roceModel?: 'reference' | 'rxe';
}

/**
 * A memory window of the responder (IBTA 1.5 §10.6.7): bound over the buffer `parent`
 * before the first work request, and invalidated locally (a LOCAL_INV on the responder,
 * §10.6.7.2.4; RFC 5040 §2.1 "Invalidate STag") just before work request
 * `invalidatedBefore` when given.
 */
export interface ResponderWindow extends TaggedWindowBinding {
  readonly parent: number;
  readonly invalidatedBefore?: number;
}

/** A message on the iWARP wire and its direction. */
export interface WireMessage {
  readonly from: 'requester' | 'responder';
  readonly message: RdmapMessage;
}

/** What one transport shows for a scenario. */
export interface TransportOutcome {
  readonly transport: 'iwarp' | 'roce';
  readonly requester: SideOutcome;
  readonly responder: SideOutcome;
  /** Work requests the transport cannot carry (typed, with the reason). */
  readonly notExpressible: readonly NotExpressible[];
  /** Work requests refused for out-of-range fields (typed; nothing was sent for them). */
  readonly invalid: readonly InvalidWorkRequest[];
  readonly failure: EngineFailure | undefined;
  /** iWARP: the Terminate sent by the Responder. */
  readonly terminate: Terminate | undefined;
  /** RoCE: the NAK the responder sends (undefined for RNR, which is not a NAK code). */
  readonly nak: AethNakCodeName | undefined;
  /** Responder memory after the scenario, per STag. */
  readonly memory: ReadonlyMap<number, Uint8Array>;
  /** iWARP: every message both ways, in order. */
  readonly iwarpWire: readonly WireMessage[];
  /** RoCE: the requester's request packets, in order. */
  readonly roceRequests: readonly RocePacketFields[];
  /** The engine run as an ordering trace (iWARP), for `checkOrdering`. */
  readonly trace: {
    readonly operations: readonly TracedOperation[];
    readonly events: readonly TracedEvent[];
  };
}

/** The engine run shared by both projections. */
interface EngineRun {
  readonly requester: WorkCompletion[];
  readonly responderCompletions: Array<{ wrIndex: number; completion: ReceiveCompletion }>;
  readonly failure: EngineFailure | undefined;
  readonly failedWrIndex: number | undefined;
  readonly terminate: Terminate | undefined;
  readonly wire: WireMessage[];
  readonly notExpressible: NotExpressible[];
  readonly invalid: InvalidWorkRequest[];
  readonly trace: TraceRecorder;
  readonly memory: Map<number, Uint8Array>;
  readonly unconsumedReceives: readonly ReceiveBuffer[];
  readonly requesterState: QpState;
  /** The responder's stream ended by the requester's Terminate (RFC 5040 §7). */
  readonly responderTerminated: boolean;
}

const PD = 1;
/**
 * The streams (QPs) of the projection: the responder's, which every request arrives on,
 * and the requester's. A type 2 window bound on one is associated with it only.
 */
export const RESPONDER_STREAM = 1;
export const REQUESTER_STREAM = 2;

/** The models a scenario may name, each with the names it takes. */
const SCENARIO_MODELS: readonly (readonly [
  key: 'iwarpStatusModel' | 'roceModel',
  what: string,
  names: Readonly<Record<string, 0>>,
])[] = [
  ['iwarpStatusModel', 'iWARP status model', { reference: 0, siw: 0 }],
  ['roceModel', 'RoCE model', { reference: 0, rxe: 0 }],
];
/**
 * The scenario's shape, checked before the engine runs (issue 25: no raw TypeError from a
 * plain-JavaScript caller): its parts are objects and arrays, its numbers integers, its
 * names known. Work requests and buffer registrations are checked where they are used
 * (validateWorkRequest: a recorded `invalid` outcome; TaggedBufferTable.register: a
 * TaggedBufferRegistrationError).
 */
function checkScenario(scenario: VerbsScenario): void {
  requireObject('engine', 'scenario', scenario);
  if (scenario.profile !== undefined)
    requireIwarpProfile('engine', scenario.profile, 'scenario.profile');
  requireObject('engine', 'scenario.responder', scenario.responder);
  requireArray('engine', 'scenario.responder.buffers', scenario.responder.buffers);
  requireArray('engine', 'scenario.workRequests', scenario.workRequests);
  const { receives, ird, supportsAtomics, supportsImmediateData } = scenario.responder;
  if (receives !== undefined) {
    requireArray('engine', 'scenario.responder.receives', receives).forEach((r, i) => {
      requireObject('engine', `scenario.responder.receives[${i}]`, r);
      const { id, length } = r as ReceiveBuffer;
      requireBigint(
        'engine',
        `scenario.responder.receives[${i}].id`,
        id,
        0n,
        0xffff_ffff_ffff_ffffn,
      );
      requireInteger('engine', `scenario.responder.receives[${i}].length`, length, 0, 0xffff_ffff);
    });
  }
  if (ird !== undefined) requireInteger('engine', 'scenario.responder.ird', ird, 0, 0xffff);
  const qpAccess = scenario.responder.qpAccess;
  if (qpAccess !== undefined)
    requireInteger('engine', 'scenario.responder.qpAccess', qpAccess, 0, 0xffff_ffff);
  const windows = scenario.responder.windows;
  if (windows !== undefined)
    requireArray('engine', 'scenario.responder.windows', windows).forEach((w, i) => {
      requireObject('engine', `scenario.responder.windows[${i}]`, w);
      const { parent, invalidatedBefore } = w as ResponderWindow;
      requireInteger('engine', `scenario.responder.windows[${i}].parent`, parent, 0, 0xffff_ffff);
      if (invalidatedBefore !== undefined)
        requireInteger(
          'engine',
          `scenario.responder.windows[${i}].invalidatedBefore`,
          invalidatedBefore,
          0,
          0xffff_ffff,
        );
    });
  if (supportsAtomics !== undefined)
    requireBoolean('engine', 'scenario.responder.supportsAtomics', supportsAtomics);
  if (supportsImmediateData !== undefined)
    requireBoolean('engine', 'scenario.responder.supportsImmediateData', supportsImmediateData);
  if (scenario.requester !== undefined) {
    requireObject('engine', 'scenario.requester', scenario.requester);
    const { ord, localBuffers } = scenario.requester;
    if (ord !== undefined) requireInteger('engine', 'scenario.requester.ord', ord, 0, 0xffff);
    if (localBuffers !== undefined)
      requireArray('engine', 'scenario.requester.localBuffers', localBuffers);
  }
  for (const [key, what, names] of SCENARIO_MODELS) {
    const model = scenario[key];
    if (model !== undefined) requireName('engine', what, names, model, `scenario.${key}`);
  }
  const pd = scenario.responder.protectionDomain;
  if (pd !== undefined)
    requireInteger('engine', 'scenario.responder.protectionDomain', pd, 0, 0xffff_ffff);
}

function runEngine(
  scenario: VerbsScenario,
  profile: IwarpProfile,
  capabilities: {
    atomics: boolean;
    immediate: boolean;
    immediateCarrier: 'receive-buffer' | 'header';
    /** The IBTA 1.5 memory placement operations (RoCE; iWARP has none). */
    placement: boolean;
  },
  statusModel: TerminateStatusModel,
): EngineRun {
  const pd = scenario.responder.protectionDomain ?? PD;
  const buffers = new TaggedBufferTable();
  for (const b of scenario.responder.buffers) buffers.register(b);
  const windows = scenario.responder.windows ?? [];
  for (const w of windows) buffers.bindWindow(w.parent, w);
  const local = new TaggedBufferTable();
  for (const b of scenario.requester?.localBuffers ?? []) local.register(b);
  const responder = new Responder({
    profile,
    stream: { streamId: RESPONDER_STREAM, protectionDomain: pd },
    buffers,
    ird: scenario.responder.ird ?? 16,
    supportsAtomics: capabilities.atomics,
    supportsImmediateData: capabilities.immediate,
    immediateCarrier: capabilities.immediateCarrier,
    ...(scenario.responder.qpAccess === undefined ? {} : { qpAccess: scenario.responder.qpAccess }),
  });
  const receives = [...(scenario.responder.receives ?? [])];
  for (const r of receives) responder.postReceive(r);
  let consumed = 0;
  const requester = new Requester({
    profile,
    ord: scenario.requester?.ord ?? 16,
    localBuffers: local,
    stream: { streamId: REQUESTER_STREAM, protectionDomain: PD },
    terminateStatus: (t) => terminateStatus(t, statusModel),
    // RFC 7306 §8.1 on iWARP; on RoCE a local error sends nothing (IBTA 10.7.3).
    localErrorTerminates: !capabilities.placement,
  });
  const run: EngineRun = {
    requester: [],
    responderCompletions: [],
    failure: undefined,
    failedWrIndex: undefined,
    terminate: undefined,
    wire: [],
    notExpressible: [],
    invalid: [],
    trace: new TraceRecorder(),
    memory: new Map(),
    unconsumedReceives: [],
    requesterState: 'RTS',
    responderTerminated: false,
  };
  let failure: EngineFailure | undefined;
  let failedWrIndex: number | undefined;
  let terminate: Terminate | undefined;
  // Messages the Responder sends go straight back to the Requester; its Terminate too.
  // Which work request each Requester message belongs to (ORD can delay a request, so
  // messages released later still carry their own work request).
  const owner = new Map<RdmapMessage, number>();
  const trace = run.trace;
  const deliver = (messages: readonly RdmapMessage[]) => {
    for (const m of messages) {
      const wrIndex = owner.get(m) ?? -1;
      const op = trace.operationOf(m, wrIndex);
      run.wire.push({ from: 'requester', message: m });
      // IBTA (header carrier): a Write with Immediate is one request whose responder checks
      // for a receive before executing it (9.7.5.2.8: an RNR NAK means "not executed"), so
      // with none posted its data is not placed; the Immediate Data message then meets the
      // empty receive queue. iWARP places the Write first (RFC 7306 §6: two messages).
      if (
        capabilities.immediateCarrier === 'header' &&
        m.kind === 'rdma-write' &&
        scenario.workRequests[wrIndex]?.opcode === 'RDMA_WRITE_WITH_IMM' &&
        responder.postedReceives === 0
      )
        continue;
      const result = responder.receive(m);
      if (result.outcome === 'accepted') {
        if (m.ddp.last) trace.record(op, 'delivered@remote');
        if (m.kind === 'atomic-request')
          trace.record(op, 'processed@remote', 'placed@remote', 'response-generated@remote');
        else if (m.kind === 'rdma-read-request' || m.kind === 'read-v2-request')
          trace.record(op, 'processed@remote', 'response-generated@remote');
      }
      if (result.placements.length > 0) trace.record(op, 'placed@remote');
      for (const c of result.completions) {
        consumed++;
        run.responderCompletions.push({ wrIndex, completion: c });
        trace.record(op, 'placed@remote', 'completed@remote');
      }
      if (result.failure !== undefined && failure === undefined) {
        failure = result.failure;
        failedWrIndex = wrIndex;
        terminate = result.terminate;
      }
      for (const back of result.sent) {
        run.wire.push({ from: 'responder', message: back });
        const r = requester.receive(back);
        if (back.kind !== 'terminate') {
          trace.record(op, 'placed@local');
          if (r.completions.length > 0) trace.record(op, 'completed@local');
        }
        run.requester.push(...r.completions);
        deliver(r.sent);
      }
    }
  };
  // Set once an IBTA 1.5 request failed: the requester QP is in ERR and nothing after it
  // executes (projectRoce flushes the later requests by index).
  let placementFailed = false;
  scenario.workRequests.forEach((wr, index) => {
    for (const w of windows) if (w.invalidatedBefore === index) buffers.invalidate(w.stag);
    if (placementFailed) return;
    if (capabilities.placement && isPlacementRequest(wr)) {
      // IBTA 1.5 Annex A19 on RoCE (not RFC 7306): executed at the responder in order
      // with the requests before it, which the engine has already placed.
      if (failure !== undefined) return;
      const done = runPlacementRequest(wr, buffers, scenario.responder.qpAccess);
      if (done.ok) run.requester.push(done.completion);
      else {
        failure = done.failure;
        failedWrIndex = index;
        placementFailed = true;
      }
      return;
    }
    const posted = requester.post(wr);
    if (!posted.ok) {
      if (posted.error.reason === 'not-expressible') run.notExpressible.push(posted.error);
      else run.invalid.push(posted.error);
      return;
    }
    for (const m of posted.result.sent) owner.set(m, index);
    for (const m of posted.result.sent) run.trace.operationOf(m, index);
    run.requester.push(...posted.result.completions);
    deliver(posted.result.sent);
  });
  for (const b of scenario.responder.buffers) {
    const live = buffers.get(b.stag);
    if (live !== undefined) run.memory.set(b.stag, live.memory.slice());
  }
  return {
    ...run,
    failure,
    failedWrIndex,
    terminate,
    unconsumedReceives: receives.slice(consumed),
    requesterState: requester.qpState,
    responderTerminated: responder.peerTerminate !== undefined,
  };
}

/** Maps an engine receive completion to the verbs receive completion. */
function receiveCompletion(
  completion: ReceiveCompletion,
  wr: WorkRequest | undefined,
): WorkCompletion {
  const withImm = completion.immediateData !== undefined;
  // RFC 7306 §6: RDMA Write + Immediate Data "has the same behavior as the RDMA Write with
  // Immediate Data operation found in InfiniBand": RECV_RDMA_WITH_IMM, byte_len the
  // Write's length (as rxe reports qp->resp.length).
  const writeImm = wr?.opcode === 'RDMA_WRITE_WITH_IMM';
  return {
    wrId: completion.receiveId,
    status: 'SUCCESS',
    opcode: writeImm ? 'RECV_RDMA_WITH_IMM' : 'RECV',
    byteLen: writeImm && 'payload' in wr ? wr.payload.length : completion.byteLength,
    immData:
      completion.immediateData === undefined
        ? undefined
        : immediateValue(Number(completion.immediateData & 0xffff_ffffn)),
    flags: [
      ...(withImm ? (['WITH_IMM'] as const) : []),
      ...(completion.invalidatedSTag !== undefined ? (['WITH_INV'] as const) : []),
    ],
    // The bytes placed in the consumed receive: a Send's payload; for a write-with-immediate
    // on iWARP the Immediate Data Message's 8 bytes (RFC 7306 §6.3: it uses the Untagged
    // Buffer Model and consumes one Untagged Buffer); on RoCE nothing (ImmDt is a header).
    ...(writeImm && completion.data.byteLength === 0 ? {} : { data: completion.data }),
    ...(completion.solicitedEvent ? { solicited: true as const } : {}),
    ...(completion.invalidatedSTag === undefined
      ? {}
      : { invalidatedRkey: completion.invalidatedSTag }),
  };
}

/** iWARP: Terminate on failure; Sends / Writes complete locally on post (RFC 5040 §5.5). */
export function projectIwarp(scenario: VerbsScenario): TransportOutcome {
  checkScenario(scenario);
  const profile = scenario.profile ?? DEFAULT_IWARP_PROFILE;
  const run = runEngine(
    scenario,
    profile,
    {
      atomics: scenario.responder.supportsAtomics ?? true,
      immediate: scenario.responder.supportsImmediateData ?? true,
      immediateCarrier: 'receive-buffer',
      placement: false,
    },
    scenario.iwarpStatusModel ?? 'reference',
  );
  const responderCompletions = run.responderCompletions.map(({ wrIndex, completion }) =>
    receiveCompletion(completion, scenario.workRequests[wrIndex]),
  );
  // RFC 5040 §7: the Terminate (the responder's, or the requester's after a local error)
  // ends the stream; remaining receives are flushed.
  const ended = run.failure !== undefined || run.responderTerminated;
  if (ended)
    for (const r of run.unconsumedReceives)
      responderCompletions.push(errorCompletion(r.id, 'WR_FLUSH_ERR'));
  return {
    transport: 'iwarp',
    requester: { completions: run.requester, qpState: run.requesterState },
    responder: {
      completions: responderCompletions,
      qpState: ended ? 'ERR' : 'RTS',
    },
    notExpressible: run.notExpressible,
    invalid: run.invalid,
    failure: run.failure,
    terminate: run.terminate,
    nak: undefined,
    memory: run.memory,
    iwarpWire: run.wire,
    roceRequests: [],
    trace: { operations: run.trace.operations, events: run.trace.events },
  };
}

/**
 * RoCEv2: the same semantics (every verbs operation exists, so the engine runs the
 * V2-draft profile, which has Send with Immediate), a NAK on failure. The failing WR gets
 * the NAK class's status (IBTA §9.7.5.2.8; rxe_comp.c), later WRs WR_FLUSH_ERR,
 * the requester QP goes to ERR; a class C NAK also moves the responder QP to ERR
 * (rxe_resp.c do_class_ac_error). A missing receive buffer is an RNR NAK: the requester
 * retries and ends with RNR_RETRY_EXC_ERR; the responder QP stays in RTS.
 */
export function projectRoce(scenario: VerbsScenario, destinationQp = 0x000123): TransportOutcome {
  checkScenario(scenario);
  requireInteger('engine', 'destinationQp', destinationQp, 0, 0xff_ffff);
  // IBTA: ImmDt rides in the packet header; the consumed receive's SGEs are not used.
  const run = runEngine(
    scenario,
    'v2-draft',
    { atomics: true, immediate: true, immediateCarrier: 'header', placement: true },
    'reference',
  );
  const state: RoceSendState = { destinationQp, psn: 0, mtu: 1024 };
  const packets: RocePacketFields[] = [];
  for (const wr of scenario.workRequests) {
    const encoded = workRequestToRoce(wr, state);
    if (encoded.ok) packets.push(...encoded.packets);
  }
  const row = run.failure === undefined ? undefined : failureRow(run.failure);
  const rnr = run.failure === 'no-receive-buffer';
  // The failing request's status is what the one RC requester (../roce/rc-requester.ts)
  // gives for the responder's answer: RNR NAKs outlasting an rnr_retry of 0, or the NAK
  // the failure table names (IBTA §9.7.5.2.8); a failure with no NAK that ends a request
  // is a Remote Operational Error.
  const failedStatus = rnr
    ? RNR_RETRY_EXCEEDED_STATUS
    : ((row?.roceNak === undefined ? undefined : nakCompletionStatus(row.roceNak)) ?? 'REM_OP_ERR');
  const requester: WorkCompletion[] = [];
  scenario.workRequests.forEach((wr, index) => {
    if (run.failedWrIndex !== undefined && index > run.failedWrIndex) {
      requester.push(errorCompletion(wr.wrId, 'WR_FLUSH_ERR'));
      return;
    }
    if (index === run.failedWrIndex) {
      requester.push(errorCompletion(wr.wrId, failedStatus));
      return;
    }
    // Its own completion: success, or a local error (and the flushes after it) that the
    // Requester found placing a response (requester.ts #localError).
    const done = run.requester.find((c) => c.wrId === wr.wrId);
    if (done !== undefined) requester.push(done);
  });
  const grh = scenario.roceModel === 'rxe';
  const responderCompletions = run.responderCompletions.map(({ wrIndex, completion }) => {
    const wc = receiveCompletion(completion, scenario.workRequests[wrIndex]);
    return grh ? { ...wc, flags: ['GRH' as const, ...wc.flags] } : wc;
  });
  if (run.failure !== undefined && !rnr)
    for (const r of run.unconsumedReceives)
      responderCompletions.push(errorCompletion(r.id, 'WR_FLUSH_ERR'));
  return {
    transport: 'roce',
    requester: {
      completions: requester,
      qpState: run.failure === undefined ? run.requesterState : 'ERR',
    },
    responder: {
      completions: responderCompletions,
      qpState: run.failure === undefined || rnr ? 'RTS' : 'ERR',
    },
    notExpressible: [],
    invalid: run.invalid,
    failure: run.failure,
    terminate: undefined,
    nak: row?.roceNak,
    memory: run.memory,
    iwarpWire: [],
    roceRequests: packets,
    trace: { operations: [], events: [] },
  };
}

/** Both projections of one scenario. */
export function projectVerbs(scenario: VerbsScenario): {
  readonly iwarp: TransportOutcome;
  readonly roce: TransportOutcome;
} {
  return { iwarp: projectIwarp(scenario), roce: projectRoce(scenario) };
}
