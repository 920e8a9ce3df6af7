/**
 * `rdma-interop compare`: any number of runs side by side. For every scenario, device and
 * observed field (plus the verdicts, the wire probes and the device facts of
 * `ibv_query_device`), the value each run saw, with the record that explains it where
 * the run had one. Runs are keyed by host, kernel and rdma-core, a device in a run by its
 * provider (siw0 is `siw` or `siw+rfc7306`), so a lab's hosts, a kernel matrix and a
 * container run all compare the same way. A value is compared only between runs that
 * have its device: rxe0's rows are not "changed" because a siw-only run lacks them.
 */
import { requireArray, requireObject, requireString } from '../../arguments.js';
import { TEST_FIELD } from '../../rdma-core-tests/compare.js';
import type { ReportRun } from './read.js';

/** Bumped on any incompatible change to comparison.json. */
export const COMPARISON_SCHEMA = 'rdma-interop/comparison@2';

/** Where a run did not observe a value (or did not run the scenario). */
export const ABSENT = '—';

/** One compared value: a field of a scenario (or `verdict`), per run label. */
export interface ComparedField {
  readonly scenario: string;
  readonly device: string;
  readonly field: string;
  /** Run label -> value, for every run that has the device; {@link ABSENT} where unseen. */
  readonly values: Readonly<Record<string, string>>;
  /** Run label -> id of the record that explains that run's value (report-files.ts). */
  readonly reasons: Readonly<Record<string, string>>;
  readonly changed: boolean;
}

export interface ComparedRun {
  readonly label: string;
  readonly path: string;
  readonly host: string;
  readonly kernel: string;
  readonly rdmaCore: string;
  readonly node: string;
  readonly scenarios: number;
  /** The run's devices with their provider. */
  readonly devices: readonly { readonly name: string; readonly provider: string }[];
}

export interface Comparison {
  readonly schema: typeof COMPARISON_SCHEMA;
  readonly runs: readonly ComparedRun[];
  /** Every compared value (changed or not), in the order first met. */
  readonly fields: readonly ComparedField[];
  /** How many of them differ between the runs that have their device. */
  readonly changedCount: number;
}

/** The device names a run knows: from its device facts and from its scenarios. */
function devicesOf(run: ReportRun): { name: string; provider: string }[] {
  const providers = new Map<string, string>();
  for (const facts of run.devices)
    if (typeof facts.name === 'string')
      providers.set(facts.name, typeof facts.provider === 'string' ? facts.provider : 'unknown');
  for (const s of run.scenarios) if (!providers.has(s.device)) providers.set(s.device, 'unknown');
  for (const t of run.rdmaCoreTests ?? [])
    if (!providers.has(t.device)) providers.set(t.device, 'unknown');
  // The wire probes talk to siw0 (probe/wire-probes.ts).
  if (run.probes.length > 0 && !providers.has('siw0')) providers.set('siw0', 'unknown');
  return [...providers].map(([name, provider]) => ({ name, provider }));
}

/**
 * Short, unique run labels: the last path element of each (`out/6.1` -> `6.1`), with
 * more of the path where two would be the same, and `#2` where even the paths are.
 */
function uniqueLabels(runs: readonly ReportRun[]): string[] {
  const parts = runs.map((r) => r.label.split('/').filter((p) => p !== '' && p !== '.'));
  const depth = parts.map(() => 1);
  const labelAt = (i: number) => (parts[i] ?? []).slice(-(depth[i] ?? 1)).join('/') || '.';
  for (let changed = true; changed; ) {
    changed = false;
    const labels = runs.map((_, i) => labelAt(i));
    runs.forEach((_, i) => {
      const clash = labels.some((l, j) => j !== i && l === labels[i]);
      if (clash && (depth[i] ?? 1) < (parts[i]?.length ?? 0)) {
        depth[i] = (depth[i] ?? 1) + 1;
        changed = true;
      }
    });
  }
  const seen = new Map<string, number>();
  return runs.map((_, i) => {
    const label = labelAt(i);
    const n = (seen.get(label) ?? 0) + 1;
    seen.set(label, n);
    return n === 1 ? label : `${label}#${n}`;
  });
}

