/**
 * Runs one scenario on a real device and reports what a verbs user observes: whether the
 * post was accepted, both sides' completions, the fetched value, the responder's memory
 * and the requester QP's state afterwards.
 */

import type { WorkCompletion } from '../../verbs/completion.js';
import type { Cq } from '../../verbs/cq.js';
import { VerbsError } from '../../verbs/errors.js';
import type { SendWr } from '../../verbs/qp.js';
import { type Outcome, type Scenario, writeImmediateReceiveLength } from '../scenario.js';
import { type WireRegion, wireLine } from '../wire.js';
import { type Capture, startCapture } from './capture.js';
import { connectLoopback } from './loopback.js';

/** Where write-with-immediate's receive buffer sits in the responder's 32-byte buffer. */
const IMMEDIATE_RECEIVE_OFFSET = 24;
/** How long to wait for a completion; generous, since the guest runs under TCG. */
const COMPLETION_TIMEOUT_MS = 10_000;
/** After the requester completes, how long a responder completion may still take. */
const RESPONDER_GRACE_MS = 200;

async function pollOne(cq: Cq, timeoutMs: number): Promise<WorkCompletion | undefined> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const [wc] = cq.poll(1);
    if (wc !== undefined) return wc;
    if (Date.now() >= deadline) return undefined;
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

function sendWrOf(scenario: Scenario, local: SendWr['sgList'], remote: SendWr['remote']): SendWr {
  const op = scenario.operation;
  switch (op.kind) {
    case 'FETCH_AND_ADD':
      return { opcode: 'ATOMIC_FETCH_AND_ADD', sgList: local, remote, add: op.add };
    case 'CMP_AND_SWP':
      return {
        opcode: 'ATOMIC_CMP_AND_SWP',
        sgList: local,
        remote,
        compare: op.compare,
        swap: op.swap,
      };
    case 'RDMA_WRITE_WITH_IMM':
      return { opcode: 'RDMA_WRITE_WITH_IMM', sgList: local, remote, immData: op.imm };
    case 'SEND_WITH_IMM':
      return { opcode: 'SEND_WITH_IMM', sgList: local, immData: op.imm };
    case 'RDMA_WRITE':
      return { opcode: 'RDMA_WRITE', sgList: local, remote };
    case 'SEND':
      return { opcode: 'SEND', sgList: local };
    case 'RDMA_READ':
      return { opcode: 'RDMA_READ', sgList: local, remote };
  }
}

/** Runs `scenario` on its device; connection failures are thrown, protocol outcomes returned. */
export async function runOnKernel(scenario: Scenario): Promise<Outcome> {
  let capture: Capture | undefined;
  const pair = await connectLoopback(
    scenario.device,
    scenario.postPath === 'ex',
    scenario.captureWire
      ? async (port) => {
          capture = await startCapture(port);
        }
      : undefined,
  );
  try {
    const op = scenario.operation;
    // Responder memory: the 64-bit word in host (little-endian) order at remoteOffset.
    const remoteBuffer = Buffer.alloc(32);
    remoteBuffer.writeBigUInt64LE(scenario.initial, scenario.remoteOffset);
    const remoteMr = pair.registerMemory(remoteBuffer, scenario.remoteAccess);
    // Requester memory: where a fetched or read value lands, or the payload to send.
    const localBuffer = Buffer.alloc(8);
    if ('payload' in op) localBuffer.writeBigUInt64LE(op.payload);
    const localMr = pair.registerMemory(localBuffer, ['LOCAL_WRITE']);
    const regions: WireRegion[] = [
      { name: 'remote', stag: remoteMr.rkey, base: remoteMr.addr },
      { name: 'local', stag: localMr.lkey, base: localMr.addr },
    ];
    const wire = async (): Promise<Pick<Outcome, 'wire'>> => {
      if (capture === undefined) return {};
      const messages = await capture.stop();
      capture = undefined;
      return { wire: messages.map((m) => wireLine(m.from, m.message, regions)).join('\n') };
    };
    if (op.kind === 'SEND_WITH_IMM' || op.kind === 'SEND') {
      pair.responder.postRecv({ sgList: [remoteMr.sge(scenario.remoteOffset, 8)] });
    } else if (op.kind === 'RDMA_WRITE_WITH_IMM') {
      // Write-with-immediate consumes a receive WQE: none on RoCE, 8 bytes on iWARP, clear
      // of the target word (an RFC 7306 Immediate Data message delivers its 8 bytes there).
      const length = writeImmediateReceiveLength(scenario);
      pair.responder.postRecv({
        sgList: length === 0 ? [] : [remoteMr.sge(IMMEDIATE_RECEIVE_OFFSET, length)],
      });
    }
    const wr = sendWrOf(scenario, [localMr.sge(0, 8)], remoteMr.remote(scenario.remoteOffset));
    try {
      pair.requester.postSend(wr, scenario.postPath);
    } catch (error) {
      if (!(error instanceof VerbsError)) throw error;
      return {
        post: error.code,
        memoryAfter: remoteBuffer.readBigUInt64LE(scenario.remoteOffset),
        requesterQpState: pair.requester.query().state ?? 'UNKNOWN',
        ...(await wire()),
      };
    }
    const requesterWc = await pollOne(pair.requesterCq, COMPLETION_TIMEOUT_MS);
    const responderWc = await pollOne(pair.responderCq, RESPONDER_GRACE_MS);
    const fetches =
      op.kind === 'FETCH_AND_ADD' || op.kind === 'CMP_AND_SWP' || op.kind === 'RDMA_READ';
    const atomic = op.kind === 'FETCH_AND_ADD' || op.kind === 'CMP_AND_SWP';
    return {
      post: 'ok',
      requesterStatus: requesterWc?.status ?? 'no completion',
      ...(requesterWc?.ok ? { requesterOpcode: requesterWc.opcode ?? 'unknown' } : {}),
      ...(requesterWc?.ok && atomic ? { requesterByteLen: requesterWc.byteLen } : {}),
      ...(requesterWc?.ok && fetches ? { fetched: localBuffer.readBigUInt64LE(0) } : {}),
      ...(responderWc === undefined
        ? {}
        : {
            responderStatus: responderWc.status,
            ...(responderWc.ok ? { responderOpcode: responderWc.opcode ?? 'unknown' } : {}),
            ...(responderWc.ok ? { responderByteLen: responderWc.byteLen } : {}),
            ...(responderWc.immData === undefined ? {} : { responderImm: responderWc.immData }),
          }),
      memoryAfter: remoteBuffer.readBigUInt64LE(scenario.remoteOffset),
      requesterQpState: pair.requester.query().state ?? 'UNKNOWN',
      ...(await wire()),
    };
  } finally {
    await (capture as Capture | undefined)?.stop().catch(() => []);
    await pair.close();
  }
}
