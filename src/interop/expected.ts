/**
 * The reference side of a scenario: the program compiled into the engine's verbs
 * projection for the scenario's transport (RoCEv2 for rxe, iWARP per RFC 7306 for siw),
 * then walked step by step to produce the same observation fields the device side
 * reports. Everything operation-specific comes from the traits table (operations.ts).
 */

import {
  projectIwarp,
  projectRoce,
  REQUESTER_STREAM,
  RESPONDER_STREAM,
  type ResponderWindow,
  type TransportOutcome,
  type VerbsScenario,
} from '../engine/projection/project.js';
import { errorCompletion, type WorkCompletion } from '../engine/projection/work-completion.js';
import type { LocalSge, WorkRequest } from '../engine/requester/work-request.js';
import { ACCESS_FLAGS } from '../ibverbs/access-flags.js';
import { type WireRegion, wireLine } from '../judge/wire.js';
import type { Access } from '../verbs/mr.js';
import { requireScenario } from './arguments.js';
import { formatValue } from './compare-format.js';
import { observedCompletion } from './observe.js';
import { OPERATION_TRAITS, operandsOf, traitsOf } from './operations.js';
import { type ImmediateSide, runProgramNow, type WindowStepResult } from './program.js';
import { DEFAULT_RNR_RETRY, receivePostTimes, servedByRetry, timersOf } from './rnr-timing.js';
import {
  DEFAULT_TARGET,
  DEVICES,
  GUARD,
  IMMEDIATE_RECEIVE_OFFSET,
  initialBuffer,
  LOCAL_SLOT,
  MR_LENGTH,
  type Operation,
  type Outcome,
  payloadBytes,
  type RequesterQp,
  recvIdOf,
  responderWrIdOf,
  type Scenario,
  type Side,
  type Step,
  wordAt,
  workRequestsOf,
  wrIdOf,
  writeImmediateReceiveLength,
} from './scenario.js';

/** The engine's stand-ins for what the kernel assigns (any values do; these are fixed). */
const REMOTE_STAG = 0x1a2b3c4d;
/** The rkey of the scenario's memory window (a `bind-mw` step binds it). */
const WINDOW_STAG = 0x1a2b3e02;
/** The rights a bound window grants (scenario.ts `bind-mw`). */
const WINDOW_ACCESS = ACCESS_FLAGS.REMOTE_READ | ACCESS_FLAGS.REMOTE_WRITE;
/** A key the responder never issued (invalid-rkey scenarios). */
const UNKNOWN_STAG = 0x1a2b3cff;
/** An 8-aligned virtual address for the MR's first byte, as a registered Buffer has. */
const REMOTE_BASE = 0x7f3a_1000_0008n;
const PROTECTION_DOMAIN = 1;
/** The requester's buffer: one 8-byte slot per work request. */
const LOCAL_STAG = 0x5e6f7a8b;
const LOCAL_BASE = 0x7f3a_2000_0000n;
const REMOTE_RIGHTS: readonly Access[] = ['REMOTE_READ', 'REMOTE_WRITE', 'REMOTE_ATOMIC'];
/**
 * The rights a remote access needs the responder QP's enable for as well as the MR's,
 * every operation's (operations.ts `qpGatedRights`). The flush enables are not in the
 * bring-up default: a scenario that flushes names them in `responderQpAccess`.
 */
const QP_GATED_RIGHTS: ReadonlySet<Access> = new Set(
  Object.values(OPERATION_TRAITS).flatMap((t): readonly Access[] => t.qpGatedRights),
);
const DEFAULT_IRD_ORD = 4;

/** A local key the requester never issued (invalid-lkey scenarios). */
const UNKNOWN_LOCAL_STAG = 0x5e6f7aff;

/**
 * The local SGE of a fetching operation as the engine models it (kernel/execute.ts posts
 * the same shapes): the request's 8-byte slot, 4 bytes of it, none, or an unknown lkey.
 */
function localSgeOf(op: Operation, index: number): LocalSge | null {
  const addr = LOCAL_BASE + BigInt(LOCAL_SLOT * index);
  switch (op.local ?? 'valid') {
    case 'none':
      return null;
    case 'short':
      return { lkey: LOCAL_STAG, addr, length: 4 };
    case 'invalid-lkey':
      return { lkey: UNKNOWN_LOCAL_STAG, addr, length: 8 };
    case 'valid':
      return { lkey: LOCAL_STAG, addr, length: 8 };
  }
}

