/*
 * common.h: what every reproducer needs and nothing else: a connected pair of RC QPs on
 * one soft RDMA device through librdmacm (loopback over the device's own address), a
 * bounded completion wait, and the verdict convention: exit 1 when the defect shows, 0 when
 * it does not, 2 when the reproducer could not run (set-up failed).
 *
 * The address: REPRO_ADDR, else the project's defaults (scripts/rdma-devices.sh): rxe0 on
 * 192.0.2.1, siw0 on 198.51.100.1.
 */
#ifndef REPRO_COMMON_H
#define REPRO_COMMON_H

#include <arpa/inet.h>
#include <errno.h>
#include <infiniband/verbs.h>
#include <netdb.h>
#include <poll.h>
#include <rdma/rdma_cma.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define REPRO_DEFECT 1
#define REPRO_FINE 0
#define REPRO_SETUP 2

static const char *repro_name = "repro";

static inline void say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	printf("[%s] ", repro_name);
	vprintf(fmt, ap);
	printf("\n");
	fflush(stdout);
	va_end(ap);
}

static inline void fail_setup(const char *what, int err)
{
	say("set-up failed: %s: %s", what, strerror(err));
	exit(REPRO_SETUP);
}

/* One side of the pair: its cm id, CQ (with a completion channel) and QP. */
struct side {
	struct rdma_cm_id *id;
	struct ibv_comp_channel *channel;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
};

struct pair {
	struct rdma_event_channel *events;
	struct rdma_cm_id *listener;
	struct ibv_pd *pd;
	struct side req; /* the active side: the requester */
	struct side resp; /* the passive side: the responder */
};

static inline struct rdma_cm_event *next_event(struct rdma_event_channel *ch,
					enum rdma_cm_event_type want)
{
	struct rdma_cm_event *ev;

	if (rdma_get_cm_event(ch, &ev))
		fail_setup("rdma_get_cm_event", errno);
	if (ev->event != want) {
		say("set-up failed: rdma_cm event %s, wanted %s (status %d)",
		    rdma_event_str(ev->event), rdma_event_str(want), ev->status);
		exit(REPRO_SETUP);
	}
	return ev;
}

/*
 * When not 0, the QPs are created with ibv_create_qp_ex semantics and these send ops
 * (IBV_QP_EX_WITH_*), for the extended post API (ibv_wr_*(3)), which posts what the
 * provider's ibv_post_send checks would refuse.
 */
static uint64_t repro_send_ops_flags;

static inline void make_side(struct pair *p, struct side *s, uint32_t max_send_wr)
{
	struct ibv_qp_init_attr_ex attr = { 0 };

	if (!p->pd) {
		p->pd = ibv_alloc_pd(s->id->verbs);
		if (!p->pd)
			fail_setup("ibv_alloc_pd", errno);
	}
	s->channel = ibv_create_comp_channel(s->id->verbs);
	if (!s->channel)
		fail_setup("ibv_create_comp_channel", errno);
	s->cq = ibv_create_cq(s->id->verbs, 16, NULL, s->channel, 0);
	if (!s->cq)
		fail_setup("ibv_create_cq", errno);
	attr.send_cq = s->cq;
	attr.recv_cq = s->cq;
	attr.qp_type = IBV_QPT_RC;
	attr.cap.max_send_wr = max_send_wr;
	attr.cap.max_recv_wr = 8;
	attr.cap.max_send_sge = 1;
	attr.cap.max_recv_sge = 1;
	attr.pd = p->pd;
	attr.comp_mask = IBV_QP_INIT_ATTR_PD;
	if (repro_send_ops_flags) {
		attr.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
		attr.send_ops_flags = repro_send_ops_flags;
	}
	if (rdma_create_qp_ex(s->id, &attr))
		fail_setup("rdma_create_qp_ex", errno);
	s->qp = s->id->qp;
}

/*
 * connect_pair: two RC QPs on the device that owns `addr`, connected to each other by
 * librdmacm. retry_count (0..7) is the requester's retry_cnt; ack_timeout, when not 0, its
 * transport timer exponent (4.096 us * 2^ack_timeout). Before the connection,
 * `before_accept` (may be NULL) runs on the responder (to post receives).
 */
