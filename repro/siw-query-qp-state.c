// SPDX-License-Identifier: MIT
/*
 * siw-query-qp-state: ibv_query_qp(3) returns the current QP state in attr->qp_state.
 * siw_query_qp (siw_verbs.c) before the 6.8 cycle never fills qp_state, so a connected QP
 * (siw state RTS) reads as IBV_QPS_RESET, the value the kernel's zeroed attributes hold.
 * The set-up: a connected pair; both QPs are queried for IBV_QP_STATE.
 * Exit 1: a connected QP reads anything but RTS (the defect); 0: both read RTS;
 * 2: set-up failed.
 */
#include "common.h"

static const char *state_str(enum ibv_qp_state s)
{
	static const char *const names[] = { "RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR" };

	return (unsigned int)s < sizeof(names) / sizeof(names[0]) ? names[s] : "unknown";
}

int main(void)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr req, resp;
	struct pair p;

	repro_name = "siw-query-qp-state";
	connect_pair(&p, "198.51.100.1", 7, 0, NULL);
	memset(&req, 0x55, sizeof(req));
	memset(&resp, 0x55, sizeof(resp));
	if (ibv_query_qp(p.req.qp, &req, IBV_QP_STATE, &init) ||
	    ibv_query_qp(p.resp.qp, &resp, IBV_QP_STATE, &init))
		fail_setup("ibv_query_qp", errno);
	say("connected; ibv_query_qp reads the requester %s, the responder %s",
	    state_str(req.qp_state), state_str(resp.qp_state));
	if (req.qp_state != IBV_QPS_RTS || resp.qp_state != IBV_QPS_RTS) {
		say("DEFECT: a connected QP does not read RTS");
		return REPRO_DEFECT;
	}
	say("fine: both read RTS");
	return REPRO_FINE;
}