/** The local data of the engine's WorkRequest for `op`, the `index`-th of the program. */
function localDataOf(op: Operation, index: number): Partial<WorkRequest> {
  const localData = traitsOf(op.kind).localData;
  switch (localData) {
    case 'payload':
      return { payload: payloadBytes(op) };
    case 'read-data':
      return {
        length: 8,
        localSTag: LOCAL_STAG,
        localAddr: LOCAL_BASE + BigInt(LOCAL_SLOT * index),
      };
    case 'atomic-original':
      return { local: localSgeOf(op, index) };
    case 'none':
      return {};
    default:
      throw new RangeError(`unknown local data ${String(localData satisfies never)}`);
  }
}

/** The engine's WorkRequest for operation `op`, the `index`-th of the program. */
export function engineWorkRequest(op: Operation, index: number): WorkRequest {
  const traits = traitsOf(op.kind);
  const remoteAddr = REMOTE_BASE + BigInt(op.target ?? DEFAULT_TARGET);
  const rkey =
    op.rkey === 'invalid' ? UNKNOWN_STAG : op.rkey === 'window' ? WINDOW_STAG : REMOTE_STAG;
  return {
    wrId: wrIdOf(index),
    opcode: traits.opcode,
    ...(traits.remote ? { remoteAddr, rkey } : {}),
    ...(traits.invalidatesWindow ? { invalidateRkey: WINDOW_STAG } : {}),
    ...localDataOf(op, index),
    // IBV_SEND_SOLICITED means something only to a request that consumes a receive.
    ...(op.solicited === true && traits.consumesReceive !== null ? { solicited: true } : {}),
    ...operandsOf(op.kind, op),
  } as WorkRequest;
}

/** The remote access in force at the first post: the bring-up's, or a modify's before it. */
function responderQpAccessAtFirstPost(scenario: Scenario): readonly Access[] {
  let access = scenario.responderQpAccess ?? REMOTE_RIGHTS;
  for (const step of scenario.program) {
    if (step.do === 'post-send') break;
    if (step.do === 'modify' && step.side === 'responder') access = step.access;
  }
  return access;
}

/**
 * The scenario's memory window as the engine binds it: over its range of the MR, from before the
 * first request (every program binds before it posts), associated with the QP it was
 * bound on when it is of type 2 (IBTA 1.5 §10.6.7.2.1), and invalidated before the first
 * request posted after a `local-invalidate` step (§10.6.7.2.4).
 */
function windowsOf(scenario: Scenario): ResponderWindow[] {
  let bind: Extract<Step, { do: 'bind-mw' }> | undefined;
  let posted = 0;
  let invalidatedBefore: number | undefined;
  for (const step of scenario.program) {
    if (step.do === 'bind-mw') bind ??= step;
    if (step.do === 'post-send' && step.side !== 'responder') posted += step.wrs.length;
    if (step.do === 'local-invalidate') invalidatedBefore ??= posted;
  }
  if (bind === undefined) return [];
  return [
    {
      parent: REMOTE_STAG,
      stag: WINDOW_STAG,
      baseTaggedOffset: REMOTE_BASE + BigInt(bind.range?.at ?? 0),
      length: bind.range?.length ?? MR_LENGTH,
      access: WINDOW_ACCESS,
      ...(bind.type === 2
        ? { streamId: bind.side === 'responder' ? RESPONDER_STREAM : REQUESTER_STREAM }
        : {}),
      ...(invalidatedBefore === undefined ? {} : { invalidatedBefore }),
    },
  ];
}

/** The engine's memory regions, named as the wire lines name them. */
export const ENGINE_REGIONS: readonly WireRegion[] = [
  { name: 'remote', stag: REMOTE_STAG, base: REMOTE_BASE },
  { name: 'local', stag: LOCAL_STAG, base: LOCAL_BASE },
];

/**
 * The engine's VerbsScenario for a scenario (the first `wrCount` work requests). The MR's
 * remote rights are those both the MR and the responder QP grant (IBTA 10.6.3.3: a remote
 * access needs the QP's enable as well as the region's).
 */
