/**
 * Which IBV_WC status the Requester's work request gets when the peer answers it with a
 * Terminate (iWARP), in two models:
 *
 * - `reference`: the status of the same failure class on RoCE (IBTA NAK classes, as
 *   rxe reports them: rxe_resp.c maps Invalid Request to IB_WC_REM_INV_REQ_ERR and
 *   Remote Access to IB_WC_REM_ACCESS_ERR), so one failure projects to one status on
 *   both transports. Terminates with no RoCE analogue get REM_OP_ERR.
 * - `siw`: what Linux siw reports. siw_qp_rx.c `siw_proc_terminate` only logs the
 *   received Terminate and returns -ECONNRESET; the connection is dropped, the QP moves to
 *   ERROR and siw_qp.c `siw_sq_flush` completes the ORQ and SQ entries with
 *   SIW_WC_WR_FLUSH_ERR, which libsiw (rdma-core providers/siw/siw.c) reports as
 *   WR_FLUSH_ERR. So every outstanding request, including the one that caused the
 *   Terminate, completes with WR_FLUSH_ERR.
 */
import { requireName, requireObject } from '../../arguments.js';
import type { Terminate } from '../../codec/iwarp/messages.js';
import { terminateCodeInfo } from '../../codec/iwarp/terminate-codes.js';
import type { WcStatus } from '../../ibverbs/wc-status.js';
import { FAILURE_TABLE } from '../errors/failure-table.js';

/** Which implementation's reporting to follow. */
export type TerminateStatusModel = 'reference' | 'siw';

/** The Requester status for a received Terminate under `model`. */
export function terminateStatus(terminate: Terminate, model: TerminateStatusModel): WcStatus {
  requireObject('engine', 'terminate', terminate);
  requireName('engine', 'Terminate status model', { reference: 0, siw: 0 }, model, 'model');
  if (model === 'siw') return 'WR_FLUSH_ERR';
  const code = terminateCodeInfo(terminate.layer, terminate.errorType, terminate.errorCode);
  if (code === undefined) return 'REM_OP_ERR';
  // Several failures share a code (e.g. no-buffer); the first row's status is the class's.
  const row = FAILURE_TABLE.find((r) => r.terminateCodeId === code.id);
  return row?.roceRequesterStatus ?? 'REM_OP_ERR';
}
