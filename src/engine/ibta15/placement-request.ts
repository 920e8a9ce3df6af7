/**
 * An IBTA 1.5 ATOMIC WRITE or FLUSH work request (IBTA 1.5 Vol. 1 Annex A19, Memory
 * Placement Extensions; NOT RFC 7306, which iWARP follows and which has neither) run
 * against the responder's registered memory, for the RoCE projection (project.ts).
 * The checks and the memory effect are memory-placement.ts's; this module finds the
 * region by R_Key, turns the verbs request into a placement operation, writes the
 * effect back into the live region and says what the requester's verbs program sees.
 *
 * What the projection predicts on the wire (to-roce.ts): ATOMIC WRITE is one
 * RC_ATOMIC_WRITE (0x1d) packet, RETH (DMA Length 8) and the 8 bytes; the responder
 * acknowledges it with an ACK (AETH). FLUSH is one RC_FLUSH (0x1c) packet, FETH then
 * RETH, no payload; the responder answers with an RDMA READ Response Only carrying no
 * data (rxe_comp.c check_ack accepts a read response for IB_WR_FLUSH) once every
 * earlier request is placed, which is why a FLUSH completing means the Writes before
 * it are placed (A19's ordering: a FLUSH waits for prior requests, as an RDMA Read
 * does). A failed check is a NAK: Invalid Request for a QP that does not enable the
 * operation or a misaligned ATOMIC WRITE, Remote Access Error for the R_Key
 * (failure-table.ts rows `qp-access-disabled`, `misaligned-atomic`, `access-rights`).
 */

import { ACCESS_FLAGS, type AccessFlag } from '../../ibverbs/access-flags.js';
import type { EngineFailure } from '../errors/failure-table.js';
import type { TaggedBufferTable } from '../memory/tagged-buffer.js';
import type { WorkCompletion } from '../projection/work-completion.js';
import type { PlacementRequest } from '../requester/work-request.js';
import { executePlacement, type PlacementOperation } from './memory-placement.js';

/** What one placement request did: its completion, or the failure that NAKed it. */
export type PlacementResult =
  | { readonly ok: true; readonly completion: WorkCompletion }
  | { readonly ok: false; readonly failure: EngineFailure };

function accessNames(mask: number): AccessFlag[] {
  return (Object.keys(ACCESS_FLAGS) as AccessFlag[]).filter(
    (name) => (mask & ACCESS_FLAGS[name]) !== 0,
  );
}

/**
 * Runs `wr` against `buffers` (the responder's regions; a successful ATOMIC WRITE
 * changes the live region) on a responder QP whose remote access enables are `qpAccess`
 * (an ACCESS_FLAGS mask; default every enable).
 */
export function runPlacementRequest(
  wr: PlacementRequest,
  buffers: TaggedBufferTable,
  qpAccess: number = -1 >>> 0,
): PlacementResult {
  const region = buffers.get(wr.rkey);
  const offset = region === undefined ? 0 : Number(wr.remoteAddr - region.baseTaggedOffset);
  const op: PlacementOperation =
    wr.opcode === 'ATOMIC_WRITE'
      ? {
          kind: 'ATOMIC_WRITE',
          offset,
          value: wr.atomicValue,
          ...(region === undefined ? { rkey: 'invalid' as const } : {}),
        }
      : {
          kind: 'FLUSH',
          offset,
          length: Number(wr.flush.length),
          placement: wr.flush.placement ?? 'GLOBAL',
          selectivity: wr.flush.selectivity ?? 'RANGE',
          ...(region === undefined ? { rkey: 'invalid' as const } : {}),
        };
  const out = executePlacement(op, {
    contents: region?.memory ?? new Uint8Array(0),
    access: accessNames(region?.access ?? 0),
    qpAccess: accessNames(qpAccess),
  });
  if (out.failure !== undefined || out.opcode === undefined)
    return { ok: false, failure: out.failure ?? 'access-rights' };
  if (region !== undefined) region.memory.set(out.memory);
  return {
    ok: true,
    completion: {
      wrId: wr.wrId,
      status: 'SUCCESS',
      opcode: out.opcode,
      byteLen: out.byteLen,
      immData: undefined,
      flags: [],
    },
  };
}
