/**
 * Runs a scenario's program on a real device, step by step, and reports the same
 * observation fields as the engine side (expected.ts): each post's return and the work
 * request bad_wr names, every completion field a program reads, QP states, the responder's
 * memory inside and just outside the MR, and (siw) the messages on the wire.
 */

import { type WireRegion, wireLine } from '../../judge/wire.js';
import { VerbsError } from '../../verbs/errors.js';
import { formatValue } from '../compare-format.js';
import { type QpCreateFlag, traitsOf } from '../operations.js';
import { planOf, runProgram } from '../program.js';
import {
  connectionOf,
  DEFAULT_TARGET,
  GUARD,
  initialBuffer,
  MR_LENGTH,
  type Outcome,
  qpAttributesOf,
  type Scenario,
  usesSecondQp,
  watchedOffsets,
  wordAt,
  workRequestsOf,
} from '../scenario.js';
import { type Capture, startCapture } from './capture.js';
import { DeviceSide, requesterMemory } from './device-side.js';
import { hammer } from './hammer.js';
import { connectLoopback, type LoopbackPair } from './loopback.js';
import { connectUdPair } from './ud-pair.js';

/**
 * The requester QP's creation flags for the operations the scenario posts (IBTA 1.5
 * placement, Send with Invalidate), and for the window requests it posts on it (a BIND_MW
 * or LOCAL_INV through ibv_wr_* needs IBV_QP_EX_WITH_BIND_MW / _LOCAL_INV).
 */
function createFlagsOf(scenario: Scenario): Partial<Record<QpCreateFlag, true>> {
  const flags: Partial<Record<QpCreateFlag, true>> = {};
  for (const op of workRequestsOf(scenario)) {
    const flag = traitsOf(op.kind).createFlag;
    if (flag !== null) flags[flag] = true;
  }
  for (const step of scenario.program)
    if ((step.do === 'bind-mw' || step.do === 'local-invalidate') && step.side === 'requester')
      flags.memoryWindowOps = true;
  return flags;
}

/**
 * The outcome of a scenario whose bring-up the device or library refused (a kernel or
 * rdma-core without the IBTA 1.5 operations: no flush MR right, no ibv_wr_flush): one
 * field `bringup` = the errno and the call, and the responder memory as it stayed.
 */
function refusedBringUp(scenario: Scenario, error: VerbsError): Outcome {
  const fields: Record<string, string> = { bringup: `${error.code} ${error.call}` };
  const memory = initialBuffer(scenario);
  for (const offset of watchedOffsets(scenario))
    fields[`mem[${offset}]`] = formatValue(wordAt(memory, offset));
  return { fields, note: error.message };
}

/**
 * Runs `scenario` on its device; connection failures are thrown, protocol outcomes
 * returned. A scenario with IBTA 1.5 operations whose bring-up the device or library
 * refuses (a typed VerbsError) returns that refusal as its outcome (`bringup`).
 */
export async function runOnKernel(scenario: Scenario): Promise<Outcome> {
  try {
    return await (scenario.ud === true ? runUd(scenario) : runConnected(scenario));
  } catch (error) {
    // A UD bring-up refused (siw has RC QPs only) is the scenario's outcome too.
    const refusable = Object.keys(createFlagsOf(scenario)).length > 0 || scenario.ud === true;
    if (error instanceof VerbsError && refusable) return refusedBringUp(scenario, error);
    throw error;
  }
}

/** A `ud` scenario: its program on the device's UD pair (kernel/ud-pair.ts). */
async function runUd(scenario: Scenario): Promise<Outcome> {
  const pair = await connectUdPair(scenario.on ?? scenario.device);
  try {
    const initial = initialBuffer(scenario);
    const remoteMr = pair.allocateMemory(initial.length, scenario.remoteAccess, {
      offset: GUARD,
      length: MR_LENGTH,
    });
    remoteMr.allocation.set(initial);
    const plan = planOf(scenario);
    const localMr = requesterMemory(plan, pair.allocateMemory, ['LOCAL_WRITE']);
    const side = new DeviceSide({
      scenario,
      plan,
      requester: { qp: pair.requester, cq: pair.requesterCq },
      local: localMr,
      remote: remoteMr,
      responder: { ...pair.receivers.first, mr: remoteMr },
      ud: pair,
    });
    return await runProgram(scenario, side);
  } finally {
    await pair.close();
  }
}

async function runConnected(scenario: Scenario): Promise<Outcome> {
  let capture: Capture | undefined;
  const placementOps = createFlagsOf(scenario);
  const pair = await connectLoopback(scenario.on ?? scenario.device, {
    extended: scenario.postPath === 'ex',
    connect: connectionOf(scenario),
    ...(Object.keys(placementOps).length === 0 ? {} : { placementOps }),
    ...(scenario.responderQpAccess === undefined
      ? {}
      : { responderAccess: scenario.responderQpAccess }),
    ...qpAttributesOf(scenario),
    ...(scenario.srq === true ? { srq: true, secondPair: usesSecondQp(scenario) } : {}),
    ...(scenario.captureWire
      ? {
          beforeConnect: async (port: number) => {
            capture = await startCapture(port);
          },
        }
      : {}),
  });
  try {
    let pcap: Uint8Array | undefined;
    const outcome = await runOnPair(scenario, pair, async (regions) => {
      if (capture === undefined) return undefined;
      const stopped = await capture.stop();
      capture = undefined;
      pcap = stopped.pcap;
      return stopped.messages.map((m) => wireLine(m.from, m.message, regions)).join('\n');
    });
    return pcap === undefined ? outcome : { ...outcome, pcap };
  } finally {
    await (capture as Capture | undefined)?.stop().catch(() => undefined);
    await pair.close();
  }
}

/** The program on a connected pair: the device side over its QPs and memory. */
async function runOnPair(
  scenario: Scenario,
  pair: LoopbackPair,
  stopCapture: (regions: WireRegion[]) => Promise<string | undefined>,
): Promise<Outcome> {
  // Responder memory: the MR is the middle 32 bytes, a guard word on each side (addon-owned,
  // only that range registered: safe on every Node, as the requester memory below).
  const initial = initialBuffer(scenario);
  const remoteMr = pair.allocateMemory(initial.length, scenario.remoteAccess, {
    offset: GUARD,
    length: MR_LENGTH,
  });
  remoteMr.allocation.set(initial);
  // REMOTE_WRITE: the responder's Writes back land in the requester's first slot.
  const plan = planOf(scenario);
  const localMr = requesterMemory(plan, pair.allocateMemory, ['LOCAL_WRITE', 'REMOTE_WRITE']);
  const side = new DeviceSide({
    scenario,
    plan,
    requester: { qp: pair.requester, cq: pair.requesterCq },
    local: localMr,
    remote: remoteMr,
    responder: {
      qp: pair.responder,
      cq: pair.responderCq,
      mr: remoteMr,
      ...(pair.srq === undefined ? {} : { srq: pair.srq }),
      ...(pair.second === undefined ? {} : { second: pair.second.responder }),
    },
    ...(pair.second === undefined ? {} : { secondRequester: pair.second.requester }),
    hammer: async (step) => {
      const before = remoteMr.allocation.readBigUInt64LE(GUARD + DEFAULT_TARGET);
      return { ...(await hammer(scenario, pair, remoteMr, step)), before };
    },
    wire: () =>
      stopCapture([
        { name: 'remote', stag: remoteMr.rkey, base: remoteMr.addr },
        { name: 'local', stag: localMr.lkey, base: localMr.addr },
      ]),
  });
  try {
    return await runProgram(scenario, side);
  } finally {
    side.dispose();
  }
}
