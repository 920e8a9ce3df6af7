// SPDX-License-Identifier: MIT
/*
 * rxe-mw-range-is-the-mr: an access through a memory window is bounded by the window
 * (IBTA 1.5 10.6.7). rxe's check_rkey (rxe_resp.c) looks the window up, then checks the
 * range against the window's MR only, so a Write inside the MR but outside the window is
 * placed.
 * The set-up: a 64-byte MR, a type 2 window bound to its first 16 bytes, an 8-byte RDMA
 * Write through the window's rkey at MR offset 32.
 * Exit 1: the Write succeeded (the defect); 0: it failed with a remote access error;
 * 2: set-up failed or another status.
 */
#include "common.h"

int main(void)
{
	static char mem[64], sbuf[8] = "\x11\x22\x33\x44\x55\x66\x77\x88";
	struct ibv_send_wr wr = { 0 }, *bad;
	struct ibv_mr *mr, *smr;
	struct ibv_sge sge;
	struct ibv_mw *mw;
	struct ibv_wc wc;
	struct pair p;

	repro_name = "rxe-mw-range-is-the-mr";
	connect_pair(&p, "192.0.2.1", 7, 0, NULL);
	mr = reg(&p, mem, sizeof(mem),
		 IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_MW_BIND);
	smr = reg(&p, sbuf, sizeof(sbuf), 0);
	mw = bind_mw2(&p, mr, mem, 16);
	say("MR [%p, +64), window rkey 0x%x bound to [%p, +16); Write of 8 bytes at %p", (void *)mem,
	    mw->rkey, (void *)mem, (void *)(mem + 32));

	sge = (struct ibv_sge){ (uintptr_t)sbuf, sizeof(sbuf), smr->lkey };
	wr.wr_id = 0x1e;
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.wr.rdma.remote_addr = (uintptr_t)(mem + 32);
	wr.wr.rdma.rkey = mw->rkey;
	if (ibv_post_send(p.req.qp, &wr, &bad))
		fail_setup("post RDMA_WRITE", errno);
	if (!wait_wc(p.req.cq, &wc, 10000)) {
		say("set-up failed: no requester completion within 10 s");
		return REPRO_SETUP;
	}
	say("requester completion: %s; MR bytes at offset 32: %02x %02x ... %02x",
	    ibv_wc_status_str(wc.status), (unsigned char)mem[32], (unsigned char)mem[33],
	    (unsigned char)mem[39]);
	if (wc.status == IBV_WC_SUCCESS) {
		say("DEFECT: a Write outside the window (inside its MR) was placed");
		return REPRO_DEFECT;
	}
	if (wc.status == IBV_WC_REM_ACCESS_ERR) {
		say("fine: refused with a remote access error");
		return REPRO_FINE;
	}
	return REPRO_SETUP;
}
