/**
 * The reference side of a scenario: the engine's verbs projection for the scenario's
 * transport (RoCEv2 for rxe, iWARP per RFC 7306 for siw), reduced to the same Outcome
 * fields the kernel side reports.
 */

import { projectIwarp, projectRoce, type VerbsScenario } from '../engine/projection/project.js';
import type { WorkRequest } from '../engine/requester/work-request.js';
import { ACCESS_FLAGS } from '../engine/verbs-model/access-flags.js';
import { DEVICES, type Outcome, type Scenario, writeImmediateReceiveLength } from './scenario.js';
import { type WireRegion, wireLine } from './wire.js';

/** The engine's stand-ins for what the kernel assigns (any values do; these are fixed). */
const REMOTE_STAG = 0x1a2b3c4d;
/** An 8-aligned virtual address, as a registered Buffer has. */
const REMOTE_BASE = 0x7f3a_1000_0000n;
const REMOTE_LENGTH = 32;
const PROTECTION_DOMAIN = 1;
const RECEIVE_ID = 0x52n;
/** The requester's buffer (RDMA Read lands there). */
const LOCAL_STAG = 0x5e6f7a8b;
const LOCAL_BASE = 0x7f3a_2000_0000n;
const WR_ID = 0x57n;

function littleEndianWord(value: bigint): Uint8Array {
  const bytes = new Uint8Array(8);
  new DataView(bytes.buffer).setBigUint64(0, value, true);
  return bytes;
}

function workRequestOf(scenario: Scenario): WorkRequest {
  const op = scenario.operation;
  const remoteAddr = REMOTE_BASE + BigInt(scenario.remoteOffset);
  switch (op.kind) {
    case 'FETCH_AND_ADD':
      return {
        wrId: WR_ID,
        opcode: 'ATOMIC_FETCH_AND_ADD',
        remoteAddr,
        rkey: REMOTE_STAG,
        add: op.add,
      };
    case 'CMP_AND_SWP':
      return {
        wrId: WR_ID,
        opcode: 'ATOMIC_CMP_AND_SWP',
        remoteAddr,
        rkey: REMOTE_STAG,
        compare: op.compare,
        swap: op.swap,
      };
    case 'RDMA_WRITE_WITH_IMM':
      return {
        wrId: WR_ID,
        opcode: 'RDMA_WRITE_WITH_IMM',
        remoteAddr,
        rkey: REMOTE_STAG,
        payload: littleEndianWord(op.payload),
        immData: op.imm,
      };
    case 'SEND_WITH_IMM':
      return {
        wrId: WR_ID,
        opcode: 'SEND_WITH_IMM',
        payload: littleEndianWord(op.payload),
        immData: op.imm,
      };
    case 'RDMA_WRITE':
      return {
        wrId: WR_ID,
        opcode: 'RDMA_WRITE',
        remoteAddr,
        rkey: REMOTE_STAG,
        payload: littleEndianWord(op.payload),
      };
    case 'SEND':
      return { wrId: WR_ID, opcode: 'SEND', payload: littleEndianWord(op.payload) };
    case 'RDMA_READ':
      return {
        wrId: WR_ID,
        opcode: 'RDMA_READ',
        remoteAddr,
        rkey: REMOTE_STAG,
        length: 8,
        localSTag: LOCAL_STAG,
        localAddr: LOCAL_BASE,
      };
  }
}

/** The engine's memory regions, named as the wire lines name them. */
export const ENGINE_REGIONS: readonly WireRegion[] = [
  { name: 'remote', stag: REMOTE_STAG, base: REMOTE_BASE },
  { name: 'local', stag: LOCAL_STAG, base: LOCAL_BASE },
];

