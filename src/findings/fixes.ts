/**
 * The defects of rxe, siw, librxe and libsiw that this project reproduces and fixes
 * (issue 33): for each defect record (judge/records/, class `defect`), its standalone
 * reproducer (repro/) and the patches that fix it (patches/), per component. The
 * findings report (findings/report*.ts) and the `--fixes` runs read this table; a test
 * checks every path in it exists and every record id names a defect record.
 */

/** Where a fix applies: the kernel driver (a module built from the line's source) or rdma-core's provider. */
export type FixComponent = 'rxe' | 'siw' | 'librxe' | 'libsiw';

export interface DefectFix {
  /** The record (judge/records/) whose difference this defect is. */
  readonly recordId: string;
  readonly component: FixComponent;
  /** The reproducer's source, relative to the package root (repro/<name>.c). */
  readonly reproducer: string;
  /** The patch files, relative to the package root, in the order they apply. */
  readonly patches: readonly string[];
  /** Upstream state, when known: the version or commit that fixed it, else undefined (still present). */
  readonly fixedUpstream?: string;
  /**
   * Further defect records of the same cause that the same patches fix, which the
   * reproducer does not exercise (they need a peer on the wire: the RoCE tester's).
   */
  readonly alsoFixes?: readonly string[];
  /**
   * The suite scenarios the kernel test of the fixed build runs for this fix, when the
   * record's scope is wider than a CI run can afford (default: the record's scope).
   */
  readonly suiteScope?: readonly string[];
}

// fixedUpstream stays unset while the newest source checked still has the
// defect (Linux 7.3.4, rdma-core master v64.0-61, 2026-08-20).
export const DEFECT_FIXES: readonly DefectFix[] = [
  {
    recordId: 'rxe-with-inv-reads-ip-csum-ok',
    component: 'librxe',
    reproducer: 'repro/rxe-with-inv-reads-ip-csum-ok.c',
    patches: [
      'patches/rdma-core-fixes/0001-providers-rxe-Report-IBV_WC_WITH_INV-for-a-Send-with.patch',
    ],
  },
  {
    recordId: 'rxe-mw-range-is-the-mr',
    component: 'rxe',
    reproducer: 'repro/rxe-mw-range-is-the-mr.c',
    // patches/rxe-fixes/6.12/ holds the same change against 6.12's context.
    patches: ['patches/rxe-fixes/0002-RDMA-rxe-Bound-an-access-through-a-memory-window-by-.patch'],
  },
  {
    recordId: 'rxe-no-retry-exhaustion-towards-err-qp',
    component: 'rxe',
    reproducer: 'repro/rxe-no-retry-exhaustion-towards-err-qp.c',
    patches: ['patches/rxe-fixes/0001-RDMA-rxe-Count-down-retry_cnt-7-like-any-other-retry.patch'],
    // The RoCE tester's record of the same cause (its requester QP towards a peer that never
    // answers): `probe --fixes` saw it go stale on every line (8 transmissions, then
    // RETRY_EXC_ERR and the QP in ERR, as the engine predicts).
    alsoFixes: ['rxe-retry-cnt-7-is-infinite'],
  },
  {
    recordId: 'libsiw-list-refusal-lost',
    component: 'libsiw',
    reproducer: 'repro/libsiw-list-refusal-lost.c',
    patches: [
      'patches/rdma-core-fixes/0002-providers-siw-Keep-the-error-of-a-refused-request-in.patch',
    ],
  },
  {
    recordId: 'siw-no-solicited-event',
    component: 'siw',
    reproducer: 'repro/siw-no-solicited-event.c',
    patches: ['patches/siw-fixes/0001-RDMA-siw-Raise-the-solicited-event-of-a-receive-CQ.patch'],
  },
  {
    recordId: 'rxe-short-sge-is-protection-error',
    component: 'rxe',
    reproducer: 'repro/rxe-short-sge-is-protection-error.c',
    patches: ['patches/rxe-fixes/0003-RDMA-rxe-Report-a-response-too-long-for-the-scatter-.patch'],
    // do_read() has the same copy_data() status; the patch fixes both.
    alsoFixes: ['rxe-read-response-too-long-is-loc-prot-err'],
  },
  {
    recordId: 'siw-query-qp-state',
    component: 'siw',
    reproducer: 'repro/siw-query-qp-state.c',
    // For the lines before the change upstream (6.1 here); patches/siw-fixes/<line>/
    // <name>.upstream leaves it out of the later lines' series.
    patches: ['patches/siw-fixes/0002-RDMA-siw-Report-the-QP-state-in-siw_query_qp.patch'],
    fixedUpstream: '6.8 (siw_query_qp reports qp_state; 6.12.95 and 7.3.4 measured)',
    // Its scope is every siw scenario: one the suite test runs anyway shows the state.
    suiteScope: ['siw-solicited-event'],
  },
  {
    // Recorded on the patched siw (siw+rfc7306), the one whose suite reaches a QP in ERROR
    // (a Terminate); the path, siw_post_send on a user mapped SQ, is stock siw's, which the
    // reproducer shows.
    recordId: 'siw-post-on-error-qp-no-completion',
    component: 'siw',
    reproducer: 'repro/siw-post-on-error-qp-no-completion.c',
    patches: ['patches/siw-fixes/0003-RDMA-siw-Flush-a-request-posted-to-a-user-mapped-SQ-.patch'],
    // No stock-siw scenario shows it: its record's scope is the patched siw's.
    suiteScope: [],
  },
  {
    recordId: 'rxe-odp-copy-ignores-page-offset',
    component: 'rxe',
    reproducer: 'repro/rxe-odp-copy-ignores-page-offset.c',
    // 7.3 only: rxe has no ODP on 6.1 and 6.12 (the reproducer exits 0 there: nothing to
    // reproduce), so the patch sits in the 7.3 directory alone (fixed-module.sh adds it).
    patches: [
      'patches/rxe-fixes/7.3/0004-RDMA-rxe-Copy-ODP-data-at-the-iova-s-offset-in-the-p.patch',
    ],
    // No suite scenario posts to an ODP MR.
    suiteScope: [],
  },
];

/** Every record id the fixed build fixes: each fix's record and those of the same cause. */
export const FIXED_RECORD_IDS: ReadonlySet<string> = new Set(
  DEFECT_FIXES.flatMap((f) => [f.recordId, ...(f.alsoFixes ?? [])]),
);
