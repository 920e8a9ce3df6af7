// SPDX-License-Identifier: MIT
/*
 * rxe-no-retry-exhaustion-towards-err-qp: an RC requester with retry_cnt 7 whose peer
 * never acknowledges must give up after 7 retries with IBV_WC_RETRY_EXC_ERR (IBTA 1.5
 * 9.7.6.1.3; retry_cnt 7 means 7 retries, only rnr_retry 7 means "for ever"). rxe's
 * rxe_comp.c decrements retry_cnt only when it is not 7, so it retries for ever and the
 * Write never completes. The peer here: the connected responder QP moved to ERR, which
 * drops what arrives.
 * Exit 1: no completion within 10 s (the defect); 0: RETRY_EXC_ERR; 2: set-up failed or
 * another status.
 */
#include "common.h"

int main(void)
{
	static char buf[64], sbuf[8] = "\x11\x22\x33\x44\x55\x66\x77\x88";
	struct ibv_qp_attr attr = { 0 };
	struct ibv_send_wr wr = { 0 }, *bad;
	struct ibv_mr *mr, *smr;
	struct ibv_sge sge;
	struct ibv_wc wc;
	struct pair p;

	repro_name = "rxe-no-retry-exhaustion-towards-err-qp";
	/* A short transport timer (4.096 us * 2^12 = 16.8 ms): 8 transmissions take < 1 s. */
	connect_pair(&p, "192.0.2.1", 7, 12, NULL);
	mr = reg(&p, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	smr = reg(&p, sbuf, sizeof(sbuf), 0);
	attr.qp_state = IBV_QPS_ERR;
	if (ibv_modify_qp(p.resp.qp, &attr, IBV_QP_STATE))
		fail_setup("modify responder to ERR", errno);
	if (ibv_query_qp(p.req.qp, &attr, IBV_QP_RETRY_CNT | IBV_QP_TIMEOUT, &(struct ibv_qp_init_attr){ 0 }))
		fail_setup("ibv_query_qp", errno);
	say("requester retry_cnt %u, timeout %u; responder QP in ERR", attr.retry_cnt, attr.timeout);

	sge = (struct ibv_sge){ (uintptr_t)sbuf, sizeof(sbuf), smr->lkey };
	wr.wr_id = 0x1e;
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.wr.rdma.remote_addr = (uintptr_t)buf;
	wr.wr.rdma.rkey = mr->rkey;
	if (ibv_post_send(p.req.qp, &wr, &bad))
		fail_setup("post RDMA_WRITE", errno);
	while (wait_wc(p.req.cq, &wc, 10000)) {
		if (wc.wr_id != 0x1e)
			continue; /* the responder's flushes share nothing with this CQ, but be safe */
		say("requester completion: %s", ibv_wc_status_str(wc.status));
		if (wc.status == IBV_WC_RETRY_EXC_ERR) {
			say("fine: the retries ran out");
			return REPRO_FINE;
		}
		return REPRO_SETUP;
	}
	say("DEFECT: no completion within 10 s with retry_cnt 7 (rxe retries for ever)");
	return REPRO_DEFECT;
}
