/**
 * Every failure the engine can detect, as data: the Terminate code it becomes (by id
 * into the codec's RFC 5040 §4.8 table), which headers the Terminate copies, and the
 * RoCE NAK / verbs status the same failure produces on the other transport.
 */

import { requireKey } from '../../arguments.js';
import {
  RFC7306_HEADER_COPY_RULES,
  type TerminateCodeInfo,
  terminateCodeById,
} from '../../codec/iwarp/terminate-codes.js';
import type { AethNakCodeName } from '../../codec/roce/aeth.js';
import type { WcStatus } from '../../ibverbs/wc-status.js';

/** Failures detected by the Responder / Data Sink on an incoming message. */
export type EngineFailure =
  | 'invalid-ddp-version'
  | 'invalid-qn'
  | 'msn-out-of-range'
  | 'invalid-rdmap-version'
  | 'unexpected-opcode'
  | 'unsupported-atomic-opcode'
  | 'ird-exceeded'
  | 'no-receive-buffer'
  | 'immediate-data-length'
  | 'message-too-long'
  | 'invalid-stag'
  | 'stag-not-associated'
  | 'access-rights'
  | 'qp-access-disabled'
  | 'to-wrap'
  | 'base-bounds'
  | 'ddp-invalid-stag'
  | 'ddp-stag-not-associated'
  | 'ddp-to-wrap'
  | 'ddp-base-bounds'
  | 'stag-cannot-be-invalidated'
  | 'misaligned-atomic'
  | 'malformed-segment'
  | 'unexpected-response'
  | 'mpa-crc-error'
  | 'requester-local-error';

/** One row: what the failure becomes on each transport, with its justification. */
export interface FailureRow {
  readonly failure: EngineFailure;
  /** Stable id of the RFC 5040 §4.8 code in the codec's `TERMINATE_CODES`. */
  readonly terminateCodeId: string;
  /** Why this code (spec section). */
  readonly source: string;
  /** RFC 7306 §8.1: the D bit (Terminated DDP Header included). */
  readonly copiesDdpHeader: boolean;
  /** The R bit (Terminated RDMA Header included); RFC 7306 §8.1 item 2 says no. */
  readonly copiesRdmaHeader: boolean;
  /**
   * The IBTA NAK a RoCE responder sends for the same failure (IBTA Vol. 1 §9.7.5.2.8,
   * Table 44; rxe_resp.c `rxe_responder` error switch), when RoCE has such a case.
   */
  readonly roceNak: AethNakCodeName | undefined;
  /** The requester's IBV_WC status on RoCE for that NAK. */
  readonly roceRequesterStatus: WcStatus | undefined;
}

// RFC 7306 §8.1 item 2: errors on an incoming new-opcode message copy the DDP header only.
const INCOMING = RFC7306_HEADER_COPY_RULES[1]!;

/**
 * The failure table. Order of rows is the order of checks at the Responder (RFC 7306
 * §8.2: DDP fields, RDMA OpCode, RDMA Version, then the atomic-specific checks).
 */
