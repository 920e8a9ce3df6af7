/** The records of rxe (the kernel driver) and librxe (rdma-core's provider), in the order the judge tries them. */
import type { BehaviourRecord } from '../record.js';
import {
  RDMA_CORE_BEFORE_FLUSH,
  RXE_ATOMIC_WRITES,
  RXE_BEFORE_PLACEMENT,
  RXE_FLUSHES,
  SINCE_6_1,
  SINCE_RDMA_CORE_44,
} from './ranges.js';
import { silentlyDropped } from './rxe-wire.js';

export const RXE_RECORDS: readonly BehaviourRecord[] = [
  {
    id: 'rxe-no-atomic-write-before-6.2',
    class: 'unimplemented',
    rule: 'IBTA 1.5 Vol. 1 Annex A19 (ATOMIC WRITE, a 1.5 addition the 6.1 driver predates); ibv_wr_post(3) ibv_wr_atomic_write',
    unclear:
      'As a responder rxe before 6.2 drops the unknown opcode silently where IBTA Vol. 1 §9.7.5.2.2 asks for NAK Invalid Request; the requester side refuses cleanly (LOC_QP_OP_ERR)',
    provider: 'rxe',
    kernel: RXE_BEFORE_PLACEMENT,
    scope: [
      ...RXE_ATOMIC_WRITES,
      // The RoCE tester's ATOMIC WRITE requests to rxe as a responder.
      'roce-responder-atomic-write-zero-length',
      'roce-responder-atomic-write-misaligned',
    ],
    observed: {
      'requester.wc1.status': 'LOC_QP_OP_ERR',
      'requester.wc1.vendor_err': '0',
      'requester.wc1.{opcode,byte_len,flags}': '—',
      'requester.wc2.status': 'WR_FLUSH_ERR',
      'requester.wc2.vendor_err': '0',
      'requester.wc2.{opcode,flags,fetched}': '—',
      'q1.requester.state': 'ERR',
      'q{2,4}.responder.state': 'RTS',
      // No completion: the Write retries for ever (rxe-no-retry-exhaustion-towards-err-qp);
      // on the fixed rxe (patches/rxe-fixes/0001) its retries run out: RETRY_EXC_ERR.
      'responder.wc2.status': /^(none|RETRY_EXC_ERR)$/,
      'responder.wc2.{wr,vendor_err}': '—',
      'mem[8]': '0x0123456789abcdef',
    },
    why:
      'rxe before 6.2 has no ATOMIC WRITE: librxe of rdma-core 44 builds the request ' +
      '(ibv_wr_atomic_write exists since rdma-core 43) but the 6.1 kernel does not know the ' +
      'opcode and completes it locally with LOC_QP_OP_ERR, the requester QP in ERR; nothing ' +
      'reached the responder, so its QP stays in RTS, memory is untouched, and the Write it ' +
      'posts back towards the requester in ERR gets no completion within 2 s. From 6.2 ' +
      '("RDMA/rxe: Support RDMA Atomic Write operation") rxe executes it as the engine does. ' +
      'As a responder (the packet tester), rxe_opcode.c has no row for 0x1D and rxe_rcv drops ' +
      'the packet as an unknown opcode (no NAK, QP stays RTS), where the engine answers an ' +
      'operation the responder does not support with NAK Invalid Request. Memory is untouched ' +
      'either way, so CVE-2026-46114 cannot happen on these kernels',
    spec: 'IBTA 1.5 Vol. 1 Annex A19 (ATOMIC WRITE); Vol. 1 §9.7.5.2.2 (Invalid Request)',
    // The tester's observation: every step unanswered, memory and completions as predicted.
    matches: silentlyDropped('RTS'),
    codeAbsent: true,
  },
  {
    id: 'librxe-44-no-flush',
    class: 'unimplemented',
    rule: 'IBTA 1.5 Vol. 1 Annex A19 (FLUSH); ibv_wr_post(3) ibv_wr_flush (rdma-core 45 and later)',
    provider: 'rxe',
    kernel: SINCE_6_1,
    rdmaCore: RDMA_CORE_BEFORE_FLUSH,
    scope: RXE_FLUSHES,
    observed: { bringup: 'EOPNOTSUPP ibv_wr_flush' },
    nothingHappened: true,
    why:
      'rdma-core 44 has no ibv_wr_flush (it came in rdma-core 45), so the suite cannot create ' +
      'a requester QP for FLUSH (LibraryTooOldError, before anything is created): nothing is ' +
      'posted and memory is untouched. The 6.1 kernel would refuse anyway: no flush MR rights ' +
      '(ibv_reg_mr EINVAL) and no FLUSH opcode before 6.2 ("RDMA/rxe: Implement RC RDMA FLUSH ' +
      'service in requester side")',
    spec: 'IBTA 1.5 Vol. 1 Annex A19 (FLUSH)',
  },
  {
    id: 'rxe-no-flush-before-6.2',
    class: 'unimplemented',
    rule: 'IBTA 1.5 Vol. 1 Annex A19 (FLUSH, a 1.5 addition the 6.1 driver predates); ibv_reg_mr(3) (EINVAL for access flags the device does not support)',
    provider: 'rxe',
    kernel: RXE_BEFORE_PLACEMENT,
    // rdma-core 45 and later have ibv_wr_flush: on 6.1 that is the fixed build's 56.1
    // (patches/rdma-core-fixes); the line's own rdma-core 44 is librxe-44-no-flush's.
    rdmaCore: { from: '45' },
    scope: RXE_FLUSHES,
    observed: {
      bringup: 'EINVAL ibv_reg_mr',
      // rxe-flush-no-right-ex registers no flush right: its FLUSH is posted, and the 6.1
      // kernel completes the unknown opcode locally, as ATOMIC WRITE (rxe-no-atomic-write-
      // before-6.2); the Write back to the requester in ERR then retries (for ever on stock,
      // rxe-no-retry-exhaustion-towards-err-qp; RETRY_EXC_ERR on the fixed rxe).
      'requester.wc1.status': 'LOC_QP_OP_ERR',
      'responder.wc2.status': /^(none|RETRY_EXC_ERR)$/,
      'q{2,4}.responder.state': 'RTS',
    },
    nothingHappened: true,
    why:
      'rxe before 6.2 has no FLUSH ("RDMA/rxe: Implement RC RDMA FLUSH service in requester ' +
      'side", 6.2): rxe_reg_user_mr refuses the IBV_ACCESS_FLUSH_* rights it does not know ' +
      '(ibv_reg_mr EINVAL, before anything is posted), and a FLUSH posted on an MR without them ' +
      'completes locally with LOC_QP_OP_ERR, nothing reaching the responder. Measured on ' +
      '6.1.192 with rdma-core 56.1 (the fixed build of issue 33)',
    spec: 'IBTA 1.5 Vol. 1 Annex A19 (FLUSH)',
  },
  {
    id: 'librxe-atomic-alignment',
    class: 'allowed',
    rule: 'ibv_post_send(3): a request the provider can tell is invalid while posting fails at once (EINVAL, bad_wr); IBTA Vol. 1 o9-21 makes the misaligned atomic invalid either way',
    provider: 'rxe',
    kernel: SINCE_6_1,
    rdmaCore: SINCE_RDMA_CORE_44,
    scope: ['rxe-misaligned'],
    observed: { post1: 'EINVAL', 'post1.bad_wr': 'wr1' },
    nothingHappened: true,
    why:
      'librxe checks atomic alignment before posting (rdma-core providers/rxe/rxe.c validate_send_wr: ' +
      'remote_addr & 7 -> EINVAL, bad_wr = the request); the ibv_wr_* path has no such check and gets ' +
      'the NAK (rxe-misaligned-ex)',
    spec: 'IBTA o9-21 (atomic alignment); RFC 7306 §5.1',
  },
  {
    id: 'refused-post-keeps-rts',
    class: 'allowed',
    rule: 'ibv_post_send(3): a request refused at the post (bad_wr) is not posted, so nothing reaches the QP state (follows from librxe-atomic-alignment)',
    provider: 'rxe',
    kernel: SINCE_6_1,
    rdmaCore: SINCE_RDMA_CORE_44,
    scope: ['rxe-misaligned'],
    // The aligned FetchAdd posted next executes on the untouched QP: it fetches the word at
    // offset 8 as initialised and adds to it (so the misaligned word at 12 changes too).
    observed: {
      'q*.*.state': 'RTS',
      'requester.wc2.status': 'SUCCESS',
      'requester.wc2.opcode': 'FETCH_ADD',
      'requester.wc2.byte_len': '8',
      'requester.wc2.fetched': '0x89abcdef000000b5',
      'mem[8]': '0x9abcdf00222222d7',
      'mem[12]': '0x012345679abcdf00',
      'responder.wc2.status': 'SUCCESS',
      'responder.wc2.opcode': 'RDMA_WRITE',
      'responder.wc2.flags': 'none',
    },
    why:
      'the refused post never reached the wire, so no NAK moved either QP to ERR, and the next ' +
      'FetchAdd on the requester and the Write back from the responder succeed where the engine ' +
      '(which sent the misaligned request) flushes them',
  },
  {
    id: 'librxe-atomic-sge-length',
    class: 'allowed',
    rule: 'ibv_post_send(3): a request the provider can tell is invalid while posting fails at once (EINVAL, bad_wr); IBTA Vol. 1 §10.7.3 (local errors)',
    provider: 'rxe',
    kernel: SINCE_6_1,
    rdmaCore: SINCE_RDMA_CORE_44,
    scope: ['rxe-atomic-short-sge', 'rxe-atomic-no-sge'],
    observed: { post1: 'EINVAL', 'post1.bad_wr': 'wr1' },
    nothingHappened: true,
    why:
      'librxe refuses an atomic whose SGE list holds fewer than 8 bytes before posting ' +
      '(rdma-core providers/rxe/rxe.c validate_send_wr: atomic length < 8 -> EINVAL); the ibv_wr_* ' +
      'path has no such check and the request executes remotely (rxe-atomic-short-sge-ex)',
    spec: 'IBTA 10.7.3 (local errors)',
  },
  {
    id: 'librxe-refused-sge-keeps-rts',
    class: 'allowed',
    rule: 'ibv_post_send(3): a request refused at the post is not posted (follows from librxe-atomic-sge-length)',
    provider: 'rxe',
    kernel: SINCE_6_1,
    rdmaCore: SINCE_RDMA_CORE_44,
    scope: ['rxe-atomic-short-sge', 'rxe-atomic-no-sge'],
    // Nothing was sent for the refused request; the next FetchAdd executes on the intact QP,
    // which leaves the word where the engine's executed-then-failed request leaves it.
    observed: {
      'q*.requester.state': 'RTS',
      'requester.wc2.status': 'SUCCESS',
      'requester.wc2.opcode': 'FETCH_ADD',
      'requester.wc2.byte_len': '8',
      'requester.wc2.fetched': '0x0123456789abcdef',
      'q4.responder.state': 'RTS',
      'responder.wc2.status': 'SUCCESS',
      'responder.wc2.opcode': 'RDMA_WRITE',
      'responder.wc2.flags': 'none',
    },
    why:
      'the refused post moved nothing to ERR, so the FetchAdd posted next succeeds (fetching the ' +
      "untouched word) where the engine flushes it, and the responder's Write back succeeds where " +
      'the engine, whose requester is in ERR, sees it retried until RETRY_EXC_ERR',
  },
  {
    id: 'rxe-short-sge-is-protection-error',
    class: 'defect',
    rule: 'ibv_poll_cq(3) statuses as RDMAmojo\'s ibv_poll_cq page, by the man page\'s author; the man page lists no status meanings: IBV_WC_LOC_LEN_ERR for "an Atomic operation which its size is different than 8 bytes", IBV_WC_LOC_PROT_ERR for an SGE that references no valid MR',
    provider: 'rxe',
    kernel: SINCE_6_1,
    scope: ['rxe-atomic-short-sge-ex', 'rxe-atomic-no-sge-ex'],
    observed: { 'requester.wc1.status': 'LOC_PROT_ERR' },
    why:
      'rxe finds the short (or missing) local SGE when it copies the atomic response into it ' +
      '(the atomic response copy in rxe_comp.c) and reports that copy failure as ' +
      'IB_WC_LOC_PROT_ERR; the engine follows IBTA and reports a length error (LOC_LEN_ERR). ' +
      'As in the engine, the responder has executed the atomic (the word changed) and the QP is in ERR',
    spec: 'IBTA 10.7.3; ibv_poll_cq(3) IBV_WC_LOC_LEN_ERR',
  },
  {
    id: 'rxe-no-retry-exhaustion-towards-err-qp',
    class: 'defect',
    rule: "IBTA Vol. 1 §9.7.6.1.3 (transport timer: retry_cnt bounds the retries, then RETRY_EXC_ERR; 7 means infinite only for rnr_retry, §9.7.5.2.8), as RDMAmojo's ibv_modify_qp page describes retry_cnt and rnr_retry; ibv_modify_qp(3) retry_cnt",
    unclear:
      'the IBTA clauses are cited from public sources, not read here; ibv_modify_qp(3) itself says only "Retry count"',
    provider: 'rxe',
    kernel: SINCE_6_1,
    scope: [
      'rxe-atomic-invalid-lkey*',
      'rxe-atomic-short-sge-ex',
      'rxe-atomic-no-sge-ex',
      'rxe-send-imm-no-recv*',
      'rxe-write-imm-no-recv*',
      'rxe-send-no-recv*',
    ],
    // The responder's RDMA Write towards the requester QP that is in ERR.
    observed: {
      'responder.wc2.status': 'none',
      'responder.wc2.wr': '—',
      'responder.wc2.vendor_err': '—',
      'q4.responder.state': 'RTS',
    },
    why:
      'an RDMA Write from an RTS QP to a peer QP in ERR (which drops it, rxe_resp.c) gets no ' +
      'completion and the QP stays in RTS: the suite connects its QPs with retry_cnt 7, and ' +
      'rxe_comp.c (COMPST_ERROR_RETRY) decrements retry_cnt only when it is not 7 ("if ' +
      '(qp->comp.retry_cnt != 7) qp->comp.retry_cnt--"), i.e. treats 7 as "retry for ever" like ' +
      'rnr_retry, where IBTA makes it 7 retries. Measured by the packet tester (issue 21, ' +
      'roce-requester-no-answer-retry-7: 136 transmissions in 2.5 s under TCG, no completion; with retry_cnt 1: ' +
      '2 transmissions, then RETRY_EXC_ERR)',
    spec: 'IBTA 9.7.6.1.3 (transport timer), 10.3.1 (Error state)',
  },
  {
    id: 'rxe-grh-on-rc-receive',
    class: 'allowed',
    rule: 'ibv_poll_cq(3): IBV_WC_GRH "GRH is present (valid only for UD QPs)": on an RC receive the flag means nothing, so its value is left to the provider',
    provider: 'rxe',
    kernel: SINCE_6_1,
    // Not the Send with Invalidate programs: their receive's flags are another record's.
    scope: ['rxe-!(mw2-send-with-inv*)'],
    // Every program's receive is the responder's first completion (the SRQ programs' later
    // ones: rxe-grh-on-srq-receive). Only GRH and GRH|WITH_IMM: a further flag is a
    // difference of its own (rxe-with-inv-reads-ip-csum-ok).
    observed: { 'responder.wc1.flags': /^GRH(\|WITH_IMM)?$/ },
    why:
      'rxe sets IB_WC_GRH on every receive completion of a RoCE QP, RC included (rxe_resp.c do_complete: ' +
      'wc_flags = IB_WC_GRH for RoCE), where the engine follows IBTA (a GRH flag only when a GRH was ' +
      'received into the buffer, which RC receives do not report)',
    spec: 'IBTA 11.4.2.1 (ibv_wc wc_flags)',
  },
  {
    // On stock these receives' flags are rxe-with-inv-reads-ip-csum-ok's (GRH|IP_CSUM_OK);
    // on the fixed build (its librxe fix) WITH_INV shows and the GRH of
    // rxe-grh-on-rc-receive stays.
    id: 'rxe-grh-on-send-with-inv-receive',
    class: 'allowed',
    rule: 'ibv_poll_cq(3): IBV_WC_GRH "GRH is present (valid only for UD QPs)" (as rxe-grh-on-rc-receive)',
    provider: 'rxe+fixes',
    kernel: SINCE_6_1,
    scope: ['rxe-mw2-send-with-inv*'],
    observed: { 'responder.wc1.flags': 'GRH|WITH_INV' },
    why:
      'as rxe-grh-on-rc-receive, for the receive of a Send with Invalidate once librxe reports ' +
      'IBV_WC_WITH_INV (patches/rdma-core-fixes/0001): rxe_resp.c do_complete still sets IB_WC_GRH ' +
      'on the receive completion of a RoCE QP',
    spec: 'IBTA 11.4.2.1 (ibv_wc wc_flags)',
  },
  {
    // A record of its own: on the other programs a later responder completion is a Write
    // back, whose flags a field glob over every completion would name without explaining.
    id: 'rxe-grh-on-srq-receive',
    class: 'allowed',
    rule: 'ibv_poll_cq(3): IBV_WC_GRH "GRH is present (valid only for UD QPs)" (as rxe-grh-on-rc-receive)',
    provider: 'rxe',
    kernel: SINCE_6_1,
    scope: ['rxe-srq-*'],
    observed: { 'responder.wc{2,3,4}.flags': 'GRH' },
    why:
      'as rxe-grh-on-rc-receive, for the later receives of the SRQ programs: rxe_resp.c do_complete ' +
      'sets IB_WC_GRH on every user receive completion of a RoCE QP, whether its receive came from ' +
      'the QP or from an SRQ (get_srq_wqe)',
    spec: 'IBTA 11.4.2.1 (ibv_wc wc_flags)',
  },
  {
    id: 'rxe-with-inv-reads-ip-csum-ok',
    class: 'defect',
    rule: 'ibv_poll_cq(3): IBV_WC_WITH_INV "Invalidated RKey data value is valid" on the receive of a Send with Invalidate; IBTA 1.5 Vol. 1 §11.4.2.1',
    provider: 'rxe',
    kernel: SINCE_6_1,
    scope: ['rxe-mw2-send-with-inv*'],
    // The receive of the Send with Invalidate (the invalidated rkey itself is right).
    observed: { 'responder.wc1.flags': 'GRH|IP_CSUM_OK' },
    why:
      "rxe_resp.c do_complete writes the kernel's flag bits into the user-space CQE (uwc->wc_flags |= " +
      'IB_WC_WITH_INVALIDATE, 1 << 2 in include/rdma/ib_verbs.h, next to IB_WC_GRH of ' +
      'rxe-grh-on-rc-receive), and librxe hands that CQE to the program as its ibv_wc; in libibverbs ' +
      '1 << 2 is IBV_WC_IP_CSUM_OK (verbs.h: IBV_WC_WITH_INV is 1 << 3), so a program reads ' +
      'GRH|IP_CSUM_OK and no WITH_INV for a Send with Invalidate (measured on 6.1.192 / rdma-core 44 ' +
      'and 7.3.4 / rdma-core 56.1); invalidated_rkey is right',
    spec: 'IBTA 1.5 §11.4.2.1 (the completion of a Send with Invalidate reports the invalidated R_Key)',
  },
  {
    id: 'rxe-mw-range-is-the-mr',
    class: 'defect',
    rule: "IBTA 1.5 Vol. 1 §10.6.7: a memory window grants remote access to its own range only; ibv_bind_mw(3): the window's addr and length bound the access",
    provider: 'rxe',
    kernel: SINCE_6_1,
    scope: ['rxe-mw2-outside-window*'],
    // The Write succeeds and lands: nothing fails, both QPs stay in RTS.
    observed: {
      'requester.wc1.status': 'SUCCESS',
      'requester.wc1.opcode': 'RDMA_WRITE',
      'requester.wc1.flags': 'none',
      'requester.wc1.vendor_err': '—',
      'q1.requester.state': 'RTS',
      'q2.responder.state': 'RTS',
      'mem[8]': '0x8877665544332211',
    },
    why:
      "rxe bounds an access through a memory window by the window's MR, not by the window: " +
      'rxe_resp.c check_rkey looks the window up (rxe_mw.c rxe_lookup_mw checks its rkey, PD, QP, ' +
      'access and state), then takes mr = mw->mr and checks the range with mr_check_range(mr, ...) ' +
      'only; mw->addr and mw->length are not consulted (only for a ZERO_BASED window, as the ' +
      'offset). So a Write inside the MR but outside the window is placed (measured on 6.1.192 and ' +
      '7.3.4, both post APIs)',
    spec: 'IBTA 1.5 §10.6.7: a memory window grants remote access to its own range only',
  },
  {
    id: 'rxe-send-cqe-with-imm',
    class: 'allowed',
    rule: 'ibv_poll_cq(3): IBV_WC_WITH_IMM "Immediate data value is valid", which RDMAmojo\'s ibv_poll_cq page (by the man page\'s author) calls relevant for Receive Work Completions: on a send completion the flag and imm_data are not defined',
    unclear:
      'IBTA Vol. 1 §11.4.2.1 (which completion fields a send completion returns) is cited from public sources, not read here',
    provider: 'rxe',
    kernel: SINCE_6_1,
    // make_send_cqe does not look at the QP type: the UD Send with Immediate too.
    scope: [
      'rxe-write-imm*',
      'rxe-send-imm*',
      'rxe-order-write-then-write-imm*',
      'rxe-mcast-send-imm',
    ],
    observed: {
      'requester.wc*.flags': 'WITH_IMM',
      'requester.wc*.imm': '0',
      'requester.wc*.imm_raw': '0',
    },
    why:
      'rxe reports IB_WC_WITH_IMM on the requester completion of RDMA_WRITE_WITH_IMM and SEND_WITH_IMM ' +
      '(rxe_comp.c make_send_cqe sets wc_flags from the work request opcode), with imm_data 0; in ' +
      'libibverbs the flag says imm_data is valid, which is meant for the receive side',
    spec: 'ibv_poll_cq(3): IBV_WC_WITH_IMM',
  },
  {
    // No suite scenario or tester assertion posts to an ODP MR (the suite's MRs are pinned):
    // test/kernel/verbs/missing-verbs.test.ts asserts it on 7.3, repro/ reproduces it.
    id: 'rxe-odp-copy-ignores-page-offset',
    class: 'defect',
    rule: 'ibv_post_send(3): wr.rdma.remote_addr is the remote address the RDMA Write places its data at (an ODP MR, ibv_reg_mr(3) IBV_ACCESS_ON_DEMAND, is addressed as any other); IBTA Vol. 1 §9.4.3 (the RETH virtual address)',
    unclear:
      'the first upstream version with rxe ODP is not checked here: 6.1 and 6.12 have no rxe_odp.c, 7.3.4 has it with this copy',
    provider: 'rxe',
    // rxe has no ODP on 6.1 and 6.12 (no rxe_odp.c: ibv_reg_mr with ON_DEMAND is refused).
    kernel: { from: '7.3' },
    scope: [],
    why:
      "rxe_odp.c __rxe_odp_mr_copy computes the iova's offset in its page " +
      "(rxe_odp_iova_to_page_offset) but copies to or from the kmap'd page's base (dest = " +
      'user_va), and never advances addr: a Write at page offset 100 of an ODP MR lands at ' +
      'offset 0, and a copy across a page boundary repeats its first bytes on the next page; ' +
      'the non-ODP copy (rxe_mr.c rxe_mr_copy_xarray) adds the offset',
    spec: 'IBTA 9.4.3 (RETH: the virtual address the data goes to)',
  },
];
