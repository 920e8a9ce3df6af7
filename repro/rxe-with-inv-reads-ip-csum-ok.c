// SPDX-License-Identifier: MIT
/*
 * rxe-with-inv-reads-ip-csum-ok: the receive completion of a Send with Invalidate must
 * carry IBV_WC_WITH_INV (ibv_poll_cq(3); IBTA 1.5 11.4.2.1). rxe writes the kernel's
 * IB_WC_WITH_INVALIDATE (1 << 2) into the user CQE and librxe copies it out as is, where
 * libibverbs reads 1 << 2 as IBV_WC_IP_CSUM_OK (IBV_WC_WITH_INV is 1 << 3).
 * Exit 1: the completion lacks WITH_INV (the defect); 0: it has it; 2: set-up failed.
 */
#include "common.h"

static char rbuf[64];
static struct ibv_mr *rmr;

static void post_recv(struct pair *p)
{
	struct ibv_sge sge = { (uintptr_t)rbuf, sizeof(rbuf), rmr->lkey };
	struct ibv_recv_wr wr = { .wr_id = 0x2e, .sg_list = &sge, .num_sge = 1 }, *bad;

	if (ibv_post_recv(p->resp.qp, &wr, &bad))
		fail_setup("ibv_post_recv", errno);
}

int main(void)
{
	static char window[64], sbuf[8] = "\x11\x22\x33\x44\x55\x66\x77\x88";
	struct ibv_send_wr wr = { 0 }, *bad;
	struct ibv_mr *wmr, *smr;
	struct ibv_sge sge;
	struct ibv_mw *mw;
	struct ibv_wc wc;
	struct pair p;
	char flags[64];
	int defect;

	repro_name = "rxe-with-inv-reads-ip-csum-ok";
	connect_pair(&p, "192.0.2.1", 7, 0, NULL);
	rmr = reg(&p, rbuf, sizeof(rbuf), IBV_ACCESS_LOCAL_WRITE);
	wmr = reg(&p, window, sizeof(window),
		  IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_MW_BIND);
	smr = reg(&p, sbuf, sizeof(sbuf), 0);
	mw = bind_mw2(&p, wmr, window, sizeof(window));
	post_recv(&p);

	sge = (struct ibv_sge){ (uintptr_t)sbuf, sizeof(sbuf), smr->lkey };
	wr.wr_id = 0x1e;
	wr.opcode = IBV_WR_SEND_WITH_INV;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.invalidate_rkey = mw->rkey;
	if (ibv_post_send(p.req.qp, &wr, &bad))
		fail_setup("post SEND_WITH_INV", errno);
	if (!wait_wc(p.resp.cq, &wc, 5000)) {
		say("set-up failed: no receive completion within 5 s");
		return REPRO_SETUP;
	}
	say("receive completion: status %s, opcode %d, wc_flags 0x%x (%s), invalidated_rkey 0x%x (window rkey 0x%x)",
	    ibv_wc_status_str(wc.status), wc.opcode, wc.wc_flags,
	    wc_flags_str(wc.wc_flags, flags, sizeof(flags)), wc.invalidated_rkey, mw->rkey);
	if (wc.status != IBV_WC_SUCCESS)
		return REPRO_SETUP;
	defect = !(wc.wc_flags & IBV_WC_WITH_INV);
	say(defect ? "DEFECT: no IBV_WC_WITH_INV on the receive of a Send with Invalidate%s" :
		     "fine: IBV_WC_WITH_INV is set%s",
	    wc.wc_flags & IBV_WC_IP_CSUM_OK ? " (IBV_WC_IP_CSUM_OK is set instead)" : "");
	return defect ? REPRO_DEFECT : REPRO_FINE;
}