static inline void connect_pair(struct pair *p, const char *default_addr, uint8_t retry_count,
				uint8_t ack_timeout, void (*before_accept)(struct pair *))
{
	const char *addr = getenv("REPRO_ADDR") ? getenv("REPRO_ADDR") : default_addr;
	struct sockaddr_in sin = { .sin_family = AF_INET };
	struct rdma_conn_param param = { 0 };
	struct rdma_cm_event *ev;
	int established = 0;

	memset(p, 0, sizeof(*p));
	if (inet_pton(AF_INET, addr, &sin.sin_addr) != 1)
		fail_setup("REPRO_ADDR is not an IPv4 address", EINVAL);
	p->events = rdma_create_event_channel();
	if (!p->events)
		fail_setup("rdma_create_event_channel", errno);
	if (rdma_create_id(p->events, &p->listener, NULL, RDMA_PS_TCP) ||
	    rdma_bind_addr(p->listener, (struct sockaddr *)&sin) || rdma_listen(p->listener, 1))
		fail_setup("listen", errno);
	sin.sin_port = rdma_get_src_port(p->listener);
	if (rdma_create_id(p->events, &p->req.id, NULL, RDMA_PS_TCP) ||
	    rdma_resolve_addr(p->req.id, NULL, (struct sockaddr *)&sin, 2000))
		fail_setup("rdma_resolve_addr", errno);
	rdma_ack_cm_event(next_event(p->events, RDMA_CM_EVENT_ADDR_RESOLVED));
	if (ack_timeout && rdma_set_option(p->req.id, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT,
					   &ack_timeout, sizeof(ack_timeout)))
		fail_setup("rdma_set_option(ACK_TIMEOUT)", errno);
	if (rdma_resolve_route(p->req.id, 2000))
		fail_setup("rdma_resolve_route", errno);
	rdma_ack_cm_event(next_event(p->events, RDMA_CM_EVENT_ROUTE_RESOLVED));
	say("device %s, address %s", ibv_get_device_name(p->req.id->verbs->device), addr);
	make_side(p, &p->req, 8);
	param.responder_resources = 1;
	param.initiator_depth = 1;
	param.retry_count = retry_count;
	param.rnr_retry_count = 7;
	if (rdma_connect(p->req.id, &param))
		fail_setup("rdma_connect", errno);
	ev = next_event(p->events, RDMA_CM_EVENT_CONNECT_REQUEST);
	p->resp.id = ev->id;
	rdma_ack_cm_event(ev);
	make_side(p, &p->resp, 8);
	if (before_accept)
		before_accept(p);
	if (rdma_accept(p->resp.id, &param))
		fail_setup("rdma_accept", errno);
	while (established < 2) {
		ev = next_event(p->events, RDMA_CM_EVENT_ESTABLISHED);
		rdma_ack_cm_event(ev);
		established++;
	}
}

/* wait_wc: polls `cq` for one completion for up to `ms` milliseconds; 1 if one came. */
static inline int wait_wc(struct ibv_cq *cq, struct ibv_wc *wc, int ms)
{
	struct timespec start, now;

	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		int n = ibv_poll_cq(cq, 1, wc);

		if (n < 0)
			fail_setup("ibv_poll_cq", EIO);
		if (n == 1)
			return 1;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if ((now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000 >= ms)
			return 0;
		usleep(1000);
	}
}

static inline struct ibv_mr *reg(struct pair *p, void *buf, size_t len, int access)
{
	struct ibv_mr *mr = ibv_reg_mr(p->pd, buf, len, access);

	if (!mr)
		fail_setup("ibv_reg_mr", errno);
	return mr;
}

/*
 * bind_mw2: allocates a type 2 memory window and binds it, on the responder's QP, to
 * [addr, addr + len) of `mr` with remote write access; returns it once the bind completed.
 */
static inline struct ibv_mw *bind_mw2(struct pair *p, struct ibv_mr *mr, void *addr, size_t len)
{
	struct ibv_send_wr wr = { 0 }, *bad;
	struct ibv_mw *mw = ibv_alloc_mw(p->pd, IBV_MW_TYPE_2);
	struct ibv_wc wc;

	if (!mw)
		fail_setup("ibv_alloc_mw(TYPE_2)", errno);
	wr.wr_id = 0xb1;
	wr.opcode = IBV_WR_BIND_MW;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = ibv_inc_rkey(mw->rkey);
	wr.bind_mw.bind_info.mr = mr;
	wr.bind_mw.bind_info.addr = (uintptr_t)addr;
	wr.bind_mw.bind_info.length = len;
	wr.bind_mw.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE;
	if (ibv_post_send(p->resp.qp, &wr, &bad))
		fail_setup("post BIND_MW", errno);
	if (!wait_wc(p->resp.cq, &wc, 5000) || wc.status != IBV_WC_SUCCESS) {
		say("set-up failed: the bind completed %s", wc.status ? ibv_wc_status_str(wc.status) : "never");
		exit(REPRO_SETUP);
	}
	mw->rkey = wr.bind_mw.rkey;
	return mw;
}

static inline const char *wc_flags_str(unsigned int f, char *buf, size_t len)
{
	static const struct {
		unsigned int bit;
		const char *name;
	} names[] = {
		{ IBV_WC_GRH, "GRH" },
		{ IBV_WC_WITH_IMM, "WITH_IMM" },
		{ IBV_WC_IP_CSUM_OK, "IP_CSUM_OK" },
		{ IBV_WC_WITH_INV, "WITH_INV" },
	};
	size_t i;

	buf[0] = 0;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!(f & names[i].bit))
			continue;
		if (buf[0])
			strncat(buf, "|", len - strlen(buf) - 1);
		strncat(buf, names[i].name, len - strlen(buf) - 1);
	}
	if (!buf[0])
		snprintf(buf, len, "none");
	return buf;
}

#endif
