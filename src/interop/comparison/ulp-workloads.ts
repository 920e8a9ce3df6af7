/**
 * `compare` reads `rdma-interop ulp` reports too (issue 35): their results.json has an
 * empty `scenarios` array and a `workloads` array (src/ulp/report.ts), one entry per kernel
 * line (or link pair), workload and device. Each line becomes a run of its own (as
 * `run --kernels` gives one per kernel) and each workload a row `ulp:<workload>` on its
 * device, with the values that should agree between runs: the outcome, the data verified,
 * the wire's undecodable frames, rule violations, Terminates and NAKs, and the message
 * counts (which vary with timing: shown, not judged).
 */
import type { ReportScenario } from './read.js';

/** A workload entry's fields as the comparison shows them. */
function workloadFields(w: Record<string, unknown>): Record<string, string> {
  const fields: Record<string, string> = {};
  const facts = (w.facts ?? {}) as Record<string, unknown>;
  if (typeof facts.verified === 'string') fields.verified = facts.verified;
  const wire = (w.wire ?? {}) as Record<string, unknown>;
  if (typeof wire.notCaptured === 'string') fields.wire = wire.notCaptured.split(':')[0] ?? '';
  else if (typeof wire.frames === 'number') {
    const list = (k: string) => (Array.isArray(wire[k]) ? (wire[k] as unknown[]) : []);
    fields.undecodable = String(list('undecodable').length);
    fields.violations =
      list('violations')
        .map((v) => String((v as Record<string, unknown>).rule))
        .sort()
        .join(', ') || 'none';
    fields.terminates = String(list('terminates').length);
    fields.naks = String(wire.naks ?? 0);
    fields.messages = String(wire.messages ?? 0);
  }
  if (typeof w.reason === 'string') fields.reason = w.reason;
  return fields;
}

/** The workloads of one results.json, grouped by line: `line -> rows`, in order. */
export function ulpWorkloadsByLine(
  document: Record<string, unknown>,
): Map<string, { kernel: string; rows: ReportScenario[] }> {
  const out = new Map<string, { kernel: string; rows: ReportScenario[] }>();
  for (const raw of Array.isArray(document.workloads) ? document.workloads : []) {
    const w = (typeof raw === 'object' && raw !== null ? raw : {}) as Record<string, unknown>;
    if (typeof w.workload !== 'string' || typeof w.device !== 'string') continue;
    const line = typeof w.line === 'string' ? w.line : '';
    const group = out.get(line) ?? {
      kernel: typeof w.kernel === 'string' ? w.kernel : 'unknown',
      rows: [],
    };
    out.set(line, group);
    group.rows.push({
      id: `ulp:${w.workload}`,
      device: w.device,
      verdict: typeof w.outcome === 'string' ? w.outcome : 'unknown',
      fields: workloadFields(w),
      reasons: {},
    });
  }
  return out;
}