export const FAILURE_TABLE: readonly FailureRow[] = [
  {
    failure: 'invalid-ddp-version',
    terminateCodeId: 'ddp.untagged.invalid-version',
    source: 'RFC 7306 §8.2 ("The DDP layer MUST validate all DDP Segment fields"), RFC 5041 §7.2',
    copiesDdpHeader: true,
    copiesRdmaHeader: false,
    roceNak: 'INVALID_REQUEST',
    roceRequesterStatus: 'REM_INV_REQ_ERR',
  },
  {
    failure: 'invalid-qn',
    terminateCodeId: 'ddp.untagged.invalid-qn',
    source:
      'RFC 7306 §8.2 (DDP fields), RFC 7306 §4.1 Figure 2 (queue of each opcode), RFC 5041 §7.2 Invalid QN',
    copiesDdpHeader: true,
    copiesRdmaHeader: false,
    roceNak: 'INVALID_REQUEST',
    roceRequesterStatus: 'REM_INV_REQ_ERR',
  },
  {
    failure: 'msn-out-of-range',
    terminateCodeId: 'ddp.untagged.invalid-msn-range',
    source:
      'RFC 5041 §5.3/§7.2: untagged messages are sequenced by MSN per queue; an MSN outside the expected range is Untagged Buffer Error 0x03',
    copiesDdpHeader: true,
    copiesRdmaHeader: false,
    roceNak: 'PSN_SEQUENCE_ERROR',
    roceRequesterStatus: undefined,
  },
  {
    failure: 'invalid-rdmap-version',
    terminateCodeId: 'rdmap.operation.invalid-version',
    source: 'RFC 7306 §8.2 ("The RDMA Version MUST be valid"), RFC 5040 §4.8 code 0x05',
    copiesDdpHeader: INCOMING.ddpHeader,
    copiesRdmaHeader: INCOMING.rdmaHeader,
    roceNak: 'INVALID_REQUEST',
    roceRequesterStatus: 'REM_INV_REQ_ERR',
  },
  {
    failure: 'unexpected-opcode',
    terminateCodeId: 'rdmap.operation.unexpected-opcode',
    source:
      'RFC 7306 §8.2 ("The RDMA OpCode MUST be valid") and §1.1 (capability probe sees Remote Operation Error / Unexpected OpCode); siw_qp_rx.c siw_get_hdr does the same for opcodes > 7',
    copiesDdpHeader: INCOMING.ddpHeader,
    copiesRdmaHeader: INCOMING.rdmaHeader,
    roceNak: 'INVALID_REQUEST',
    roceRequesterStatus: 'REM_INV_REQ_ERR',
  },
  {
    failure: 'unsupported-atomic-opcode',
    terminateCodeId: 'rdmap.operation.unexpected-opcode',
    source:
      'RFC 7306 §5.2.1 ("an error MUST be surfaced" for an unsupported AOpCode; no code named, §1.1 names Unexpected OpCode for unsupported operations)',
    copiesDdpHeader: INCOMING.ddpHeader,
    copiesRdmaHeader: INCOMING.rdmaHeader,
    roceNak: 'INVALID_REQUEST',
    roceRequesterStatus: 'REM_INV_REQ_ERR',
  },
  {
    failure: 'ird-exceeded',
    terminateCodeId: 'ddp.untagged.invalid-msn-no-buffer',
    source:
      'RFC 7306 §5.2 (atomics share QN 1 and its IRD), RFC 5040 §5.4/§4.8: a Request with no QN 1 buffer is a DDP Untagged Buffer Error, no buffer available',
    copiesDdpHeader: true,
    copiesRdmaHeader: false,
    roceNak: 'INVALID_REQUEST',
    roceRequesterStatus: 'REM_INV_REQ_ERR',
  },
  {
    failure: 'no-receive-buffer',
    terminateCodeId: 'ddp.untagged.invalid-msn-no-buffer',
    source:
      'RFC 7306 §6.3 (Immediate Data MUST consume one Untagged Buffer on QN 0), RFC 5041 §7.2 (no buffer: Untagged Buffer Error 0x02)',
    copiesDdpHeader: true,
    copiesRdmaHeader: false,
    roceNak: undefined,
    roceRequesterStatus: 'RNR_RETRY_EXC_ERR',
  },
  {
    failure: 'immediate-data-length',
    terminateCodeId: 'rdmap.operation.unspecified',
    source:
      'RFC 7306 §6.3 ("The Remote Peer MUST check that ... include exactly 8 bytes"); no code named, so Remote Operation Error / Unspecified',
    copiesDdpHeader: INCOMING.ddpHeader,
    copiesRdmaHeader: INCOMING.rdmaHeader,
    roceNak: 'INVALID_REQUEST',
    roceRequesterStatus: 'REM_INV_REQ_ERR',
  },
  {
    failure: 'message-too-long',
    terminateCodeId: 'ddp.untagged.message-too-long',
    source:
      'RFC 5041 §7.2 / RFC 5040 §4.8 DDP Untagged Buffer Error 0x05. Divergence: Linux siw (siw_qp_rx.c siw_send_check_ntoh, "receive space short") sends 0x02 "no buffer available" and completes the receive with LOC_LEN_ERR',
    copiesDdpHeader: true,
    copiesRdmaHeader: false,
    roceNak: 'INVALID_REQUEST',
    roceRequesterStatus: 'REM_INV_REQ_ERR',
  },
  {
    failure: 'invalid-stag',
    terminateCodeId: 'rdmap.protection.invalid-stag',
    source: 'RFC 5040 §4.8 Remote Protection Error 0x00',
    copiesDdpHeader: INCOMING.ddpHeader,
    copiesRdmaHeader: INCOMING.rdmaHeader,
    roceNak: 'REMOTE_ACCESS_ERROR',
    roceRequesterStatus: 'REM_ACCESS_ERR',
  },
  {
    failure: 'stag-not-associated',
    terminateCodeId: 'rdmap.protection.stag-not-associated',
    source: 'RFC 5040 §4.8 Remote Protection Error 0x03',
    copiesDdpHeader: INCOMING.ddpHeader,
    copiesRdmaHeader: INCOMING.rdmaHeader,
    roceNak: 'REMOTE_ACCESS_ERROR',
    roceRequesterStatus: 'REM_ACCESS_ERR',
  },
  {
    failure: 'access-rights',
    terminateCodeId: 'rdmap.protection.access-rights',
    source: 'RFC 5040 §4.8 Remote Protection Error 0x02',
    copiesDdpHeader: INCOMING.ddpHeader,
    copiesRdmaHeader: INCOMING.rdmaHeader,
    roceNak: 'REMOTE_ACCESS_ERROR',
    roceRequesterStatus: 'REM_ACCESS_ERR',
  },
  {
    // The responder QP's remote access enables (qp_access_flags), checked before the
    // R_Key: IBTA 1.5 Vol. 1 §10.6.3.3 makes a remote access need the QP's enable as well
    // as the region's right, and a request the QP does not enable is not a protection
    // fault of the region but an operation this receive queue does not support: NAK
    // Invalid Request (§9.7.5.2.8, Table 44; as public sources cite them), which the
    // requester reports as REM_INV_REQ_ERR (RDMAmojo's ibv_poll_cq: "qp_access_flags in
    // remote QP wasn't configured to support this operation"). rxe does so:
    // rxe_resp.c check_op_valid -> check_qp_attr_access -> RESPST_ERR_UNSUPPORTED_OPCODE ->
    // do_class_ac_error(AETH_NAK_INVALID_REQ, IB_WC_REM_INV_REQ_ERR). iWARP has no QP
    // enables of its own (RFC 5040 §4.8 knows the STag's access rights only), so the
    // Terminate is the access-rights one, as for the region. This row comes after
    // `access-rights`: a received Terminate with that code reads as it (terminate-status.ts
    // takes the first row of a code).
    failure: 'qp-access-disabled',
    terminateCodeId: 'rdmap.protection.access-rights',
    source:
      'IBTA 1.5 Vol. 1 §10.6.3.3 (QP remote access enables), §9.7.5.2.8 (NAK Invalid Request); rxe_resp.c check_op_valid (RESPST_ERR_UNSUPPORTED_OPCODE); on iWARP RFC 5040 §4.8 Remote Protection Error 0x02',
    copiesDdpHeader: INCOMING.ddpHeader,
    copiesRdmaHeader: INCOMING.rdmaHeader,
    roceNak: 'INVALID_REQUEST',
    roceRequesterStatus: 'REM_INV_REQ_ERR',
  },
  {
    failure: 'to-wrap',
    terminateCodeId: 'rdmap.protection.to-wrap',
    source: 'RFC 5040 §4.8 Remote Protection Error 0x04',
    copiesDdpHeader: INCOMING.ddpHeader,
    copiesRdmaHeader: INCOMING.rdmaHeader,
    roceNak: 'REMOTE_ACCESS_ERROR',
    roceRequesterStatus: 'REM_ACCESS_ERR',
  },
  {
    failure: 'base-bounds',
    terminateCodeId: 'rdmap.protection.base-or-bounds',
    source: 'RFC 5040 §4.8 Remote Protection Error 0x01',
    copiesDdpHeader: INCOMING.ddpHeader,
    copiesRdmaHeader: INCOMING.rdmaHeader,
    roceNak: 'REMOTE_ACCESS_ERROR',
    roceRequesterStatus: 'REM_ACCESS_ERR',
  },
  {
    failure: 'ddp-invalid-stag',
    terminateCodeId: 'ddp.tagged.invalid-stag',
    source:
      'RFC 5041 §7.1 (tagged placement of an RDMA Write is checked by DDP), Tagged Buffer Error 0x00',
    copiesDdpHeader: true,
    copiesRdmaHeader: false,
    roceNak: 'REMOTE_ACCESS_ERROR',
    roceRequesterStatus: 'REM_ACCESS_ERR',
  },
  {
    failure: 'ddp-stag-not-associated',
    terminateCodeId: 'ddp.tagged.stag-not-associated',
    source: 'RFC 5041 §7.1 Tagged Buffer Error 0x02',
    copiesDdpHeader: true,
    copiesRdmaHeader: false,
    roceNak: 'REMOTE_ACCESS_ERROR',
    roceRequesterStatus: 'REM_ACCESS_ERR',
  },
  {
    failure: 'ddp-to-wrap',
    terminateCodeId: 'ddp.tagged.to-wrap',
    source: 'RFC 5041 §7.1 Tagged Buffer Error 0x03',
    copiesDdpHeader: true,
    copiesRdmaHeader: false,
    roceNak: 'REMOTE_ACCESS_ERROR',
    roceRequesterStatus: 'REM_ACCESS_ERR',
  },
  {
    failure: 'ddp-base-bounds',
    terminateCodeId: 'ddp.tagged.base-or-bounds',
    source: 'RFC 5041 §7.1 Tagged Buffer Error 0x01',
    copiesDdpHeader: true,
    copiesRdmaHeader: false,
    roceNak: 'REMOTE_ACCESS_ERROR',
    roceRequesterStatus: 'REM_ACCESS_ERR',
  },
  {
    failure: 'stag-cannot-be-invalidated',
    terminateCodeId: 'rdmap.operation.stag-cannot-be-invalidated',
    source:
      'RFC 5040 §4.8 Remote Operation Error 0x09 (Send with Invalidate of an unknown or invalid STag)',
    copiesDdpHeader: true,
    copiesRdmaHeader: false,
    roceNak: 'INVALID_REQUEST',
    roceRequesterStatus: 'REM_INV_REQ_ERR',
  },
  {
    failure: 'misaligned-atomic',
    terminateCodeId: 'rdmap.operation.catastrophic-stream',
    source:
      'RFC 7306 §8.2: RDMA Layer Remote Operation Error, "Catastrophic error, localized to RDMAP Stream"; IBTA: misaligned atomic is NAK Invalid Request (rxe_resp.c RESPST_ERR_MISALIGNED_ATOMIC)',
    copiesDdpHeader: INCOMING.ddpHeader,
    copiesRdmaHeader: INCOMING.rdmaHeader,
    roceNak: 'INVALID_REQUEST',
    roceRequesterStatus: 'REM_INV_REQ_ERR',
  },
  {
    failure: 'malformed-segment',
    terminateCodeId: 'rdmap.operation.unspecified',
    source:
      'RFC 7306 §8.2 ("The DDP layer MUST validate all DDP Segment fields"): a segment too short for its headers has no more specific code; Remote Operation Error / Unspecified',
    copiesDdpHeader: true,
    copiesRdmaHeader: false,
    roceNak: 'INVALID_REQUEST',
    roceRequesterStatus: 'REM_INV_REQ_ERR',
  },
  {
    // Checked before any DDP field (RFC 5044 §7.2: an FPDU whose CRC fails is not passed
    // up), so it comes first in the order of checks of the stream.
    failure: 'mpa-crc-error',
    terminateCodeId: 'llp.mpa.crc-error',
    source:
      'RFC 5044 §7.2 (an FPDU whose CRC does not match is not delivered to DDP) and §8 (the error is reported to the ULP; RFC 5040 §4.8 LLP layer, MPA Error Type, code 0x02 CRC Error); the segment cannot be trusted, so no header is copied',
    copiesDdpHeader: false,
    copiesRdmaHeader: false,
    // RoCE's ICRC failure is a silent drop (IBTA Vol. 1 §9.8.2, as rxe_icrc.c does): no NAK.
    roceNak: undefined,
    roceRequesterStatus: undefined,
  },
  {
    // Detected by the Requester, not the Responder: an Atomic Response whose original
    // value cannot be placed (the local SGE's lkey or length is refused; the request
    // completes with a local error). RFC 7306 §8.1: "The Local Peer MUST send a Terminate
    // Message" for errors "not directly associated with an incoming Message" (item 1: no
    // header copied: the Atomic Response itself is valid, the fault is the local work
    // request's). RFC 5040 §4.8 Local Catastrophic Error, whose Error Code the IANA RDMAP
    // Errors registry (RFC 6580) lists as 0x0/0x0/ALL: the codec's 0x00. RoCE sends
    // nothing for a local error (IBTA 10.7.3: the WQE completes in error locally).
    failure: 'requester-local-error',
    terminateCodeId: 'rdmap.local-catastrophic',
    source:
      'RFC 7306 §8.1 item 1 (a Terminate for an error not tied to an incoming message, headers zero); RFC 5040 §4.8 Local Catastrophic Error; IBTA 10.7.3 (RoCE: a local error sends nothing)',
    copiesDdpHeader: false,
    copiesRdmaHeader: false,
    roceNak: undefined,
    roceRequesterStatus: undefined,
  },
  {
    failure: 'unexpected-response',
    terminateCodeId: 'rdmap.operation.unexpected-opcode',
    source:
      'RFC 7306 §5.2.2 ("when an invalid Atomic Operation Response Message is delivered ... an error is surfaced"): no outstanding request with that MSN',
    copiesDdpHeader: INCOMING.ddpHeader,
    copiesRdmaHeader: INCOMING.rdmaHeader,
    roceNak: undefined,
    roceRequesterStatus: undefined,
  },
];

