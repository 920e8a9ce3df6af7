/**
 * The reference side of a scenario: an engine session (engine/session/) brought up as the
 * device side brings up its QPs, each program step one call of it, for the scenario's
 * transport (RoCEv2 for rxe, iWARP per RFC 7306 for siw). It reports the same observation
 * fields the device side does. Everything operation-specific comes from the traits table
 * (operations.ts); the verbs rules (SRQ, RNR retries, the Write back to a requester in ERR)
 * are the session's.
 */

import type { VerbsScenario } from '../engine/projection/project.js';
import type { WorkCompletion } from '../engine/projection/work-completion.js';
import type { LocalSge, WorkRequest } from '../engine/requester/work-request.js';
import { EngineSession, type EngineSessionOptions } from '../engine/session/session.js';
import { ACCESS_FLAGS } from '../ibverbs/access-flags.js';
import { type WireRegion, wireLine } from '../judge/wire.js';
import type { Access } from '../verbs/mr.js';
import { requireScenario } from './arguments.js';
import { formatValue } from './compare-format.js';
import { observedCompletion } from './observe.js';
import { OPERATION_TRAITS, operandsOf, traitsOf } from './operations.js';
import {
  type ImmediateSide,
  type ProgramPlan,
  planOf,
  runProgramNow,
  type WindowStepResult,
} from './program.js';
import { timerClass } from './rnr-timing.js';
import {
  DEFAULT_TARGET,
  DEVICES,
  GUARD,
  initialBuffer,
  LOCAL_SLOT,
  MR_LENGTH,
  type Operation,
  type Outcome,
  payloadBytes,
  type RequesterQp,
  receiveSgeOf,
  recvIdOf,
  responderWrIdOf,
  type Scenario,
  type Step,
  wordAt,
  wrIdOf,
} from './scenario.js';
import { rcMembership, udEngineSide } from './ud-engine-side.js';

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

/** The engine's memory regions, named as the wire lines name them. */
export const ENGINE_REGIONS: readonly WireRegion[] = [
  { name: 'remote', stag: REMOTE_STAG, base: REMOTE_BASE },
  { name: 'local', stag: LOCAL_STAG, base: LOCAL_BASE },
];

const maskOf = (rights: readonly Access[]): number =>
  rights.reduce((mask, name) => mask | ACCESS_FLAGS[name], 0);

/**
 * The engine's connection for `scenario`, brought up as the device side brings up its QPs
 * (kernel/execute.ts): the responder's MR over `contents` (the MR without its guards), the
 * requester's buffer of one slot per work request, the depths, timers and extensions.
 * The MR's remote rights in force are those both the MR and the responder QP grant (IBTA
 * 10.6.3.3), the session checks them.
 */
function sessionOptionsOf(
  scenario: Scenario,
  plan: ProgramPlan,
  contents: Uint8Array,
): EngineSessionOptions {
  return {
    transport: DEVICES[scenario.device].transport === 'roce' ? 'roce' : 'iwarp',
    responder: {
      buffers: [
        {
          stag: REMOTE_STAG,
          baseTaggedOffset: REMOTE_BASE,
          length: MR_LENGTH,
          access: maskOf(scenario.remoteAccess),
          protectionDomain: PROTECTION_DOMAIN,
          contents,
        },
      ],
      ird: DEFAULT_IRD_ORD,
      protectionDomain: PROTECTION_DOMAIN,
      qpAccess: maskOf(scenario.responderQpAccess ?? REMOTE_RIGHTS),
      qpGatedAccess: maskOf([...QP_GATED_RIGHTS]),
      ...(scenario.minRnrTimer === undefined ? {} : { minRnrTimer: scenario.minRnrTimer }),
      ...(scenario.srq === true ? { srq: true } : {}),
      ...(scenario.responderExtensions === undefined
        ? {}
        : {
            supportsAtomics: scenario.responderExtensions.atomics,
            supportsImmediateData: scenario.responderExtensions.immediateData,
          }),
    },
    requester: {
      ord: scenario.initiatorDepth ?? DEFAULT_IRD_ORD,
      ...(scenario.rnrRetry === undefined ? {} : { rnrRetry: scenario.rnrRetry }),
      localBuffers: [
        {
          stag: LOCAL_STAG,
          baseTaggedOffset: LOCAL_BASE,
          length: LOCAL_SLOT * plan.requesterSlots,
          access: ACCESS_FLAGS.LOCAL_WRITE,
          protectionDomain: PROTECTION_DOMAIN,
        },
      ],
    },
  };
}

