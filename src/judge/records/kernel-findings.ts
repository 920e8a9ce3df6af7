/**
 * Recorded kernel defects that the wire fuzz and the guided campaigns find (issue 32): a
 * finding (probe/fuzz-loop.ts FuzzFinding) whose oracle and first kernel-log line match a
 * record on its kernel line is explained, and reported with the record's id instead of
 * failing the run. Kernel-log oracles are sampled (KFENCE catches a use-after-free only
 * when the freed object was a sampled allocation) and the guided corpus follows coverage,
 * so such a finding comes and goes between runs of the same seed: without a record, CI
 * failed on it at random (stop 43's CI, and a cold run at s44).
 */
import type { RecordClass } from '../record.js';
import { inRange, rangeText, type VersionRange } from '../version-range.js';

export interface FindingRecord {
  readonly id: string;
  /** docs/findings.md's classes: what a kernel memory-safety bug is (`defect`). */
  readonly class: RecordClass;
  /** The rule it breaks, citing its source (judge/records/classes.ts checks the form). */
  readonly rule: string;
  readonly provider: 'rxe' | 'siw';
  /** The kernel lines (`uname -r`) it was seen on and whose source it is read from. */
  readonly kernel: VersionRange;
  /** The oracle that fires (`kernel-log/kfence`, ...). */
  readonly oracle: string;
  /** Matches the finding's `why` (its first kernel-log line). */
  readonly log: RegExp;
  /** Its cause in the driver's source, and how it was seen. */
  readonly why: string;
  /** What is not known yet. */
  readonly unclear?: string;
}

export const KERNEL_FINDING_RECORDS: readonly FindingRecord[] = [
  {
    id: 'siw-cm-work-handler-use-after-free',
    class: 'defect',
    rule: 'RFC 5044 §7.1 (the MPA exchange whose end releases the endpoint); a use-after-free breaks every rule at once',
    provider: 'siw',
    kernel: { from: '6.12', before: '6.13' },
    oracle: 'kernel-log/kfence',
    log: /KFENCE: use-after-free (?:read|write) in siw_cm_work_handler\b/,
    why:
      "6.12.95's siw_cm_work_handler (siw_cm.c 1155-1193), releasing an endpoint, calls " +
      "siw_qp_llp_close(qp), which drops the QP's reference on the endpoint " +
      '(siw_qp.c 168-171: siw_cep_put(qp->cep)); the handler then goes on with the endpoint ' +
      '(siw_cep_set_inuse, cep->qp = NULL, cep->sock read and cleared before sock_release). ' +
      "6.1.192 and 7.3.4 read cep->sock once at the start of the release ('struct socket *s = " +
      "cep->sock'), an upstream change 6.12.95 lacks. Seen twice: KFENCE " +
      "'use-after-free write in siw_cm_work_handler+0x5b9/0xeb0 [siw]' on 6.12.95 during the " +
      'siw guided campaign (seed 1, inputs 75-99), in both cold CI runs of 2026-12-05; never ' +
      'on 6.1.192 or 7.3.4',
    unclear:
      "which write it was: Debian's siw.ko has no debug information to map +0x5b9 to a line, " +
      'the batch was not reduced (the minimizer replays kernel-log batches only with a budget), ' +
      "and whether 6.1.192's and 7.3.4's change removes it; KFENCE samples, and two runs on " +
      'this host before them did not show it',
  },
];

/** The device a fuzz summary names, as the provider of a record. */
function providerOf(device: string): FindingRecord['provider'] | undefined {
  if (device.startsWith('rxe')) return 'rxe';
  if (device.startsWith('siw')) return 'siw';
  return undefined;
}

/** The record that explains `finding` on `kernel` (`uname -r`) and `device`, if any. */
export function explainFinding(
  kernel: string,
  device: string,
  finding: { readonly why: string; readonly oracles?: readonly string[] },
  records: readonly FindingRecord[] = KERNEL_FINDING_RECORDS,
): FindingRecord | undefined {
  const provider = providerOf(device);
  return records.find(
    (r) =>
      r.provider === provider &&
      inRange(kernel, r.kernel) &&
      (finding.oracles ?? []).includes(r.oracle) &&
      r.log.test(finding.why),
  );
}

/** A record as a report line: its id, class and the lines it holds on. */
export function findingRecordText(r: FindingRecord): string {
  return `${r.id} (${r.class}, ${r.provider} ${rangeText(r.kernel)})`;
}
