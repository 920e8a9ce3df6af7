#!/usr/bin/env python3
"""Writes patches/reverted-2026/<line>/<bug>.patch: each 2026 receive-path fix of rxe and
siw taken back out of a kernel line's pristine linux-source (the benchmark of issue 32).
Each revert is a text edit stated here (what the fixed code reads, what it read before);
a line where the fixed text is absent gets no patch and says why (not-applicable.txt).
Usage: python3 patches/reverted-2026/revert.py SRC_ROOT (RDMA_INTEROP_CACHE/linux-src)."""
import difflib
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
LINES = {'6.1': '6.1.192-3', '6.12': '6.12.95-1~bpo12+1', '7.3': '7.3.4-1~bpo13+1'}
SIW_RX = 'drivers/infiniband/sw/siw/siw_qp_rx.c'

# bug -> (file, fixed text, the text before the fix)
REVERTS = {
    # CVE-2026-23242 (14ab3da122bd): the error path of siw_tcp_rx_data() read
    # qp->rx_fpdu->more_ddp_segs with rx_fpdu still NULL after a bad first header.
    'siw-null-rx-fpdu': (
        SIW_RX,
        '(qp->rx_fpdu && qp->rx_fpdu->more_ddp_segs)) &&',
        'qp->rx_fpdu->more_ddp_segs) &&',
    ),
    # "Reject MPA FPDU length underflow before signed receive math" (2026-05): siw_get_hdr()
    # refuses a ULPDU Length shorter than the opcode's header; without it the remaining
    # length goes negative.
    'siw-mpa-underflow': (
        SIW_RX,
        '\tif (unlikely(be16_to_cpu(c_hdr->mpa_len) + MPA_HDR_SIZE <\n'
        '\t\t     iwarp_pktinfo[opcode].hdr_len)) {\n'
        '\t\tpr_warn_ratelimited("siw: short mpa_len %u for opcode %u (hdr_len %u)\\n",\n'
        '\t\t\t\t    be16_to_cpu(c_hdr->mpa_len), opcode,\n'
        '\t\t\t\t    iwarp_pktinfo[opcode].hdr_len);\n'
        '\t\tsiw_init_terminate(rx_qp(srx), TERM_ERROR_LAYER_LLP,\n'
        '\t\t\t\t   LLP_ETYPE_MPA, LLP_ECODE_FPDU_START, 0);\n'
        '\t\treturn -EINVAL;\n'
        '\t}\n',
        '',
    ),
    # The fragmented-header fix: the rest of a header split across segments is copied from
    # where the earlier segment stopped, not from MIN_DDP_HDR (6.12.95 still has the old form).
    'siw-header-split': (
        SIW_RX,
        'bytes = min_t(int, hdrlen - srx->fpdu_part_rcvd, srx->skb_new);',
        'bytes = min_t(int, hdrlen - MIN_DDP_HDR, srx->skb_new);',
    ),
    # "RDMA/rxe: Reject unknown opcodes before ICRC processing": rxe_udp_encap_recv/rxe_rcv
    # drop an opcode whose rxe_opcode[] entry is empty before rxe_icrc_hdr's length math.
    'rxe-unknown-opcode-icrc': (
        'drivers/infiniband/sw/rxe/rxe_recv.c',
        '\tif (unlikely(!rxe_opcode[pkt->opcode].mask ||\n'
        '\t\t     !rxe_opcode[pkt->opcode].length))\n'
        '\t\tgoto drop;\n\n',
        '',
    ),
    # CVE-2026-46114, "RDMA/rxe: Reject non-8-byte ATOMIC_WRITE payloads".
    'rxe-atomic-write-zero-length': (
        'drivers/infiniband/sw/rxe/rxe_resp.c',
        '\t\tif (resid != sizeof(u64) || pktlen != sizeof(u64) ||\n'
        '\t\t    bth_pad(pkt)) {\n',
        '\t\tif (0) {\n',
    ),
    # mr_check_range(): iova + length compared with the region's end in u64 wrapped.
    'rxe-mr-check-range': (
        'drivers/infiniband/sw/rxe/rxe_mr.c',
        '\t\tif (iova < mr->ibmr.iova ||\n'
        '\t\t    length > mr->ibmr.length ||\n'
        '\t\t    iova - mr->ibmr.iova > mr->ibmr.length - length) {\n',
        '\t\tif (iova < mr->ibmr.iova ||\n'
        '\t\t    iova + length > mr->ibmr.iova + mr->ibmr.length) {\n',
    ),
}


def main(src_root: str) -> None:
    for line, version in LINES.items():
        out = os.path.join(HERE, line)
        os.makedirs(out, exist_ok=True)
        absent = []
        for bug, (path, fixed, before) in REVERTS.items():
            with open(os.path.join(src_root, version, path)) as f:
                text = f.read()
            target = os.path.join(out, f'{bug}.patch')
            if text.count(fixed) != 1:
                absent.append(f'{bug}: the fixed text is not in {path} of linux-source {version}')
                if os.path.exists(target):
                    os.remove(target)
                continue
            diff = difflib.unified_diff(
                text.splitlines(keepends=True),
                text.replace(fixed, before).splitlines(keepends=True),
                f'a/{path}',
                f'b/{path}',
            )
            with open(target, 'w') as f:
                f.write(f'Revert the 2026 fix "{bug}" (benchmark of issue 32; never for use)\n\n')
                f.writelines(diff)
        with open(os.path.join(out, 'not-applicable.txt'), 'w') as f:
            f.write(''.join(f'{a}\n' for a in absent))


if __name__ == '__main__':
    main(sys.argv[1])
