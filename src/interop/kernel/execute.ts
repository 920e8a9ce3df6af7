/**
 * Runs a scenario's program on a real device, step by step, and reports the same
 * observation fields as the engine side (expected.ts): each post's return and the work
 * request bad_wr names, every completion field a program reads, QP states, the responder's
 * memory inside and just outside the MR, and (siw) the messages on the wire.
 */

import type { WorkCompletion } from '../../verbs/completion.js';
import type { Cq } from '../../verbs/cq.js';
import { VerbsError } from '../../verbs/errors.js';
import type { Mr, RemoteRef } from '../../verbs/mr.js';
import type { RawSge, SendWr } from '../../verbs/qp.js';
import { formatValue } from '../compare-format.js';
import { completionFields, hammerFields, missingCompletionField } from '../observe.js';
import { operandsOf, traitsOf } from '../operations.js';
import { orderingField } from '../ordering-trace.js';
import { timerClass } from '../rnr-timing.js';
import {
  DEFAULT_TARGET,
  GUARD,
  IMMEDIATE_RECEIVE_OFFSET,
  initialBuffer,
  LOCAL_SLOT,
  MR_LENGTH,
  type Operation,
  type Outcome,
  payloadBytes,
  recvIdOf,
  responderWrIdOf,
  type Scenario,
  type Side,
  watchedOffsets,
  wordAt,
  workRequestsOf,
  wrIdOf,
  writeImmediateReceiveLength,
} from '../scenario.js';
import { type WireRegion, wireLine } from '../wire.js';
import { type Capture, startCapture } from './capture.js';
import { hammer } from './hammer.js';
import { connectLoopback, type LoopbackPair } from './loopback.js';

/** How long a wait step waits by default; generous, since the guest runs under TCG. */
const COMPLETION_TIMEOUT_MS = 10_000;
/**
 * How long a wait waits for a completion nothing accepted can produce (a refused post, a
 * receive no accepted request consumes): long enough to see a stray one.
 */
const GRACE_MS = 200;

async function pollOne(cq: Cq, timeoutMs: number): Promise<WorkCompletion | undefined> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const [wc] = cq.poll(1);
    if (wc !== undefined) return wc;
    if (Date.now() >= deadline) return undefined;
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

/** The verbs SendWr for `op`, the `index`-th work request of the program. */
function sendWrOf(op: Operation, index: number, local: Mr, remote: Mr): SendWr {
  const traits = traitsOf(op.kind);
  const slot = LOCAL_SLOT * index;
  const length = traits.carriesPayload ? (op.length ?? 8) : 8;
  const sgList: (RawSge | ReturnType<Mr['sge']>)[] =
    op.local === 'none' || length === 0
      ? []
      : op.local === 'short'
        ? [local.sge(slot, 4)]
        : op.local === 'invalid-lkey'
          ? [{ addr: local.addr + BigInt(slot), length, lkey: (local.lkey ^ 0x00ff_0000) >>> 0 }]
          : [local.sge(slot, length)];
  const target: RemoteRef = {
    addr: remote.addr + BigInt(op.target ?? DEFAULT_TARGET),
    rkey: op.rkey === 'invalid' ? (remote.rkey ^ 0x00ff_0000) >>> 0 : remote.rkey,
  };
  return {
    wrId: wrIdOf(index),
    opcode: traits.opcode,
    sgList,
    ...(traits.remote ? { remote: target } : {}),
    ...(op.solicited ? { solicited: true } : {}),
    ...operandsOf(op.kind, op),
  };
}

/** The IBTA 1.5 operations the scenario posts, as the requester QP's creation flags. */
function placementOpsOf(scenario: Scenario): { atomicWrite?: boolean; flush?: boolean } {
  const kinds = new Set(workRequestsOf(scenario).map((op) => op.kind));
  return {
    ...(kinds.has('ATOMIC_WRITE') ? { atomicWrite: true } : {}),
    ...(kinds.has('FLUSH') ? { flush: true } : {}),
  };
}

/** True when the scenario posts an IBTA 1.5 memory placement operation. */
function usesPlacement(scenario: Scenario): boolean {
  return workRequestsOf(scenario).some((op) => traitsOf(op.kind).placement);
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
    return await runConnected(scenario);
  } catch (error) {
    if (error instanceof VerbsError && usesPlacement(scenario))
      return refusedBringUp(scenario, error);
    throw error;
  }
}

