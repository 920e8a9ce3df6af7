// SPDX-License-Identifier: MIT
/*
 * libsiw-list-refusal-lost: when a request in a list cannot be posted, ibv_post_send must
 * fail and set bad_wr to the first request not posted (ibv_post_send(3)). libsiw's
 * siw_post_send sets bad_wr and rv = -EINVAL for the refused request, then rings the
 * doorbell for the requests before it and overwrites rv (and bad_wr) with the doorbell's
 * result: the post returns 0 and the refused request is silently dropped.
 * The list: an RDMA Write (posted) then a Send with Immediate (libsiw carries none, with or
 * without the RFC 7306 series).
 * Exit 1: the post returned 0 (the defect); 0: it failed naming the second request;
 * 2: set-up failed or something else.
 */
#include "common.h"

int main(void)
{
	static char buf[64], sbuf[8] = "\x11\x22\x33\x44\x55\x66\x77\x88";
	struct ibv_send_wr wr1 = { 0 }, wr2 = { 0 }, *bad = NULL;
	struct ibv_mr *mr, *smr;
	struct ibv_sge sge;
	struct ibv_wc wc;
	struct pair p;
	int rv, n = 0;

	repro_name = "libsiw-list-refusal-lost";
	connect_pair(&p, "198.51.100.1", 7, 0, NULL);
	mr = reg(&p, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	smr = reg(&p, sbuf, sizeof(sbuf), 0);
	sge = (struct ibv_sge){ (uintptr_t)sbuf, sizeof(sbuf), smr->lkey };
	wr1.wr_id = 0x1e;
	wr1.opcode = IBV_WR_RDMA_WRITE;
	wr1.send_flags = IBV_SEND_SIGNALED;
	wr1.sg_list = &sge;
	wr1.num_sge = 1;
	wr1.wr.rdma.remote_addr = (uintptr_t)buf;
	wr1.wr.rdma.rkey = mr->rkey;
	wr1.next = &wr2;
	wr2.wr_id = 0x2e;
	wr2.opcode = IBV_WR_SEND_WITH_IMM;
	wr2.send_flags = IBV_SEND_SIGNALED;
	wr2.sg_list = &sge;
	wr2.num_sge = 1;
	wr2.imm_data = htonl(0x01020304);
	rv = ibv_post_send(p.req.qp, &wr1, &bad);
	say("ibv_post_send([RDMA_WRITE, SEND_WITH_IMM]) = %d (%s), bad_wr = %s", rv,
	    rv ? strerror(rv < 0 ? -rv : rv) : "success",
	    bad == &wr1 ? "wr1" : bad == &wr2 ? "wr2" : bad ? "?" : "NULL");
	while (wait_wc(p.req.cq, &wc, 2000)) {
		say("requester completion wr_id 0x%llx: %s", (unsigned long long)wc.wr_id,
		    ibv_wc_status_str(wc.status));
		n++;
	}
	say("%d completion(s) within 2 s", n);
	if (rv == 0) {
		say("DEFECT: the post returned 0 although the Send with Immediate was refused");
		return REPRO_DEFECT;
	}
	if (bad == &wr2) {
		say("fine: the post failed and bad_wr names the refused request");
		return REPRO_FINE;
	}
	return REPRO_SETUP;
}