/** The responder's buffer as the program reads it: the engine's MR between its guards. */
function guarded(scenario: Scenario, session: EngineSession): Uint8Array {
  const buffer = initialBuffer(scenario);
  const region = session.memory('responder').get(REMOTE_STAG);
  if (region !== undefined) buffer.set(region, GUARD);
  return buffer;
}

/**
 * The concurrency step on the engine: every QP's FetchAdds as one serialisation (any
 * serialisation of atomics gives the same sum and the same set of fetched values) on a
 * connection brought up like the program's over the memory the program left. A `hammer`
 * step comes last in a program.
 */
function engineHammer(
  scenario: Scenario,
  plan: ProgramPlan,
  memory: Uint8Array,
  step: Extract<Step, { do: 'hammer' }>,
): { succeeded: number; fetched: bigint[]; memory: Uint8Array } {
  const session = new EngineSession(
    sessionOptionsOf(scenario, plan, memory.slice(GUARD, GUARD + MR_LENGTH)),
  );
  session.post(
    'requester',
    Array.from({ length: step.qps * step.count }, (_, i) => ({
      wrId: BigInt(i),
      opcode: 'ATOMIC_FETCH_AND_ADD' as const,
      remoteAddr: REMOTE_BASE + BigInt(DEFAULT_TARGET),
      rkey: REMOTE_STAG,
      add: step.add,
    })),
  );
  const done: WorkCompletion[] = [];
  for (let wc = session.poll('requester'); wc !== undefined; wc = session.poll('requester'))
    if (wc.status === 'SUCCESS') done.push(wc);
  return {
    succeeded: done.length,
    fetched: done.flatMap((c) => (c.atomicOriginal === undefined ? [] : [c.atomicOriginal])),
    memory: guarded(scenario, session),
  };
}

/** The 8 bytes of the requester's buffer slot of the `index`-th work request. */
function localWord(session: EngineSession, index: number): bigint | undefined {
  const local = session.memory('requester').get(LOCAL_STAG);
  if (local === undefined) return undefined;
  return new DataView(local.buffer, local.byteOffset, local.byteLength).getBigUint64(
    LOCAL_SLOT * index,
    true,
  );
}

/**
 * The engine as a side of the program (program.ts): each step is one call of an engine
 * session (engine/session/), as each step of the device side is one verbs call.
 */
