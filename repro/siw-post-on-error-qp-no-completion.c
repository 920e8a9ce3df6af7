// SPDX-License-Identifier: MIT
/*
 * siw-post-on-error-qp-no-completion: a work request posted to a QP in the Error state
 * completes with a flush error (IBTA 1.5 10.3.1; ibv_post_send(3)). libsiw writes the
 * request into the SQ mapped from the kernel and rings the doorbell with an empty list;
 * siw_post_send (siw_verbs.c) on a QP in ERROR flushes only the list it was given
 * (siw_sq_flush_wr), so the mapped SQE is never completed.
 * The set-up: a connected pair; the requester's QP is moved to ERR with ibv_modify_qp, its
 * CQ drained, then a signaled Send is posted on it and its CQ polled for 3 s.
 * Exit 1: no completion (the defect); 0: it completed with WR_FLUSH_ERR; 2: set-up failed
 * or another outcome.
 */
#include "common.h"

int main(void)
{
	static char buf[8] = "\x11\x22\x33\x44\x55\x66\x77\x88";
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_ERR };
	struct ibv_send_wr wr = { 0 }, *bad;
	struct ibv_sge sge;
	struct ibv_mr *mr;
	struct ibv_wc wc;
	struct pair p;
	int rv;

	repro_name = "siw-post-on-error-qp-no-completion";
	connect_pair(&p, "198.51.100.1", 7, 0, NULL);
	mr = reg(&p, buf, sizeof(buf), 0);
	if (ibv_modify_qp(p.req.qp, &attr, IBV_QP_STATE))
		fail_setup("ibv_modify_qp(ERR)", errno);
	while (wait_wc(p.req.cq, &wc, 200))
		;
	sge = (struct ibv_sge){ (uintptr_t)buf, sizeof(buf), mr->lkey };
	wr.wr_id = 0x5e;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	rv = ibv_post_send(p.req.qp, &wr, &bad);
	say("QP moved to ERR; ibv_post_send of a Send returned %d", rv);
	if (rv) {
		say("set-up failed: the post was refused (%s)", strerror(rv));
		return REPRO_SETUP;
	}
	if (!wait_wc(p.req.cq, &wc, 3000)) {
		say("DEFECT: no completion within 3 s for a request posted in ERR");
		return REPRO_DEFECT;
	}
	say("completion: wr_id 0x%llx %s", (unsigned long long)wc.wr_id,
	    ibv_wc_status_str(wc.status));
	if (wc.wr_id == 0x5e && wc.status == IBV_WC_WR_FLUSH_ERR) {
		say("fine: flushed");
		return REPRO_FINE;
	}
	return REPRO_SETUP;
}
