// SPDX-License-Identifier: MIT
/*
 * rxe-odp-copy-ignores-page-offset: an RDMA Write into an on-demand-paging MR lands at the
 * address it names (ibv_post_send(3): remote_addr is where the data is placed). rxe's ODP
 * copy (rxe_odp.c __rxe_odp_mr_copy, Linux 7.3.4) computes the in-page offset of the iova
 * and then copies to (or from) the base of the kmap'd page, so a Write at page offset 100
 * lands at offset 0; the other side of the copy is not advanced either, so a copy across a
 * page boundary repeats its first bytes on the next page.
 * The set-up: a page-aligned 2-page MR registered with IBV_ACCESS_ON_DEMAND, an 8-byte RDMA
 * Write at its offset 100 (within the first page).
 * Exit 1: the bytes are at offset 0 and not at 100 (the defect); 0: at 100 only, or rxe has
 * no ODP on this kernel (before 6.15: nothing to reproduce); 2: set-up failed.
 */
#include "common.h"

#define PAGE 4096
#define AT 100

int main(void)
{
	static const char data[8] = "odp-7e3a";
	struct ibv_send_wr wr = { 0 }, *bad;
	struct ibv_mr *mr, *smr;
	static char sbuf[8];
	struct ibv_sge sge;
	struct ibv_wc wc;
	struct pair p;
	char *mem;

	repro_name = "rxe-odp-copy-ignores-page-offset";
	connect_pair(&p, "192.0.2.1", 7, 0, NULL);
	if (posix_memalign((void **)&mem, PAGE, 2 * PAGE))
		fail_setup("posix_memalign", ENOMEM);
	memset(mem, 0, 2 * PAGE);
	mr = ibv_reg_mr(p.pd, mem, 2 * PAGE,
			IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_ON_DEMAND);
	if (!mr) {
		say("fine: no ODP MR on this device (ibv_reg_mr ON_DEMAND: %s): rxe has no ODP here",
		    strerror(errno));
		return REPRO_FINE;
	}
	memcpy(sbuf, data, sizeof(sbuf));
	smr = reg(&p, sbuf, sizeof(sbuf), 0);
	say("ODP MR [%p, +%d); Write of 8 bytes at offset %d", (void *)mem, 2 * PAGE, AT);

	sge = (struct ibv_sge){ (uintptr_t)sbuf, sizeof(sbuf), smr->lkey };
	wr.wr_id = 0x0d;
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.wr.rdma.remote_addr = (uintptr_t)(mem + AT);
	wr.wr.rdma.rkey = mr->rkey;
	if (ibv_post_send(p.req.qp, &wr, &bad))
		fail_setup("post RDMA_WRITE", errno);
	if (!wait_wc(p.req.cq, &wc, 10000)) {
		say("set-up failed: no requester completion within 10 s");
		return REPRO_SETUP;
	}
	if (wc.status != IBV_WC_SUCCESS) {
		say("set-up failed: the Write completed %s", ibv_wc_status_str(wc.status));
		return REPRO_SETUP;
	}
	int at_offset = !memcmp(mem + AT, data, sizeof(data));
	int at_start = !memcmp(mem, data, sizeof(data));

	say("requester completion: success; the data at offset %d: %s, at offset 0: %s", AT,
	    at_offset ? "yes" : "no", at_start ? "yes" : "no");
	if (at_start && !at_offset) {
		say("DEFECT: the Write landed at the page start, not at the address it named");
		return REPRO_DEFECT;
	}
	if (at_offset && !at_start) {
		say("fine: the Write landed where it was addressed");
		return REPRO_FINE;
	}
	return REPRO_SETUP;
}