function engineSide(scenario: Scenario): { side: ImmediateSide; session: EngineSession } {
  const plan = planOf(scenario);
  const session = new EngineSession(
    sessionOptionsOf(scenario, plan, initialBuffer(scenario).slice(GUARD, GUARD + MR_LENGTH)),
  );
  // What a hammer step left (it runs on a connection of its own, after the program).
  let hammered: Uint8Array | undefined;
  const { invalidatesRemotely } = plan;
  const windowSteps = (): WindowStepResult => ({ result: 'ok', status: 'SUCCESS' });
  const side: ImmediateSide = {
    postSend: (side, wrs, first, qp) => {
      if (side === 'responder') {
        // An RDMA Write of 8 bytes back into the requester's buffer (kernel/execute.ts).
        session.post(
          'responder',
          wrs.map((_, i) => ({
            wrId: responderWrIdOf(first + i),
            opcode: 'RDMA_WRITE' as const,
            remoteAddr: LOCAL_BASE,
            rkey: LOCAL_STAG,
            payload: new Uint8Array(8),
          })),
        );
        return { result: 'ok' };
      }
      const requests = wrs.map((op, i) => engineWorkRequest(op, first + i));
      const { refused } = session.post('requester', requests, { via: qp });
      const bad = requests.find((wr) => refused.some((e) => e.wrId === wr.wrId));
      if (bad === undefined) return { result: 'ok' };
      const why = refused.find((e) => e.wrId === bad.wrId);
      return {
        result: 'not-expressible',
        ...(why?.reason === 'not-expressible' ? { note: why.detail } : {}),
      };
    },
    postRecv: (index, use) => {
      const sge = receiveSgeOf(scenario.device, use);
      session.postRecv('responder', {
        id: recvIdOf(index),
        length: sge.length,
        stag: REMOTE_STAG,
        addr: REMOTE_BASE + BigInt(sge.at),
      });
    },
    nextCompletion: (side) => {
      const wc = session.poll(side);
      if (wc === undefined) return undefined;
      return {
        completion: observedCompletion(wc, {
          imm: wc.immData?.host,
          immRaw: wc.immData?.network,
          vendorErr: 0,
          invalidated:
            invalidatesRemotely && wc.status === 'SUCCESS' && wc.opcode === 'RECV'
              ? windowName(wc.invalidatedRkey ?? 0)
              : undefined,
          qp:
            scenario.srq === true && side === 'responder'
              ? ((wc.via as RequesterQp | undefined) ?? 'first')
              : undefined,
        }),
        // An atomic's original value; a Read's data as it landed in its slot.
        fetched: (index, op) =>
          traitsOf(op.kind).localData === 'atomic-original'
            ? wc.atomicOriginal
            : localWord(session, index),
      };
    },
    // The engine's clock is its own (session.advance): the RNR waits the program made.
    timerOf: () => ({ timer: timerClass(scenario, session.rnrDelayMs()) }),
    queryState: (side) => session.query(side),
    modify: (side, access) => {
      session.modify(side, { access: maskOf(access) });
      return 'ok';
    },
    // The programs reregister the MR to the access it has (scenario.ts `rereg-mr`): the
    // verb succeeds and the region serves as before (IBTA 1.5 §11.2.8.3).
    reregMr: () => 'ok',
    // An RC QP joins no multicast group (IBTA 1.5 §11.3); `ud` programs run udEngineSide.
    mcast: (step) => rcMembership(scenario, step),
    sleep: (ms) => session.advance(ms),
    armSolicited: () => {},
    cqEvent: (side) => session.solicitedPending(side),
    hammer: (step) => {
      const memory = hammered ?? guarded(scenario, session);
      const result = engineHammer(scenario, plan, memory, step);
      hammered = result.memory;
      return {
        post: 'ok',
        succeeded: result.succeeded,
        fetched: result.fetched,
        before: wordAt(memory, DEFAULT_TARGET),
      };
    },
    // The requests themselves succeed (the catalogue binds a free window once, IBTA 1.5
    // o10-37.2.30, and invalidates only a bound type 2 one, o10-37.2.26).
    bindMw: (step) => {
      session.bindWindow(step.side, {
        parent: REMOTE_STAG,
        stag: WINDOW_STAG,
        baseTaggedOffset: REMOTE_BASE + BigInt(step.range?.at ?? 0),
        length: step.range?.length ?? MR_LENGTH,
        access: WINDOW_ACCESS,
        type: step.type,
      });
      return windowSteps();
    },
    // requireScenario refuses a local-invalidate without a type 2 window bound before it.
    localInvalidate: (side) => {
      session.invalidateWindow(side, WINDOW_STAG);
      return windowSteps();
    },
    srqLimit: (limit) => {
      session.srqLimit(limit);
      return 'ok';
    },
    srqEvent: () => {
      const { reached, limit } = session.srqEvent();
      return { reached, limit: String(limit) };
    },
    memory: () => hammered ?? guarded(scenario, session),
    wire: () =>
      scenario.captureWire
        ? session
            .wire()
            .iwarp.map((w) => wireLine(w.from, w.message, ENGINE_REGIONS))
            .join('\n')
        : undefined,
  };
  return { side, session };
}

/**
 * The engine's VerbsScenario for a scenario: the connection the engine session stands for
 * after the program's steps (the link's RoCE exchange projects it packet by packet).
 */
export function verbsScenarioOf(scenario: Scenario): VerbsScenario {
  requireScenario(scenario);
  const { side, session } = engineSide(scenario);
  runProgramNow(scenario, side);
  return session.scenario();
}

/** How a completion names an rkey a Send with Invalidate invalidated. */
function windowName(rkey: number): string {
  return rkey === WINDOW_STAG ? 'window' : formatValue(rkey);
}

/** What the reference engine says a verbs program sees for `scenario`. */
export function expectedOutcome(scenario: Scenario): Outcome {
  requireScenario(scenario);
  if (scenario.ud === true) return runProgramNow(scenario, udEngineSide(scenario));
  return runProgramNow(scenario, engineSide(scenario).side);
}
