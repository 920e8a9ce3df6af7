// SPDX-License-Identifier: MIT
/*
 * siw-no-solicited-event: a CQ armed for solicited completions
 * (ibv_req_notify_cq(cq, 1)) must raise its event when a receive completes for a Send
 * with the Solicited Event bit (IBTA 1.5 11.4.2.2; RFC 5040 5.3). siw_qp.c
 * siw_rqe_complete asks siw_cq_notify_now(cq, SIW_WQE_SIGNALLED) only, never with
 * SIW_WQE_SOLICITED, so the event never comes.
 * Exit 1: the receive completed but no event within 3 s (the defect); 0: the event came;
 * 2: set-up failed.
 */
#include "common.h"

static char rbuf[64];
static struct ibv_mr *rmr;

static void post_recv(struct pair *p)
{
	struct ibv_sge sge = { (uintptr_t)rbuf, sizeof(rbuf), 0 };
	struct ibv_recv_wr wr = { .wr_id = 0x2e, .sg_list = &sge, .num_sge = 1 }, *bad;

	rmr = reg(p, rbuf, sizeof(rbuf), IBV_ACCESS_LOCAL_WRITE);
	sge.lkey = rmr->lkey;
	if (ibv_post_recv(p->resp.qp, &wr, &bad))
		fail_setup("ibv_post_recv", errno);
	if (ibv_req_notify_cq(p->resp.cq, 1))
		fail_setup("ibv_req_notify_cq(solicited_only)", errno);
}

int main(void)
{
	static char sbuf[8] = "\x11\x22\x33\x44\x55\x66\x77\x88";
	struct ibv_send_wr wr = { 0 }, *bad;
	struct pollfd pfd;
	struct ibv_mr *smr;
	struct ibv_sge sge;
	struct ibv_cq *ev_cq;
	struct ibv_wc wc;
	struct pair p;
	void *ev_ctx;
	int ready;

	repro_name = "siw-no-solicited-event";
	connect_pair(&p, "198.51.100.1", 7, 0, post_recv);
	smr = reg(&p, sbuf, sizeof(sbuf), 0);
	sge = (struct ibv_sge){ (uintptr_t)sbuf, sizeof(sbuf), smr->lkey };
	wr.wr_id = 0x1e;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED | IBV_SEND_SOLICITED;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	if (ibv_post_send(p.req.qp, &wr, &bad))
		fail_setup("post SEND with SOLICITED", errno);
	pfd.fd = p.resp.channel->fd;
	pfd.events = POLLIN;
	ready = poll(&pfd, 1, 3000);
	if (ready == 1) {
		if (ibv_get_cq_event(p.resp.channel, &ev_cq, &ev_ctx))
			fail_setup("ibv_get_cq_event", errno);
		ibv_ack_cq_events(ev_cq, 1);
	}
	if (!wait_wc(p.resp.cq, &wc, 2000)) {
		say("set-up failed: no receive completion");
		return REPRO_SETUP;
	}
	say("receive completion: %s; solicited CQ event: %s", ibv_wc_status_str(wc.status),
	    ready == 1 ? "raised" : "none within 3 s");
	if (ready != 1) {
		say("DEFECT: the Send with Solicited Event completed a receive but the armed CQ raised no event");
		return REPRO_DEFECT;
	}
	say("fine: the solicited event came");
	return REPRO_FINE;
}