/** The engine's VerbsScenario for a scenario. */
export function verbsScenarioOf(scenario: Scenario): VerbsScenario {
  const contents = new Uint8Array(REMOTE_LENGTH);
  contents.set(littleEndianWord(scenario.initial), scenario.remoteOffset);
  const op = scenario.operation.kind;
  const receives = op === 'SEND_WITH_IMM' || op === 'RDMA_WRITE_WITH_IMM' || op === 'SEND';
  const receiveLength = op === 'RDMA_WRITE_WITH_IMM' ? writeImmediateReceiveLength(scenario) : 8;
  return {
    responder: {
      buffers: [
        {
          stag: REMOTE_STAG,
          baseTaggedOffset: REMOTE_BASE,
          length: REMOTE_LENGTH,
          access: scenario.remoteAccess.reduce((mask, name) => mask | ACCESS_FLAGS[name], 0),
          protectionDomain: PROTECTION_DOMAIN,
          contents,
        },
      ],
      receives: receives ? [{ id: RECEIVE_ID, length: receiveLength }] : [],
      protectionDomain: PROTECTION_DOMAIN,
    },
    requester: {
      localBuffers: [
        {
          stag: LOCAL_STAG,
          baseTaggedOffset: LOCAL_BASE,
          length: 8,
          access: ACCESS_FLAGS.LOCAL_WRITE,
          protectionDomain: PROTECTION_DOMAIN,
        },
      ],
    },
    workRequests: [workRequestOf(scenario)],
  };
}

/** What the reference engine says a verbs user sees for `scenario`. */
export function expectedOutcome(scenario: Scenario): Outcome {
  const projected =
    DEVICES[scenario.device].transport === 'roce'
      ? projectRoce(verbsScenarioOf(scenario))
      : projectIwarp(verbsScenarioOf(scenario));
  const [received] = projected.responder.completions;
  // A Send lands in the receive buffer, which the kernel side places over the target word.
  const sendLike =
    scenario.operation.kind === 'SEND_WITH_IMM' || scenario.operation.kind === 'SEND';
  const memory =
    sendLike && received?.data !== undefined
      ? received.data
      : projected.memory.get(REMOTE_STAG)?.subarray(scenario.remoteOffset);
  const memoryAfter =
    memory === undefined || memory.byteLength < 8
      ? scenario.initial
      : new DataView(memory.buffer, memory.byteOffset, memory.byteLength).getBigUint64(0, true);
  const wire = scenario.captureWire
    ? {
        wire: projected.iwarpWire
          .map((w) => wireLine(w.from, w.message, ENGINE_REGIONS))
          .join('\n'),
      }
    : {};
  const [notExpressible] = projected.notExpressible;
  if (notExpressible !== undefined) {
    return {
      post: 'not-expressible',
      note: notExpressible.detail,
      memoryAfter,
      requesterQpState: projected.requester.qpState,
      ...wire,
    };
  }
  const [sent] = projected.requester.completions;
  const atomic =
    scenario.operation.kind === 'FETCH_AND_ADD' || scenario.operation.kind === 'CMP_AND_SWP';
  const ok = sent?.status === 'SUCCESS';
  return {
    post: 'ok',
    requesterStatus: sent?.status ?? 'no completion',
    ...(ok && sent.opcode !== undefined ? { requesterOpcode: sent.opcode } : {}),
    ...(ok && atomic ? { requesterByteLen: sent.byteLen } : {}),
    ...(ok && atomic && sent.atomicOriginal !== undefined ? { fetched: sent.atomicOriginal } : {}),
    ...(ok && scenario.operation.kind === 'RDMA_READ'
      ? { fetched: readData(projected, scenario.remoteOffset) }
      : {}),
    ...(received === undefined
      ? {}
      : {
          responderStatus: received.status,
          ...(received.status === 'SUCCESS' && received.opcode !== undefined
            ? { responderOpcode: received.opcode, responderByteLen: received.byteLen }
            : {}),
          ...(received.immData === undefined ? {} : { responderImm: received.immData.host }),
        }),
    memoryAfter,
    requesterQpState: projected.requester.qpState,
    ...wire,
  };
}

/**
 * The 8 bytes an RDMA Read brought back. The projection keeps the requester's memory to
 * itself, so: on iWARP the Read Response payload the engine emitted; on RoCE the remote
 * word (a Read does not change it, and the engine's responder sends exactly it).
 */
function readData(projected: ReturnType<typeof projectIwarp>, remoteOffset: number): bigint {
  const response = projected.iwarpWire.find((w) => w.message.kind === 'rdma-read-response');
  const bytes =
    response !== undefined && 'payload' in response.message
      ? response.message.payload
      : projected.memory.get(REMOTE_STAG)?.subarray(remoteOffset);
  if (bytes === undefined || bytes.byteLength < 8) return 0n;
  return new DataView(bytes.buffer, bytes.byteOffset, 8).getBigUint64(0, true);
}