const BY_FAILURE: ReadonlyMap<EngineFailure, FailureRow> = new Map(
  FAILURE_TABLE.map((row) => [row.failure, row]),
);

/** The row of `failure`. Every failure has exactly one row (a test checks it). */
export function failureRow(failure: EngineFailure): FailureRow {
  return requireKey('engine', 'engine failure', BY_FAILURE, failure);
}

/** The RFC 5040 §4.8 Terminate code of `failure`, from the codec's table. */
export function terminateCodeOf(failure: EngineFailure): TerminateCodeInfo {
  const id = failureRow(failure).terminateCodeId;
  // Every row's id is in the codec's table (failure-table tests check it); a missing one
  // is UnknownNameError from terminateCodeById.
  const code = terminateCodeById(id);
  return code;
}

/**
 * The failure for a refused tagged access, by the layer that checks it: STag and offset
 * of RDMA Write / Read Response segments are DDP fields (RFC 5041 §7.1); those of Read
 * and Atomic Requests are RDMAP header fields (RFC 5040 §4.8 Remote Protection Error).
 * Access rights are an RDMAP notion on both paths (RFC 5040 §4.8 code 0x02).
 */
export function taggedAccessFailure(
  failure: 'invalid-stag' | 'stag-not-associated' | 'access-rights' | 'to-wrap' | 'base-bounds',
  checkedBy: 'ddp' | 'rdmap',
): EngineFailure {
  if (checkedBy === 'rdmap' || failure === 'access-rights') return failure;
  return `ddp-${failure}`;
}