export function verbsScenarioOf(
  scenario: Scenario,
  wrCount = Number.POSITIVE_INFINITY,
): VerbsScenario {
  const buffer = initialBuffer(scenario);
  const qpAccess = responderQpAccessAtFirstPost(scenario);
  const access = scenario.remoteAccess
    .filter((a) => !QP_GATED_RIGHTS.has(a) || qpAccess.includes(a))
    .reduce((mask, name) => mask | ACCESS_FLAGS[name], 0);
  // A receive posted after the request met RNR NAKs counts if a retry finds it.
  const postedAt = receivePostTimes(scenario);
  const receives = scenario.program
    .filter((s) => s.do === 'post-recv')
    .map((s, j) => ({
      id: recvIdOf(j),
      length: s.for === 'write-imm' ? writeImmediateReceiveLength(scenario.device) : 8,
      servedBy: servedByRetry(scenario, postedAt[j] ?? 0),
    }))
    .filter((r) => r.servedBy.served)
    .map(({ id, length }) => ({ id, length }));
  const operations = workRequestsOf(scenario).slice(0, wrCount);
  const depth = scenario.initiatorDepth ?? DEFAULT_IRD_ORD;
  const windows = windowsOf(scenario);
  return {
    responder: {
      buffers: [
        {
          stag: REMOTE_STAG,
          baseTaggedOffset: REMOTE_BASE,
          length: MR_LENGTH,
          access,
          protectionDomain: PROTECTION_DOMAIN,
          contents: buffer.slice(GUARD, GUARD + MR_LENGTH),
        },
      ],
      receives,
      ...(windows.length === 0 ? {} : { windows }),
      ird: DEFAULT_IRD_ORD,
      protectionDomain: PROTECTION_DOMAIN,
      ...(scenario.responderExtensions === undefined
        ? {}
        : {
            supportsAtomics: scenario.responderExtensions.atomics,
            supportsImmediateData: scenario.responderExtensions.immediateData,
          }),
    },
    requester: {
      ord: depth,
      localBuffers: [
        {
          stag: LOCAL_STAG,
          baseTaggedOffset: LOCAL_BASE,
          length: LOCAL_SLOT * Math.max(1, operations.length),
          access: ACCESS_FLAGS.LOCAL_WRITE,
          protectionDomain: PROTECTION_DOMAIN,
        },
      ],
    },
    workRequests: operations.map(engineWorkRequest),
  };
}

function project(scenario: Scenario, wrCount?: number): TransportOutcome {
  const verbs = verbsScenarioOf(scenario, wrCount);
  return DEVICES[scenario.device].transport === 'roce' ? projectRoce(verbs) : projectIwarp(verbs);
}

/** The responder buffer after the run: the MR as the engine left it, Sends placed, guards. */
function memoryAfter(scenario: Scenario, projected: TransportOutcome): Uint8Array {
  const buffer = initialBuffer(scenario);
  const region = projected.memory.get(REMOTE_STAG);
  if (region !== undefined) buffer.set(region, GUARD);
  // A Send's receive buffer is the target word, a write-with-immediate's the word at
  // IMMEDIATE_RECEIVE_OFFSET (kernel/execute.ts posts them there); on iWARP the Immediate
  // Data Message places its 8 bytes in it (RFC 7306 §6.3).
  for (const wc of projected.responder.completions)
    if (wc.data !== undefined && wc.data.byteLength > 0)
      buffer.set(
        wc.data.subarray(0, 8),
        GUARD + (wc.opcode === 'RECV_RDMA_WITH_IMM' ? IMMEDIATE_RECEIVE_OFFSET : DEFAULT_TARGET),
      );
  return buffer;
}

/**
 * The concurrency step on the engine: every QP's FetchAdds as one serialisation (any
 * serialisation of atomics gives the same sum and the same set of fetched values),
 * starting from the memory the program left. A `hammer` step comes last in a program.
 */
function engineHammer(
  scenario: Scenario,
  memory: Uint8Array,
  step: Extract<Step, { do: 'hammer' }>,
): { succeeded: number; fetched: bigint[]; memory: Uint8Array } {
  const base = verbsScenarioOf(scenario, 0);
  const [region] = base.responder.buffers;
  if (region === undefined) throw new Error('the responder has no region');
  const total = step.qps * step.count;
  const verbs: VerbsScenario = {
    ...base,
    responder: {
      ...base.responder,
      buffers: [{ ...region, contents: memory.slice(GUARD, GUARD + MR_LENGTH) }],
    },
    workRequests: Array.from({ length: total }, (_, i) => ({
      wrId: BigInt(i),
      opcode: 'ATOMIC_FETCH_AND_ADD' as const,
      remoteAddr: REMOTE_BASE + BigInt(DEFAULT_TARGET),
      rkey: REMOTE_STAG,
      add: step.add,
    })),
  };
  const out =
    DEVICES[scenario.device].transport === 'roce' ? projectRoce(verbs) : projectIwarp(verbs);
  const done = out.requester.completions.filter((c) => c.status === 'SUCCESS');
  const after = memory.slice();
  const live = out.memory.get(REMOTE_STAG);
  if (live !== undefined) after.set(live, GUARD);
  return {
    succeeded: done.length,
    fetched: done.flatMap((c) => (c.atomicOriginal === undefined ? [] : [c.atomicOriginal])),
    memory: after,
  };
}

