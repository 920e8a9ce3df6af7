/** The suite's records of siw (the kernel driver, stock and patched: `siw+rfc7306`) and libsiw (rdma-core's provider), in the order the judge tries them. */
import type { BehaviourRecord } from '../record.js';
import {
  SINCE_6_1,
  SINCE_RDMA_CORE_44,
  SIW_ATOMIC_ERRORS,
  SIW_QUERY_QP_STATE_REPORTED,
  SIW_QUERY_QP_STATE_UNSET,
  SIW_TERMINATED_STREAMS,
} from './ranges.js';

export const SIW_RECORDS: readonly BehaviourRecord[] = [
  {
    id: 'libsiw-no-query-srq',
    class: 'unimplemented',
    rule: 'ibv_query_srq(3): the verb may be unsupported (EOPNOTSUPP); libsiw offers no query_srq',
    provider: 'siw',
    kernel: SINCE_6_1,
    rdmaCore: SINCE_RDMA_CORE_44,
    scope: ['siw-srq-limit'],
    observed: { 'srqEvent*.limit': 'EOPNOTSUPP' },
    why:
      'libsiw has no query_srq: rdma-core providers/siw/siw.c siw_context_ops sets create_srq, ' +
      'modify_srq, post_srq_recv and destroy_srq only, so ibv_query_srq fails with EOPNOTSUPP and a ' +
      'program cannot read whether the limit is still armed (the event itself comes: siw_qp_rx.c ' +
      'siw_rqe_get; measured on 6.1.192 / rdma-core 44 and 7.3.4 / rdma-core 56.1)',
    spec: 'ibv_query_srq(3): srq_limit reads 0 once the limit event fired',
  },
  {
    id: 'libsiw-no-atomics',
    class: 'unimplemented',
    rule: 'RFC 7306 §1.1 (an extension a peer may not implement); ibv_post_send(3) (EINVAL, bad_wr)',
    provider: 'siw',
    kernel: SINCE_6_1,
    rdmaCore: SINCE_RDMA_CORE_44,
    scope: [
      'siw-fetch-add*',
      'siw-cmp-swap*',
      'siw-atomic-*',
      'siw-order-atomic-*',
      'siw-order-two-atomics',
      ...SIW_ATOMIC_ERRORS,
      'link-siw-fetch-add',
      'link-siw-cmp-swap',
    ],
    observed: { post1: 'EINVAL', 'post1.bad_wr': 'wr1' },
    nothingHappened: true,
    why:
      'siw implements no RFC 7306 (atomic_cap NONE; iwarp.h knows RDMAP opcodes 0-7 only); libsiw maps ' +
      'ATOMIC_* to an unsupported opcode and ibv_post_send returns -EINVAL with bad_wr = the request ' +
      '(rdma-core providers/siw/siw.c)',
    spec: 'RFC 7306 §5',
  },
  {
    id: 'libsiw-no-atomics-later-post',
    class: 'unimplemented',
    rule: 'RFC 7306 §1.1; ibv_post_send(3) (EINVAL, bad_wr)',
    provider: 'siw',
    kernel: SINCE_6_1,
    rdmaCore: SINCE_RDMA_CORE_44,
    scope: [...SIW_ATOMIC_ERRORS, 'siw-send-no-recv'],
    // The error programs' second post, a FetchAdd on the requester.
    observed: { post2: 'EINVAL', 'post2.bad_wr': 'wr2' },
    nothingHappened: true,
    why:
      'the FetchAdd an error program posts next is refused by libsiw like every atomic ' +
      '(libsiw-no-atomics): -EINVAL, bad_wr = it, nothing sent, no completion',
    spec: 'RFC 7306 §5',
  },
  {
    id: 'libsiw-refused-atomic-keeps-rts',
    class: 'unimplemented',
    rule: 'RFC 7306 §1.1; ibv_post_send(3): a refused request is not posted (follows from libsiw-no-atomics)',
    provider: 'siw',
    kernel: SINCE_6_1,
    rdmaCore: SINCE_RDMA_CORE_44,
    scope: SIW_ATOMIC_ERRORS,
    // The RDMA Write the responder posts back into the requester's buffer.
    observed: {
      'responder.wc2.status': 'SUCCESS',
      'responder.wc2.opcode': 'RDMA_WRITE',
      'responder.wc2.flags': 'none',
      wire: 'responder> rdma-write stag=local to=local+0 L payload=ad0000000008005a',
    },
    why:
      'libsiw refused the failing atomic at the post, so nothing reached the wire, no Terminate ' +
      'ended the stream, and the Write the responder posts next succeeds (the only message on ' +
      'the wire) where the engine, whose responder Terminated the stream, flushes it',
    spec: 'RFC 7306 §8, RFC 5040 §7 (Terminate ends the stream)',
  },
  {
    id: 'libsiw-refused-atomic-qps-stay-rts',
    class: 'unimplemented',
    rule: 'RFC 7306 §1.1; ibv_post_send(3): a refused request is not posted (follows from libsiw-no-atomics)',
    provider: 'siw',
    // From the kernel whose siw_query_qp reports the state at all (before it, the state
    // reads RESET: siw-query-qp-state).
    kernel: SIW_QUERY_QP_STATE_REPORTED,
    rdmaCore: SINCE_RDMA_CORE_44,
    scope: SIW_ATOMIC_ERRORS,
    observed: { 'q*.*.state': 'RTS' },
    why:
      'libsiw refused the failing atomic at the post (libsiw-refused-atomic-keeps-rts), so no ' +
      'error reached either QP: both stay in RTS where the engine, whose responder Terminated ' +
      'the stream, has both in ERR; measured on 6.12.95 and 7.3.4 with rdma-core 56.1',
    spec: 'RFC 7306 §8, RFC 5040 §7 (Terminate ends the stream)',
  },
  {
    // The fixed build before 6.8 reports the state too (patches/siw-fixes/0002 fixes
    // siw-query-qp-state), so libsiw-refused-atomic-qps-stay-rts shows there too.
    id: 'libsiw-refused-atomic-qps-stay-rts-fixed-query',
    class: 'unimplemented',
    rule: 'RFC 7306 §1.1; ibv_post_send(3): a refused request is not posted (follows from libsiw-no-atomics)',
    provider: 'siw+fixes',
    kernel: SIW_QUERY_QP_STATE_UNSET,
    rdmaCore: SINCE_RDMA_CORE_44,
    scope: SIW_ATOMIC_ERRORS,
    observed: { 'q*.*.state': 'RTS' },
    why:
      'as on 6.8 and later: libsiw refused the failing atomic at the post, so no error reached ' +
      'either QP and both stay in RTS, which siw_query_qp reports once patches/siw-fixes/0002 ' +
      'fills qp_state',
    spec: 'RFC 7306 §8, RFC 5040 §7 (Terminate ends the stream)',
  },
  {
    id: 'libsiw-concurrency-refused',
    class: 'unimplemented',
    rule: 'RFC 7306 §1.1; ibv_post_send(3) (EINVAL, bad_wr)',
    provider: 'siw',
    kernel: SINCE_6_1,
    rdmaCore: SINCE_RDMA_CORE_44,
    scope: ['siw-concurrent-fetch-add*'],
    observed: { 'hammer1.post': 'EINVAL', 'hammer1.succeeded': '0', 'hammer1.distinct': '0' },
    nothingHappened: true,
    why:
      "every QP's first FetchAdd is refused by libsiw (libsiw-no-atomics), in the suite's process " +
      'and in the other processes alike: no atomic executes and the word keeps its value',
    spec: 'RFC 7306 §5',
  },
  {
    id: 'siw-send-without-receive-no-terminate',
    class: 'defect',
    rule: 'RFC 5041 §7.2 (no untagged buffer: a DDP error), RFC 5040 §7 (an error that ends the stream sends a Terminate)',
    unclear:
      'siw_proc_send does call siw_init_terminate; why the Terminate never reaches the wire was not traced (the reproducer must show it)',
    provider: 'siw',
    kernel: SINCE_6_1,
    scope: ['siw-send-no-recv'],
    observed: {
      wire: 'requester> send qn=0 msn=1 mo=0 L payload=1122334455667788',
      'responder.wc2.status': 'none',
      'responder.wc2.wr': '—',
      'responder.wc2.vendor_err': '—',
    },
    why:
      'iWARP has no RNR: a Send that finds no posted receive is a DDP error (RFC 5041 §7.2: ' +
      'untagged buffer, "no buffer available"), and the engine answers it with that Terminate; ' +
      'siw (siw_qp_rx.c siw_proc_send: no RQE -> siw_init_terminate(DDP, untagged buffer, ' +
      'no buffer), -ENOENT) puts no Terminate on the wire in the capture, and the RDMA Write the ' +
      'responder posts afterwards gets no completion within 2 s (the engine: flushed). The ' +
      "requester's Send completed SUCCESS on both (RFC 5040 §5.5: completed once sent); why siw's " +
      'Terminate never shows was not traced further. The Write that never completes is ' +
      'siw-post-on-error-qp-no-completion (the QP is in ERROR): on the fixed build ' +
      '(patches/siw-fixes/0003) it completes WR_FLUSH_ERR as in the engine, and only the wire differs',
    spec: 'RFC 5041 §7.2, RFC 5040 §7',
  },
  {
    id: 'libsiw-no-write-imm',
    class: 'unimplemented',
    rule: 'RFC 7306 §6 (Immediate Data: an extension a peer may not implement, §1.1); ibv_post_send(3) (EINVAL, bad_wr)',
    provider: 'siw',
    kernel: SINCE_6_1,
    rdmaCore: SINCE_RDMA_CORE_44,
    scope: ['siw-write-imm*', 'link-siw-write-imm'],
    observed: { post1: 'EINVAL', 'post1.bad_wr': 'wr1' },
    nothingHappened: true,
    why:
      'libsiw maps RDMA_WRITE_WITH_IMM to an unsupported opcode (providers/siw/siw.c): siw sends no ' +
      'RFC 7306 Immediate Data message',
    spec: 'RFC 7306 §6',
  },
  {
    id: 'libsiw-list-refusal-lost',
    class: 'defect',
    rule: 'ibv_post_send(3): on failure it returns an errno and bad_wr names the first request not posted',
    provider: 'siw',
    kernel: SINCE_6_1,
    rdmaCore: SINCE_RDMA_CORE_44,
    scope: ['siw-order-write-then-write-imm', 'siw-order-send-then-atomic'],
    // Only the first request of the list reaches the wire; the second never completes.
    observed: {
      'requester.wc2.status': 'none',
      wire: /^requester> (rdma-write|send) [^\n]*$/,
    },
    nothingHappened: true,
    why:
      'libsiw bug: when a later request of a list has an opcode it cannot carry, siw_post_send sets ' +
      'bad_wr and rv = -EINVAL, but then rings the doorbell for the requests before it and overwrites ' +
      'rv with the doorbell result (rdma-core providers/siw/siw.c siw_post_send: rv = siw_db(qp)), so ' +
      'ibv_post_send returns 0: the refused request is silently dropped (no error, no completion)',
    spec: 'ibv_post_send(3): on failure returns an errno and bad_wr names the first request not posted',
  },
  {
    // On the fixed build (patches/rdma-core-fixes/0002) the refusal libsiw-list-refusal-lost
    // dropped is reported: what shows is the opcode libsiw does not carry.
    id: 'libsiw-list-refusal-reported',
    class: 'unimplemented',
    rule: 'RFC 7306 §5, §6 (Atomic Operations and Immediate Data: extensions a peer may not implement, §1.1); ibv_post_send(3) (EINVAL, bad_wr names the first request not posted)',
    provider: 'siw+fixes',
    kernel: SINCE_6_1,
    rdmaCore: SINCE_RDMA_CORE_44,
    scope: ['siw-order-write-then-write-imm', 'siw-order-send-then-atomic'],
    // The first request of the list is posted and reaches the wire; the second is refused.
    observed: {
      post1: 'EINVAL',
      'post1.bad_wr': 'wr2',
      wire: /^requester> (rdma-write|send) [^\n]*$/,
    },
    nothingHappened: true,
    why:
      'libsiw maps RDMA_WRITE_WITH_IMM and ATOMIC_* to an unsupported opcode (libsiw-no-write-imm, ' +
      'libsiw-no-atomics; rdma-core providers/siw/siw.c siw_post_send); with the list refusal kept ' +
      '(patches/rdma-core-fixes/0002) ibv_post_send returns -EINVAL with bad_wr = the second ' +
      'request, after the first was posted',
    spec: 'ibv_post_send(3): on failure returns an errno and bad_wr names the first request not posted',
  },
  {
    id: 'libsiw-no-send-imm',
    class: 'unimplemented',
    rule: 'RFC 7306 §6 has Immediate Data, no Send with Immediate; ibv_post_send(3) (EINVAL, bad_wr)',
    provider: 'siw',
    // The patched libsiw (patches/rdma-core/) maps only RDMA Write with Immediate: measured
    // on 6.1.192 with rdma-core 56.1.
    alsoFor: ['siw+rfc7306'],
    kernel: SINCE_6_1,
    rdmaCore: SINCE_RDMA_CORE_44,
    scope: ['siw-send-imm*', 'link-siw-send-imm'],
    observed: { post1: 'EINVAL', 'post1.bad_wr': 'wr1' },
    nothingHappened: true,
    why:
      'RFC 7306 has no Send with Immediate (only the V2 draft does); libsiw refuses SEND_WITH_IMM ' +
      'with -EINVAL (providers/siw/siw.c)',
    spec: 'RFC 7306 §6; draft-hilland-iwarp-verbs-v2',
  },
  // The patched siw (patches/siw/, patches/rdma-core/, docs/siw-rfc7306.md), measured on
  // 6.1.192 with rdma-core 56.1 (`run --siw rfc7306`).
  {
    id: 'siw-terminate-flushes-requester',
    class: 'allowed',
    rule: "RFC 5040 §7 and RFC 7306 §8 define the Terminate on the wire, not the completion status a consumer sees for it; how an iWARP RNIC surfaces a received Terminate is the verbs interface's choice",
    unclear:
      'the engine models both readings (terminate-status.ts: reference and siw); no text here names a completion status',
    provider: 'siw+rfc7306',
    kernel: SINCE_6_1,
    scope: [
      'siw-misaligned',
      'siw-no-remote-atomic',
      'siw-atomic-invalid-rkey',
      'siw-atomic-past-end',
    ],
    observed: { 'requester.wc1.status': 'WR_FLUSH_ERR' },
    why:
      "the responder's Terminate is on the wire as the engine's (layer, type, code, DDP header " +
      'copy), but siw reports it as it reports a Terminate for a Read: siw_qp_rx.c ' +
      'siw_proc_terminate only logs it and returns -ECONNRESET, the QP goes to ERROR and siw_qp.c ' +
      'siw_sq_flush completes the ORQ entry of the failed atomic with SIW_WC_WR_FLUSH_ERR (the ' +
      "engine's `siw` Terminate status model, terminate-status.ts); the reference model reports " +
      "the failure's class (REM_INV_REQ_ERR, REM_ACCESS_ERR)",
    spec: 'RFC 7306 §8, RFC 5040 §7',
  },
  {
    id: 'siw-post-on-error-qp-no-completion',
    class: 'defect',
    rule: 'IBTA Vol. 1 §10.3.1 (a work request posted to a QP in the Error state completes with a flush error); ibv_post_send(3)',
    unclear:
      'the suite measures it on the patched siw only (stock libsiw refuses the atomics that put the QP in ERROR first); the path (siw_verbs.c siw_post_send on a QP in ERROR) is stock siw, where repro/siw-post-on-error-qp-no-completion.c shows it (a QP moved to ERR with ibv_modify_qp)',
    provider: 'siw+rfc7306',
    kernel: SINCE_6_1,
    rdmaCore: { from: '56.1' },
    scope: [...SIW_TERMINATED_STREAMS, 'siw-atomic-invalid-lkey'],
    observed: {
      'requester.wc2.status': 'none',
      'requester.wc2.{wr,vendor_err}': '—',
      'responder.wc2.status': 'none',
      'responder.wc2.{wr,vendor_err}': '—',
    },
    why:
      'after a Terminate both QPs are in ERROR; a request posted then is written by libsiw into ' +
      'the mmapped SQ and the doorbell (siw.h siw_db, a write on the command fd) reaches siw_verbs.c ' +
      'siw_post_send with no work request, which on a QP in ERROR calls siw_sq_flush_wr with ' +
      'nothing to flush: the SQE is neither executed nor flushed, ibv_post_send returns 0 and no ' +
      'completion comes within 2 s, where the engine flushes it (WR_FLUSH_ERR; for the ' +
      "responder's Write after a requester-side error it models retry exhaustion)",
    spec: 'IBTA 10.3.1 (Error state: posted work requests complete in error)',
  },
  {
    id: 'siw-local-catastrophic-error-code',
    class: 'allowed',
    rule: 'RFC 5040 §4.8 defines no Error Code under RDMAP Local Catastrophic Error: the IANA RDMAP Errors registry (RFC 6580) lists it as 0x0/0x0/ALL, so any code is conformant',
    unclear:
      "RFC 5040 §4.8 is read through the codec's table and the IANA registry, not quoted here; the code 0x00 the engine sends is the codec's one row for the type",
    provider: 'siw+rfc7306',
    kernel: SINCE_6_1,
    scope: ['siw-atomic-invalid-lkey'],
    observed: {
      wire:
        'requester> atomic-request qn=1 msn=1 mo=0 L\n' +
        'responder> atomic-response qn=3 msn=1 mo=0 L\n' +
        'requester> terminate qn=2 msn=1 mo=0 L layer=0 type=0 code=0xff hdrct=---',
    },
    why:
      'the Atomic Response cannot be placed (the local SGE names an lkey never issued): the ' +
      'patched siw_qp_rx.c siw_atomic_resp_complete completes the atomic with LOC_PROT_ERR and ' +
      'terminates the stream, as the engine does (RFC 7306 §8.1 item 1: no header copied), with ' +
      'RDMAP / Local Catastrophic Error, but with Error Code 0xff (RDMAP_ECODE_UNSPECIFIED, the ' +
      'code stock siw pairs with RDMAP_ETYPE_CATASTROPHIC: siw_qp.c siw_qp_modify, siw_qp_rx.c) ' +
      'where the engine sends 0x00',
    spec: 'RFC 5040 §4.8 (Local Catastrophic Error); RFC 7306 §8.1',
  },
  {
    id: 'libsiw-rfc7306-atomic-sge-length',
    class: 'allowed',
    rule: 'ibv_post_send(3): a request the provider can tell is invalid while posting fails at once (EINVAL, bad_wr); IBTA Vol. 1 §10.7.3 (local errors)',
    provider: 'siw+rfc7306',
    kernel: SINCE_6_1,
    rdmaCore: { from: '56.1' },
    scope: ['siw-atomic-short-sge', 'siw-atomic-no-sge'],
    observed: { post1: 'EINVAL', 'post1.bad_wr': 'wr1' },
    nothingHappened: true,
    why:
      'the patched libsiw (patches/rdma-core/0001, providers/siw/siw.c push_send_wqe) refuses an ' +
      'atomic whose SGE list is not one 8-byte buffer before posting (-EINVAL, bad_wr = it), as ' +
      'librxe does (librxe-atomic-sge-length); the engine sends it and fails the placement of the ' +
      'Atomic Response (LOC_LEN_ERR)',
    spec: 'IBTA 10.7.3 (local errors)',
  },
  {
    id: 'libsiw-rfc7306-refused-sge-keeps-rts',
    class: 'allowed',
    rule: 'ibv_post_send(3): a request refused at the post is not posted (follows from libsiw-rfc7306-atomic-sge-length)',
    provider: 'siw+rfc7306',
    kernel: SINCE_6_1,
    rdmaCore: { from: '56.1' },
    scope: ['siw-atomic-short-sge', 'siw-atomic-no-sge'],
    observed: {
      'requester.wc2.status': 'SUCCESS',
      'requester.wc2.opcode': 'FETCH_ADD',
      'requester.wc2.byte_len': '8',
      'requester.wc2.flags': 'none',
      'requester.wc2.fetched': '0x0123456789abcdef',
      'responder.wc2.status': 'SUCCESS',
      'responder.wc2.opcode': 'RDMA_WRITE',
      'responder.wc2.flags': 'none',
      wire:
        'requester> atomic-request qn=1 msn=1 mo=0 L\n' +
        'responder> atomic-response qn=3 msn=1 mo=0 L\n' +
        'responder> rdma-write stag=local to=local+0 L payload=ad0000000008005a',
    },
    why:
      'the refused post sent nothing, so the FetchAdd posted next executes on the intact stream ' +
      '(fetching the untouched word, the only Atomic Request on the wire) and the Write back ' +
      'succeeds, where the engine flushes the one and times out the other',
  },
  {
    id: 'siw-qp-access-not-enforced-qps-stay-rts',
    class: 'defect',
    rule: "ibv_modify_qp(3) qp_access_flags (the QP's remote access enables); IBTA Vol. 1 §10.6.3.3 (follows from siw-qp-access-not-enforced)",
    provider: 'siw+rfc7306',
    // From the kernel whose siw_query_qp reports the state at all (before it, the state
    // reads RESET: siw-query-qp-state).
    kernel: SIW_QUERY_QP_STATE_REPORTED,
    scope: ['siw-qp-atomic-removed'],
    observed: { 'q*.*.state': 'RTS' },
    why:
      'both FetchAdds execute (siw-qp-access-not-enforced), so no error reaches either QP: all ' +
      'stay in RTS where the engine, whose responder Terminated the stream, has them in ERR; ' +
      'measured on 7.3.4 with rdma-core 56.1 and the patched siw',
    spec: 'IBTA 10.6.3.3 (QP remote access enables); RFC 5040 §7 (Terminate ends the stream)',
  },
  {
    id: 'libsiw-rfc7306-refused-sge-qps-stay-rts',
    class: 'allowed',
    rule: 'ibv_post_send(3): a request refused at the post is not posted (follows from libsiw-rfc7306-atomic-sge-length)',
    provider: 'siw+rfc7306',
    kernel: SIW_QUERY_QP_STATE_REPORTED,
    rdmaCore: { from: '56.1' },
    scope: ['siw-atomic-short-sge', 'siw-atomic-no-sge'],
    observed: { 'q*.*.state': 'RTS' },
    why:
      'the patched libsiw refused the atomic at the post (libsiw-rfc7306-atomic-sge-length), so ' +
      'no error reached either QP: both stay in RTS where the engine, which sent it and failed ' +
      'the Atomic Response placement, has them in ERR; measured on 7.3.4 with rdma-core 56.1',
    spec: 'IBTA 10.7.3 (local errors)',
  },
  {
    // The RFC 7306 series on top of the fixes (run --fixes --siw rfc7306) before 6.8 reports
    // the state too (patches/siw-fixes/0002 fixes siw-query-qp-state), so the two records
    // above show there as on 6.8 and later.
    id: 'siw-qp-access-not-enforced-qps-stay-rts-fixed-query',
    class: 'defect',
    rule: "ibv_modify_qp(3) qp_access_flags (the QP's remote access enables); IBTA Vol. 1 §10.6.3.3 (follows from siw-qp-access-not-enforced)",
    provider: 'siw+rfc7306+fixes',
    kernel: SIW_QUERY_QP_STATE_UNSET,
    scope: ['siw-qp-atomic-removed'],
    observed: { 'q*.*.state': 'RTS' },
    why:
      'as on 6.8 and later (siw-qp-access-not-enforced-qps-stay-rts): both FetchAdds execute, ' +
      'so every QP stays in RTS, which siw_query_qp reports once patches/siw-fixes/0002 fills ' +
      'qp_state; measured on 6.1.0-57 with the RFC 7306 series and the fixes',
    spec: 'IBTA 10.6.3.3 (QP remote access enables); RFC 5040 §7 (Terminate ends the stream)',
  },
  {
    id: 'libsiw-rfc7306-refused-sge-qps-stay-rts-fixed-query',
    class: 'allowed',
    rule: 'ibv_post_send(3): a request refused at the post is not posted (follows from libsiw-rfc7306-atomic-sge-length)',
    provider: 'siw+rfc7306+fixes',
    kernel: SIW_QUERY_QP_STATE_UNSET,
    rdmaCore: { from: '56.1' },
    scope: ['siw-atomic-short-sge', 'siw-atomic-no-sge'],
    observed: { 'q*.*.state': 'RTS' },
    why:
      'as on 6.8 and later (libsiw-rfc7306-refused-sge-qps-stay-rts): the refused atomic sent ' +
      'nothing, so both QPs stay in RTS, which siw_query_qp reports once patches/siw-fixes/0002 ' +
      'fills qp_state; measured on 6.1.0-57 with the RFC 7306 series and the fixes',
    spec: 'IBTA 10.7.3 (local errors)',
  },
  {
    id: 'siw-qp-access-not-enforced',
    class: 'defect',
    rule: "ibv_modify_qp(3) qp_access_flags (the QP's remote access enables); IBTA Vol. 1 §10.6.3.3; RFC 7306 §8.2 (an Atomic Request the peer may not execute is answered with a Terminate)",
    unclear:
      "the atomic enable is the patched siw's own (patches/siw/, ours); stock siw ignores the Read and Write enables too (siw_verbs.c siw_modify_qp)",
    provider: 'siw+rfc7306',
    kernel: SINCE_6_1,
    scope: ['siw-qp-atomic-removed'],
    observed: {
      'requester.wc{1,2}.status': 'SUCCESS',
      'requester.wc{1,2}.opcode': 'FETCH_ADD',
      'requester.wc{1,2}.byte_len': '8',
      'requester.wc{1,2}.flags': 'none',
      'requester.wc{1,2}.vendor_err': '—',
      'requester.wc1.fetched': '0x0123456789abcdef',
      'requester.wc2.fetched': '0x12345678abcdf011',
      'responder.wc2.status': 'SUCCESS',
      'responder.wc2.opcode': 'RDMA_WRITE',
      'responder.wc2.flags': 'none',
      'responder.wc2.vendor_err': '—',
      'mem[8]': '0x23456789cdf01233',
      wire: /^requester> atomic-request qn=1 msn=1 [^\n]*\nresponder> atomic-response qn=3 msn=1 [^\n]*\nrequester> atomic-request qn=1 msn=2 [^\n]*\nresponder> atomic-response qn=3 msn=2 [^\n]*\nresponder> rdma-write [^\n]*$/,
    },
    why:
      "siw does not enforce a QP's remote access enables: siw_verbs.c siw_modify_qp maps " +
      'IB_ACCESS_REMOTE_READ/WRITE to SIW_RDMA_*_ENABLED flags that no receive path reads, and ' +
      'IB_ACCESS_REMOTE_ATOMIC to nothing (stock siw too; the patch checks the MR right only), so ' +
      'both FetchAdds execute after the modify removed remote atomic access, where the engine ' +
      'answers the first with a Terminate (Remote Protection Error). A fix belongs in a further ' +
      'patch (siw_proc_atomic_req checking a QP atomic enable)',
    spec: 'IBTA 10.6.3.3 (QP remote access enables); RFC 7306 §8.2',
  },
  // A mixed link pair (`run --link --siw rfc7306 --peer-siw stock`, link/sides.ts): the
  // patched siw requests RFC 7306 operations from a stock siw, which answers as RFC 7306
  // §1.1 says a peer without the extension does. Measured with a patched 6.1.0-56 requester
  // (rdma-core 56.1) and a stock 7.3.4 responder (rdma-core 56.1), both ways round.
  {
    id: 'siw-unexpected-opcode-terminate-layout',
    class: 'defect',
    rule: 'RFC 5040 §4.8 (the Terminate Control field: Layer in the high nibble, then Error Type, Error Code, Hdrct); RFC 7306 §8.1 (the Terminated DDP Header is included)',
    provider: 'siw',
    role: 'responder',
    peer: 'siw+rfc7306',
    kernel: SINCE_6_1,
    scope: ['link-siw-fetch-add', 'link-siw-cmp-swap', 'link-siw-write-imm'],
    observed: {
      wire: /\nresponder> terminate qn=2 msn=1 mo=0 L layer=2 type=0 code=0x06 hdrct=---$/,
    },
    why:
      'the stock responder ends the stream with the Terminate RFC 7306 §1.1 asks of a peer ' +
      'without the extension (RDMAP / Remote Operation Error / Unexpected OpCode: siw_qp_rx.c ' +
      'siw_get_hdr refuses opcodes above 7), as the engine does; but its struct ' +
      'iwarp_terminate bitfields put Layer in the low nibble on little-endian hosts (the wire ' +
      'reads Layer 2 = LLP, Error Type 0) and siw_send_terminate copies no header for an ' +
      'opcode error, where the engine copies the DDP header (RFC 7306 §8.1, RFC 5040 §4.8); ' +
      'the patched siw fixes the layout (patches/siw/0001), the stock 6.1 and 7.3 do not ' +
      '(the wire probes record the same answer: siw-terminate-layout)',
    spec: 'RFC 7306 §1.1, §8.1; RFC 5040 §4.8',
  },
  {
    id: 'siw-peer-terminate-flushes-requester',
    class: 'allowed',
    rule: "RFC 5040 §7, RFC 7306 §1.1: the Terminate on the wire is defined, the completion status a consumer sees for it is the verbs interface's choice (as siw-terminate-flushes-requester)",
    unclear: 'no text here names a completion status',
    provider: 'siw+rfc7306',
    peer: 'siw',
    kernel: SINCE_6_1,
    scope: ['link-siw-fetch-add', 'link-siw-cmp-swap'],
    observed: { 'requester.wc1.status': 'WR_FLUSH_ERR' },
    why:
      "the stock peer's Terminate reaches the patched requester, which reports it as it " +
      'reports any Terminate: siw_qp_rx.c siw_proc_terminate only logs it and returns ' +
      '-ECONNRESET, the QP goes to ERROR and siw_qp.c siw_sq_flush completes the ORQ entry ' +
      'of the atomic with SIW_WC_WR_FLUSH_ERR; the engine reports the class of the remote ' +
      'error the Terminate carries (Remote Operation Error: REM_INV_REQ_ERR)',
    spec: 'RFC 7306 §1.1, RFC 5040 §7',
  },
  // The MPA CRC case on the faulty wire (`run --link --device siw0 --siw rfc7306 --faults
  // corrupt-payload=0.02,mpa-crc=1,seed=7`, fault-scenarios.ts MPA_CRC): a byte of a Write's
  // data changed past TCP. Measured on 6.1.0-56 (rdma-core 56.1), patched siw on both guests.
  {
    id: 'siw-crc-failed-write-placed',
    class: 'defect',
    rule: 'RFC 5044 §7.2 (an FPDU whose CRC fails is not passed to DDP), §8 (error handling)',
    provider: 'siw',
    alsoFor: ['siw+rfc7306'],
    role: 'responder',
    kernel: SINCE_6_1,
    scope: ['link-siw-mpa-crc'],
    observed: { 'stream.memory': /^\d+ byte\(s\) wrong, the first at \d+$/ },
    why:
      "siw places a tagged FPDU's data as it receives it (siw_qp_rx.c siw_proc_write -> " +
      'siw_rx_data into the MR) and compares the CRC only at the trailer (siw_get_trailer), ' +
      "so the changed byte is in B's buffer when the Terminate (LLP / MPA / CRC Error) goes " +
      'out; RFC 5044 §7.2 says an FPDU whose CRC fails is not delivered. The packet tester ' +
      'records the same for a Send (siw-crc-checked-after-placement)',
    spec: 'RFC 5044 §7.2, §8',
  },
  {
    id: 'siw-dropped-stream-active-request-loc-qp-op-err',
    class: 'allowed',
    rule: 'RFC 5040 §5.4 (a terminated stream) names no completion status for the request in transmission; IBTA 1.5 Vol. 1 §10.3.1 flushes the requests not yet begun',
    unclear: 'which request is active at the drop is timing',
    provider: 'siw',
    alsoFor: ['siw+rfc7306'],
    kernel: SINCE_6_1,
    scope: ['link-siw-mpa-crc'],
    observed: {
      'stream.requester':
        /^(SUCCESS, then WR_FLUSH_ERR|\d+ SUCCESS, 1 LOC_QP_OP_ERR(, \d+ WR_FLUSH_ERR)?)$/,
    },
    why:
      "when B drops the connection after its Terminate, the request A's transmit path is " +
      'sending fails: siw_qp_tx.c siw_qp_sq_process completes that active WQE with ' +
      'SIW_WC_LOC_QP_OP_ERR (and calls siw_qp_cm_drop), and siw_sq_flush completes the rest ' +
      'with WR_FLUSH_ERR; the engine flushes every outstanding request. Whether a request is ' +
      'active at that moment is timing (A keeps 8 of 64 KiB outstanding), so the record names ' +
      "the engine's value too",
    spec: 'RFC 5040 §5.4 (a terminated stream), IBTA 1.5 §10.3.1 (the QP in Error flushes)',
  },
  {
    id: 'siw-no-solicited-event',
    class: 'defect',
    rule: 'ibv_req_notify_cq(3) (solicited_only: the next solicited completion raises the event); IBTA 1.5 Vol. 1 §11.4.2.2; RFC 5040 §5.3 (Send with Solicited Event)',
    provider: 'siw',
    kernel: SINCE_6_1,
    scope: ['siw-solicited-event'],
    observed: { 'event1.responder': 'none' },
    why:
      'siw never raises the event of a CQ armed for solicited completions on a receive: siw_qp.c ' +
      'siw_rqe_complete asks siw_cq_notify_now(cq, SIW_WQE_SIGNALLED), never with SIW_WQE_SOLICITED, ' +
      'so an arm of IB_CQ_SOLICITED matches only a send-side completion; the Send with SE arrives ' +
      '(the SE bit is on the wire, the receive completes) but ibv_get_cq_event never returns',
    spec: 'IBTA 1.5 §11.4.2.2; RFC 5040 §5.3',
  },
  {
    id: 'siw-query-qp-state',
    class: 'defect',
    rule: 'ibv_query_qp(3): attr->qp_state is the current QP state',
    provider: 'siw',
    // The patched siw (patches/siw/) leaves siw_query_qp as it is: measured on 6.1.192.
    alsoFor: ['siw+rfc7306'],
    kernel: SIW_QUERY_QP_STATE_UNSET,
    scope: ['siw-*'],
    observed: { 'q*.*.state': 'RESET' },
    why:
      "siw_query_qp in Debian's 6.1 kernel does not fill qp_state (it reads as 0 = RESET although the QP is " +
      'in RTS); upstream "RDMA/siw: Set qp_state in siw_query_qp" (6.8 cycle) adds siw_qp_state_to_ib_qp_state, ' +
      'and 6.12 and 7.3 report the real state (RTS, ERR), as the engine does',
  },
];