async function runConnected(scenario: Scenario): Promise<Outcome> {
  let capture: Capture | undefined;
  const placementOps = placementOpsOf(scenario);
  const pair = await connectLoopback(scenario.device, {
    extended: scenario.postPath === 'ex',
    ...(Object.keys(placementOps).length === 0 ? {} : { placementOps }),
    ...(scenario.responderQpAccess === undefined
      ? {}
      : { responderAccess: scenario.responderQpAccess }),
    ...(scenario.initiatorDepth === undefined ? {} : { initiatorDepth: scenario.initiatorDepth }),
    ...(scenario.rnrRetry === undefined ? {} : { rnrRetry: scenario.rnrRetry }),
    ...(scenario.minRnrTimer === undefined ? {} : { minRnrTimer: scenario.minRnrTimer }),
    ...(scenario.timeout === undefined ? {} : { timeout: scenario.timeout }),
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
    const outcome = await runProgram(scenario, pair, async (regions) => {
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

async function runProgram(
  scenario: Scenario,
  pair: LoopbackPair,
  stopCapture: (regions: WireRegion[]) => Promise<string | undefined>,
): Promise<Outcome> {
  const operations = workRequestsOf(scenario);
  // Responder memory: the MR is the middle 32 bytes, a guard word on each side (addon-owned,
  // only that range registered: safe on every Node, as the requester memory below).
  const initial = initialBuffer(scenario);
  const remoteMr = pair.allocateMemory(initial.length, scenario.remoteAccess, {
    offset: GUARD,
    length: MR_LENGTH,
  });
  const remoteBuffer = remoteMr.allocation;
  remoteBuffer.set(initial);
  // Requester memory: one 8-byte slot per work request (payload out, fetched value in).
  const localMr = pair.allocateMemory(LOCAL_SLOT * Math.max(1, operations.length), [
    'LOCAL_WRITE',
    'REMOTE_WRITE',
  ]);
  const localBuffer = localMr.buffer;
  operations.forEach((op, i) => {
    localBuffer.set(payloadBytes({ ...op, length: 16 }), LOCAL_SLOT * i);
  });
  const qp = { requester: pair.requester, responder: pair.responder };
  const cq = { requester: pair.requesterCq, responder: pair.responderCq };
  const fields: Record<string, string> = {};
  const taken: Record<Side, number> = { requester: 0, responder: 0 };
  // Completions actually polled (a wait that got none consumed nothing).
  const gotten: Record<Side, number> = { requester: 0, responder: 0 };
  let posted = 0;
  // When each side last posted (timed waits measure from there).
  const lastPost: Record<Side, number> = { requester: 0, responder: 0 };
  let responderPosted = 0;
  let responderAccepted = 0;
  let accepted = 0;
  let acceptedConsumers = 0;
  let received = 0;
  let postStep = 0;
  let queryStep = 0;
  let modifyStep = 0;
  let hammerStep = 0;
  for (const step of scenario.program) {
    switch (step.do) {
      case 'post-send': {
        postStep += 1;
        if (step.side === 'responder') {
          // 8 bytes of the responder's buffer written into the requester's first slot.
          const wrs = step.wrs.map(() => ({
            wrId: responderWrIdOf(responderPosted++),
            opcode: 'RDMA_WRITE' as const,
            sgList: [remoteMr.sge(0, 8)],
            remote: localMr.remote(0),
          }));
          lastPost.responder = performance.now();
          try {
            pair.responder.postSend(wrs);
            fields[`post${postStep}`] = 'ok';
            responderAccepted += wrs.length;
          } catch (error) {
            if (!(error instanceof VerbsError)) throw error;
            fields[`post${postStep}`] = error.code;
          }
          break;
        }
        const first = posted;
        const wrs = step.wrs.map((op, i) => sendWrOf(op, first + i, localMr, remoteMr));
        posted += step.wrs.length;
        lastPost.requester = performance.now();
        try {
          pair.requester.postSend(wrs, scenario.postPath);
          fields[`post${postStep}`] = 'ok';
          accepted += step.wrs.length;
          acceptedConsumers += step.wrs.filter((op) => traitsOf(op.kind).consumesReceive).length;
        } catch (error) {
          if (!(error instanceof VerbsError)) throw error;
          fields[`post${postStep}`] = error.code;
          // ibv_post_send names the refused request in bad_wr (the wrapper's badWrIndex).
          const refused = error.badWrIndex;
          if (refused !== undefined) {
            fields[`post${postStep}.bad_wr`] = `wr${first + refused + 1}`;
            accepted += refused; // those before bad_wr were posted
          }
        }
        break;
      }
      case 'post-recv': {
        const length = step.for === 'write-imm' ? writeImmediateReceiveLength(scenario.device) : 8;
        const at = step.for === 'write-imm' ? IMMEDIATE_RECEIVE_OFFSET : DEFAULT_TARGET;
        pair.responder.postRecv({
          wrId: recvIdOf(received++),
          sgList: length === 0 ? [] : [remoteMr.sge(at, length)],
        });
        break;
      }
      case 'wait':
        for (let k = 0; k < step.count; k++) {
          const n = ++taken[step.side];
          const producible =
            step.side === 'requester'
              ? accepted
              : Math.min(received, acceptedConsumers) + responderAccepted;
          const timeout =
            gotten[step.side] >= producible ? GRACE_MS : (step.timeoutMs ?? COMPLETION_TIMEOUT_MS);
          const wc = await pollOne(cq[step.side], timeout);
          if (wc === undefined) {
            Object.assign(fields, missingCompletionField(step.side, n));
            // Later completions of this wait cannot come either.
            for (let rest = k + 1; rest < step.count; rest++)
              Object.assign(fields, missingCompletionField(step.side, ++taken[step.side]));
            break;
          }
          gotten[step.side] += 1;
          const index = operations.findIndex((_, i) => wrIdOf(i) === wc.wrId);
          const op = step.side === 'requester' ? operations[index] : undefined;
          const fetches = op !== undefined && wc.ok && traitsOf(op.kind).fetches;
          Object.assign(
            fields,
            completionFields(
              step.side,
              n,
              {
                wrId: wc.wrId,
                status: wc.status,
                opcode: wc.opcode,
                byteLen: wc.byteLen,
                flags: wc.flags,
                imm: wc.immData,
                immRaw: wc.immData === undefined ? undefined : wc.immDataRaw,
                vendorErr: wc.vendorErr,
                fetched: fetches ? localBuffer.readBigUInt64LE(LOCAL_SLOT * index) : undefined,
              },
              op,
            ),
          );
          if (step.timed === true)
            fields[`${step.side}.wc${n}.timer`] = timerClass(
              scenario,
              performance.now() - lastPost[step.side],
            );
        }
        break;
      case 'query':
        queryStep += 1;
        fields[`q${queryStep}.${step.side}.state`] = qp[step.side].query().state ?? 'UNKNOWN';
        break;
      case 'modify':
        modifyStep += 1;
        try {
          qp[step.side].modify({ access: ['LOCAL_WRITE', ...step.access] });
          fields[`modify${modifyStep}`] = 'ok';
        } catch (error) {
          if (!(error instanceof VerbsError)) throw error;
          fields[`modify${modifyStep}`] = error.code;
        }
        break;
      case 'sleep':
        await new Promise((resolve) => setTimeout(resolve, step.ms));
        break;
      case 'hammer': {
        hammerStep += 1;
        const before = remoteBuffer.readBigUInt64LE(GUARD + DEFAULT_TARGET);
        const result = await hammer(scenario, pair, remoteMr, step);
        Object.assign(
          fields,
          hammerFields(hammerStep, result.post, result.succeeded, result.fetched, before, step.add),
        );
        break;
      }
    }
  }
  const memory = new Uint8Array(remoteBuffer);
  for (const offset of watchedOffsets(scenario))
    fields[`mem[${offset}]`] = formatValue(wordAt(memory, offset));
  if (workRequestsOf(scenario).length > 1) fields.ordering = orderingField(scenario, fields);
  const wire = await stopCapture([
    { name: 'remote', stag: remoteMr.rkey, base: remoteMr.addr },
    { name: 'local', stag: localMr.lkey, base: localMr.addr },
  ]);
  if (wire !== undefined) fields.wire = wire;
  return { fields };
}
