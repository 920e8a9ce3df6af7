#!/usr/bin/python3
"""The FetchAdd loop a scripting user writes with pyverbs (rdma-core's Python binding,
Debian's python3-pyverbs): post one FetchAdd, poll until its completion, read the fetched
value; two RC QPs of one rxe device in loopback, as `bench verbs` does.

Prints one JSON line: {"iterations", "median_us", "p99_us", "last"}; each sample is the
time between consecutive iterations (one clock read per iteration, as perftest takes).
Run by src/bench/verbs.ts in the guest: /usr/bin/python3 pyverbs_fetch_add.py rxe0 1000
"""
import json
import sys
import time

import pyverbs.enums as e
from pyverbs.addr import AHAttr, GlobalRoute
from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.mr import MR
from pyverbs.pd import PD
from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr
from pyverbs.wr import SGE, SendWR

GID_INDEX = 1  # ::ffff:192.0.2.1, RoCE v2 (the guest's rxe0)
WARMUP = 50


def connect(qp, remote_qpn, gid, local_psn, remote_psn):
    attr = QPAttr(qp_state=e.IBV_QPS_INIT, cur_qp_state=e.IBV_QPS_RESET)
    attr.qp_access_flags = e.IBV_ACCESS_REMOTE_ATOMIC | e.IBV_ACCESS_LOCAL_WRITE
    attr.path_mtu = e.IBV_MTU_1024
    attr.dest_qp_num = remote_qpn
    attr.rq_psn = remote_psn
    attr.sq_psn = local_psn
    attr.max_rd_atomic = 16
    attr.max_dest_rd_atomic = 16
    attr.min_rnr_timer = 12
    attr.timeout = 14
    attr.retry_cnt = 7
    attr.rnr_retry = 7
    attr.ah_attr = AHAttr(is_global=1, port_num=1, gr=GlobalRoute(dgid=gid, sgid_index=GID_INDEX))
    qp.to_rts(attr)


def main():
    device = sys.argv[1] if len(sys.argv) > 1 else "rxe0"
    iterations = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
    ctx = Context(name=device)
    pd = PD(ctx)
    cq = CQ(ctx, 64)
    init = QPInitAttr(qp_type=e.IBV_QPT_RC, scq=cq, rcq=cq, cap=QPCap(max_send_wr=16, max_recv_wr=16))
    a = QP(pd, init)
    b = QP(pd, init)
    gid = ctx.query_gid(port_num=1, index=GID_INDEX)
    connect(a, b.qp_num, gid, 1, 2)
    connect(b, a.qp_num, gid, 2, 1)
    access = e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_ATOMIC
    target = MR(pd, 8, access)
    result = MR(pd, 8, e.IBV_ACCESS_LOCAL_WRITE)
    target.write((0x0123456789ABCDEF).to_bytes(8, "little"), 8)
    stamps = []
    expected = 0x0123456789ABCDEF
    for i in range(iterations + WARMUP + 1):
        stamps.append(time.perf_counter_ns())
        wr = SendWR(opcode=e.IBV_WR_ATOMIC_FETCH_AND_ADD, num_sge=1,
                    sg=[SGE(result.buf, 8, result.lkey)], send_flags=e.IBV_SEND_SIGNALED)
        wr.set_wr_atomic(rkey=target.rkey, addr=target.buf, compare_add=1, swap=0)
        a.post_send(wr)
        while True:
            n, wcs = cq.poll(1)
            if n > 0:
                break
        if wcs[0].status != e.IBV_WC_SUCCESS:
            raise SystemExit(f"FetchAdd failed: status {wcs[0].status}")
        fetched = int.from_bytes(result.read(8, 0), "little")
        if fetched != expected:
            raise SystemExit(f"fetched {fetched:#x}, expected {expected:#x}")
        expected += 1
    deltas = sorted((stamps[i + 1] - stamps[i]) / 1000 for i in range(WARMUP, len(stamps) - 1))
    print(json.dumps({
        "iterations": len(deltas),
        "median_us": deltas[len(deltas) // 2],
        "p99_us": deltas[min(len(deltas) - 1, (len(deltas) * 99) // 100)],
        "last": hex(expected - 1),
    }))
    for o in (a, b, target, result, cq, pd, ctx):
        o.close()


if __name__ == "__main__":
    main()