/**
 * An RDMA Write posted on the responder back into the requester's buffer: flushed when
 * the responder QP is in ERR; when only the requester is, it drops the request (IBTA
 * 10.3.1: a QP in the Error state discards incoming packets), so the responder retries
 * until its retry count is exceeded and goes to ERR itself; else it succeeds.
 */
function responderWrite(wrId: bigint, state: Record<Side, string>): WorkCompletion {
  if (state.responder === 'ERR') return errorCompletion(wrId, 'WR_FLUSH_ERR');
  if (state.requester === 'ERR') {
    state.responder = 'ERR';
    return errorCompletion(wrId, 'RETRY_EXC_ERR');
  }
  return {
    wrId,
    status: 'SUCCESS',
    opcode: 'RDMA_WRITE',
    byteLen: 8,
    immData: undefined,
    flags: [],
  };
}

/**
 * How long after its post the program's RNR'd request completes, by the timers: a
 * request no receive served fails once its rnr_retry retries are spent (one RNR timer
 * each); one a late receive served completes at the retry that found it; anything else
 * at once.
 */
function predictedRnrElapsedMs(scenario: Scenario, projected: TransportOutcome): number {
  const { rnr } = timersOf(scenario);
  if (projected.failure === 'no-receive-buffer')
    return (scenario.rnrRetry ?? DEFAULT_RNR_RETRY) * rnr;
  const late = receivePostTimes(scenario)
    .map((at) => servedByRetry(scenario, at))
    .filter((s) => s.served && s.atRetry > 0);
  return Math.max(0, ...late.map((s) => s.atRetry * rnr));
}

/**
 * The engine as a side of the program (program.ts): a view over the projection of the
 * whole program, each step reading what the projection says the program sees.
 */
