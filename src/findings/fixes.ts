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
}

export const DEFECT_FIXES: readonly DefectFix[] = [];