/** What compareReports reads of each run is there and of its type (issue 25: no raw errors). */
function checkRuns(runs: unknown): void {
  requireArray('interop', 'runs', runs).forEach((raw, i) => {
    const r = requireObject('interop', `runs[${i}]`, raw) as Record<string, unknown>;
    for (const key of ['label', 'path', 'host', 'kernel', 'rdmaCore', 'node'] as const)
      requireString('interop', `runs[${i}].${key}`, r[key], true);
    requireArray('interop', `runs[${i}].devices`, r.devices).forEach((d, j) => {
      requireObject('interop', `runs[${i}].devices[${j}]`, d);
    });
    requireArray('interop', `runs[${i}].scenarios`, r.scenarios).forEach((raw2, j) => {
      const s = requireObject('interop', `runs[${i}].scenarios[${j}]`, raw2) as Record<
        string,
        unknown
      >;
      for (const key of ['id', 'device', 'verdict'] as const)
        requireString('interop', `runs[${i}].scenarios[${j}].${key}`, s[key]);
      requireObject('interop', `runs[${i}].scenarios[${j}].fields`, s.fields);
      requireObject('interop', `runs[${i}].scenarios[${j}].reasons`, s.reasons);
    });
    // rdma-core's own tests (optional: suite reports have none).
    if (r.rdmaCoreTests !== undefined)
      requireArray('interop', `runs[${i}].rdmaCoreTests`, r.rdmaCoreTests).forEach((raw2, j) => {
        const t = requireObject('interop', `runs[${i}].rdmaCoreTests[${j}]`, raw2) as Record<
          string,
          unknown
        >;
        for (const key of ['id', 'device', 'verdict'] as const)
          requireString('interop', `runs[${i}].rdmaCoreTests[${j}].${key}`, t[key]);
      });
    requireArray('interop', `runs[${i}].probes`, r.probes).forEach((raw2, j) => {
      const p = requireObject('interop', `runs[${i}].probes[${j}]`, raw2) as Record<
        string,
        unknown
      >;
      for (const key of ['id', 'verdict', 'device'] as const)
        requireString('interop', `runs[${i}].probes[${j}].${key}`, p[key], true);
    });
  });
}

/** The comparison of `runs`, in the order given (oldest kernel or first host first). */
export function compareReports(runs: readonly ReportRun[]): Comparison {
  checkRuns(runs);
  const labels = uniqueLabels(runs);
  const runDevices = runs.map(devicesOf);
  const rows = new Map<
    string,
    {
      scenario: string;
      device: string;
      field: string;
      values: Record<string, string>;
      reasons: Record<string, string>;
    }
  >();
  const put = (
    scenario: string,
    device: string,
    field: string,
    label: string,
    value: string,
    reason?: string,
  ) => {
    const key = `${scenario}\u0000${device}\u0000${field}`;
    let row = rows.get(key);
    if (row === undefined) {
      row = { scenario, device, field, values: {}, reasons: {} };
      rows.set(key, row);
    }
    row.values[label] = value;
    if (reason !== undefined) row.reasons[label] = reason;
  };
  runs.forEach((run, i) => {
    const label = labels[i] ?? run.label;
    for (const facts of run.devices) {
      const device = String(facts.name ?? '?');
      for (const [field, value] of Object.entries(facts))
        if (field !== 'name') put('(device)', device, field, label, String(value));
    }
    for (const s of run.scenarios) {
      put(s.id, s.device, 'verdict', label, s.verdict);
      if (s.error !== undefined) put(s.id, s.device, 'error', label, s.error);
      for (const [field, value] of Object.entries(s.fields))
        put(s.id, s.device, field, label, value, s.reasons[field]);
    }
    for (const p of run.probes) {
      put(p.id, 'siw0', 'verdict', label, p.verdict);
      put(p.id, 'siw0', 'answer', label, p.device);
    }
    // rdma-core's own tests (rdma-core-tests/compare.ts renders their table).
    for (const t of run.rdmaCoreTests ?? [])
      put(t.id, t.device, TEST_FIELD, label, t.verdict, t.explainedBy);
  });
  const fields: ComparedField[] = [...rows.values()].map((row) => {
    const having = labels.filter((_, i) => runDevices[i]?.some((d) => d.name === row.device));
    const values = Object.fromEntries(having.map((l) => [l, row.values[l] ?? ABSENT]));
    return { ...row, values, changed: new Set(Object.values(values)).size > 1 };
  });
  return {
    schema: COMPARISON_SCHEMA,
    runs: runs.map((r, i) => ({
      label: labels[i] ?? r.label,
      path: r.path,
      host: r.host,
      kernel: r.kernel,
      rdmaCore: r.rdmaCore,
      node: r.node,
      scenarios: r.scenarios.length,
      devices: runDevices[i] ?? [],
    })),
    fields,
    changedCount: fields.filter((f) => f.changed).length,
  };
}