function engineSide(scenario: Scenario): ImmediateSide {
  const projected = project(scenario);
  // QP states as the program goes; a responder post can change the responder's.
  const state: Record<Side, string> = {
    requester: projected.requester.qpState,
    responder: projected.responder.qpState,
  };
  const completions: Record<Side, WorkCompletion[]> = {
    requester: [...projected.requester.completions],
    // Completions of requests posted on the responder come after the projection's own.
    responder: [...projected.responder.completions],
  };
  const consumed: Record<Side, number> = { requester: 0, responder: 0 };
  const refused = new Set<bigint>([
    ...projected.notExpressible.map((e) => e.wrId),
    ...projected.invalid.map((e) => e.wrId),
  ]);
  let memory = memoryAfter(scenario, projected);
  const invalidatesRemotely = workRequestsOf(scenario).some(
    (op) => traitsOf(op.kind).invalidatesWindow,
  );
  const windowSteps = (): WindowStepResult => ({ result: 'ok', status: 'SUCCESS' });
  // The SRQ (IBTA 1.5 §10.2.9): one receive queue, its receives taken in posting order by
  // whichever QP a Send arrives on, so the projection's one stream consumes them in the
  // order the program posts its Sends; `consumers` names the QP of each consuming request.
  const consumers = consumingQps(scenario);
  const receivesServed = projected.responder.completions.filter(
    (wc) => wc.status === 'SUCCESS' && wc.opcode?.startsWith('RECV') === true,
  ).length;
  const srq = { posted: 0, consumed: 0, consumersPosted: 0, limit: 0, reached: false };
  let recvCompletions = 0;
  return {
    postSend: (side, wrs, first) => {
      if (side === 'requester') {
        // ibv_modify_srq(3): the event comes once the WRs in the SRQ drop below srq_limit
        // (rxe_resp.c get_srq_wqe, siw_qp_rx.c siw_rqe_get test it as each receive is
        // taken), once; ibv_query_srq(3): srq_limit then reads 0 (no longer armed).
        srq.consumersPosted += wrs.filter(
          (op) => traitsOf(op.kind).consumesReceive !== null,
        ).length;
        while (srq.consumed < Math.min(srq.consumersPosted, receivesServed)) {
          srq.consumed += 1;
          if (srq.limit > 0 && srq.posted - srq.consumed < srq.limit) {
            srq.limit = 0;
            srq.reached = true;
          }
        }
      }
      if (side === 'responder') {
        wrs.forEach((_, i) => {
          completions.responder.push(responderWrite(responderWrIdOf(first + i), state));
        });
        return { result: 'ok' };
      }
      const bad = wrs.map((_, i) => wrIdOf(first + i)).find((id) => refused.has(id));
      if (bad === undefined) return { result: 'ok' };
      const detail = projected.notExpressible.find((e) => e.wrId === bad)?.detail;
      return { result: 'not-expressible', ...(detail === undefined ? {} : { note: detail }) };
    },
    postRecv: () => {
      srq.posted += 1;
    },
    nextCompletion: (side) => {
      const wc = completions[side][consumed[side]];
      if (wc === undefined) return undefined;
      consumed[side] += 1;
      const isReceive = side === 'responder' && wc.opcode?.startsWith('RECV') === true;
      const qp =
        scenario.srq === true && side === 'responder'
          ? ((isReceive ? consumers[recvCompletions++] : undefined) ?? 'first')
          : undefined;
      return {
        completion: observedCompletion(wc, {
          imm: wc.immData?.host,
          immRaw: wc.immData?.network,
          vendorErr: 0,
          invalidated:
            invalidatesRemotely && wc.status === 'SUCCESS' && wc.opcode === 'RECV'
              ? windowName(wc.invalidatedRkey ?? 0)
              : undefined,
          qp,
        }),
        // An atomic's original value; a Read's data: the target word after the work
        // requests before it.
        fetched: (index, op) =>
          traitsOf(op.kind).localData === 'atomic-original'
            ? wc.atomicOriginal
            : wordAt(memoryAfter(scenario, project(scenario, index)), op.target ?? DEFAULT_TARGET),
        elapsedMs: () => predictedRnrElapsedMs(scenario, projected),
      };
    },
    queryState: (side) => state[side],
    modify: () => 'ok',
    sleep: () => {},
    armSolicited: () => {},
    // IBTA 1.5 §11.4.2.2: a CQ armed for solicited completions signals the next receive
    // completion with the Solicited Event, or an unsuccessful completion. The completions
    // the program has not polled yet are the ones that arrive after the arm.
    cqEvent: (side) =>
      completions[side]
        .slice(consumed[side])
        .some((wc) => wc.solicited === true || wc.status !== 'SUCCESS'),
    hammer: (step) => {
      const before = wordAt(memory, DEFAULT_TARGET);
      const result = engineHammer(scenario, memory, step);
      memory = result.memory;
      return { post: 'ok', succeeded: result.succeeded, fetched: result.fetched, before };
    },
    // The engine binds and invalidates the window in the projection (windowsOf): the
    // requests themselves succeed (the catalogue binds a free window once, IBTA 1.5
    // o10-37.2.30, and invalidates only a bound type 2 one, o10-37.2.26).
    bindMw: windowSteps,
    srqLimit: (limit) => {
      srq.limit = limit;
      return 'ok';
    },
    srqEvent: () => {
      const reached = srq.reached;
      srq.reached = false;
      return { reached, limit: String(srq.limit) };
    },
    // requireScenario refuses a local-invalidate without a type 2 window bound before it.
    localInvalidate: windowSteps,
    memory: () => memory,
    wire: () =>
      scenario.captureWire
        ? projected.iwarpWire.map((w) => wireLine(w.from, w.message, ENGINE_REGIONS)).join('\n')
        : undefined,
  };
}

/** The requester QP of each request that consumes a receive, in posting order. */
function consumingQps(scenario: Scenario): RequesterQp[] {
  return scenario.program.flatMap((step) =>
    step.do === 'post-send' && step.side !== 'responder'
      ? step.wrs
          .filter((op) => traitsOf(op.kind).consumesReceive !== null)
          .map(() => step.qp ?? 'first')
      : [],
  );
}

/** How a completion names an rkey a Send with Invalidate invalidated. */
function windowName(rkey: number): string {
  return rkey === WINDOW_STAG ? 'window' : formatValue(rkey);
}

/** What the reference engine says a verbs program sees for `scenario`. */
export function expectedOutcome(scenario: Scenario): Outcome {
  requireScenario(scenario);
  return runProgramNow(scenario, engineSide(scenario));
}
