// SPDX-License-Identifier: MIT
/*
 * rxe-short-sge-is-protection-error: an atomic whose local SGE is shorter than the 8 bytes
 * of the original value fails with a local length error (IBTA 1.5 10.7.3; ibv_poll_cq(3)
 * IBV_WC_LOC_LEN_ERR, as RDMAmojo's ibv_poll_cq page describes it: "an Atomic operation
 * which its size is different than 8 bytes"). rxe's do_atomic (rxe_comp.c) copies the
 * Atomic Acknowledge's value with copy_data(), which refuses the short SGE, and reports
 * every copy_data() failure as IBV_WC_LOC_PROT_ERR.
 * The set-up: the extended post API (ibv_wr_atomic_fetch_add, which librxe does not check
 * like ibv_post_send) posts a FetchAdd with a 4-byte local SGE to an 8-byte word.
 * Exit 1: the FetchAdd completed with LOC_PROT_ERR (the defect); 0: with LOC_LEN_ERR;
 * 2: set-up failed or another status.
 */
#include "common.h"

int main(void)
{
	static uint64_t word = 0x0123456789abcdefULL, local;
	struct ibv_qp_ex *qpx;
	struct ibv_mr *mr, *lmr;
	struct ibv_wc wc;
	struct pair p;

	repro_name = "rxe-short-sge-is-protection-error";
	repro_send_ops_flags = IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD;
	connect_pair(&p, "192.0.2.1", 7, 0, NULL);
	mr = reg(&p, &word, sizeof(word),
		 IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_ATOMIC);
	lmr = reg(&p, &local, sizeof(local), IBV_ACCESS_LOCAL_WRITE);
	qpx = ibv_qp_to_qp_ex(p.req.qp);
	if (!qpx)
		fail_setup("ibv_qp_to_qp_ex", EOPNOTSUPP);
	say("FetchAdd on the word at %p with a 4-byte local SGE", (void *)&word);
	ibv_wr_start(qpx);
	qpx->wr_id = 0xfa;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_atomic_fetch_add(qpx, mr->rkey, (uintptr_t)&word, 1);
	ibv_wr_set_sge(qpx, lmr->lkey, (uintptr_t)&local, 4);
	if (ibv_wr_complete(qpx))
		fail_setup("ibv_wr_complete", errno);
	if (!wait_wc(p.req.cq, &wc, 10000)) {
		say("set-up failed: no requester completion within 10 s");
		return REPRO_SETUP;
	}
	say("requester completion: %s", ibv_wc_status_str(wc.status));
	if (wc.status == IBV_WC_LOC_PROT_ERR) {
		say("DEFECT: a local SGE too short for the atomic reads as a protection error");
		return REPRO_DEFECT;
	}
	if (wc.status == IBV_WC_LOC_LEN_ERR) {
		say("fine: a local length error");
		return REPRO_FINE;
	}
	return REPRO_SETUP;
}
