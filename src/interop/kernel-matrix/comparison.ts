/**
 * `run --kernels all --report <dir>`: the suite's results on several kernel lines side by
 * side. Input: each kernel's results.json (report-files.ts); output: for every scenario,
 * device and observed field, the value on each kernel, with the fields whose value
 * changed between kernels marked; the same for the verdicts, the wire probes and the
 * device facts (`ibv_query_device`). JSON (comparison.json) and Markdown (comparison.md).
 */
import { RdmaInteropError } from '../../errors.js';

/** Bumped on any incompatible change to comparison.json. */
export const COMPARISON_SCHEMA = 'rdma-interop/kernel-comparison@1';

/** What the comparison reads of one results.json (the rest is ignored). */
export interface KernelResults {
  /** The kernel line (`6.1`) or the name the run was given. */
  readonly line: string;
  readonly environment: {
    readonly kernel: string;
    readonly rdmaCore: string;
    readonly devices: readonly Readonly<Record<string, unknown>>[];
  };
  readonly scenarios: readonly {
    readonly id: string;
    readonly device: string;
    readonly verdict: string;
    readonly device_fields: Readonly<Record<string, string>> | null;
    readonly error?: string;
  }[];
  readonly probes: readonly {
    readonly id: string;
    readonly verdict: string;
    readonly device: string;
  }[];
}

/** One compared value: a field of a scenario (or `verdict`), per kernel line. */
export interface ComparedField {
  readonly scenario: string;
  readonly device: string;
  readonly field: string;
  /** Kernel line -> value; `—` where the kernel did not observe it (or did not run it). */
  readonly values: Readonly<Record<string, string>>;
  readonly changed: boolean;
}

export interface KernelComparison {
  readonly schema: typeof COMPARISON_SCHEMA;
  readonly kernels: readonly {
    readonly line: string;
    readonly kernel: string;
    readonly rdmaCore: string;
    readonly scenarios: number;
  }[];
  /** Every compared value (changed or not). */
  readonly fields: readonly ComparedField[];
  /** How many of them changed between kernels. */
  readonly changedCount: number;
}

/** A results.json that cannot be compared (missing, wrong schema, not JSON). */
export class ComparisonInputError extends RdmaInteropError {
  override readonly name = 'ComparisonInputError';
  readonly origin = 'interop';
  constructor(
    readonly line: string,
    message: string,
  ) {
    super(`kernel ${line}: ${message}`);
  }
}

const ABSENT = '—';

/** Reads one results.json document (as parsed JSON) for kernel `line`. */
export function kernelResultsOf(line: string, document: unknown): KernelResults {
  if (typeof document !== 'object' || document === null)
    throw new ComparisonInputError(line, 'results.json is not an object');
  const d = document as Record<string, unknown>;
  if (typeof d.schema !== 'string' || !d.schema.startsWith('rdma-interop/results@'))
    throw new ComparisonInputError(line, `not a results.json (schema ${String(d.schema)})`);
  if (!Array.isArray(d.scenarios) || typeof d.environment !== 'object' || d.environment === null)
    throw new ComparisonInputError(line, 'results.json lacks scenarios or environment');
  return {
    line,
    environment: d.environment as KernelResults['environment'],
    scenarios: d.scenarios as KernelResults['scenarios'],
    probes: (Array.isArray(d.probes) ? d.probes : []) as KernelResults['probes'],
  };
}

/** The comparison of `runs` (in the order given: oldest kernel first). */
export function compareKernels(runs: readonly KernelResults[]): KernelComparison {
  const lines = runs.map((r) => r.line);
  const rows = new Map<
    string,
    { scenario: string; device: string; field: string; values: Record<string, string> }
  >();
  const put = (scenario: string, device: string, field: string, line: string, value: string) => {
    const key = `${scenario}\u0000${device}\u0000${field}`;
    let row = rows.get(key);
    if (row === undefined) {
      row = { scenario, device, field, values: {} };
      rows.set(key, row);
    }
    row.values[line] = value;
  };
  for (const run of runs) {
    for (const facts of run.environment.devices) {
      const device = String(facts.name ?? '?');
      for (const [field, value] of Object.entries(facts))
        if (field !== 'name') put('(device)', device, field, run.line, String(value));
    }
    for (const s of run.scenarios) {
      put(s.id, s.device, 'verdict', run.line, s.verdict);
      if (s.error !== undefined) put(s.id, s.device, 'error', run.line, s.error);
      for (const [field, value] of Object.entries(s.device_fields ?? {}))
        put(s.id, s.device, field, run.line, value);
    }
    for (const p of run.probes) {
      put(p.id, 'siw0', 'verdict', run.line, p.verdict);
      put(p.id, 'siw0', 'answer', run.line, p.device);
    }
  }
  const fields: ComparedField[] = [...rows.values()].map((row) => {
    const values = Object.fromEntries(lines.map((l) => [l, row.values[l] ?? ABSENT]));
    return { ...row, values, changed: new Set(Object.values(values)).size > 1 };
  });
  return {
    schema: COMPARISON_SCHEMA,
    kernels: runs.map((r) => ({
      line: r.line,
      kernel: r.environment.kernel,
      rdmaCore: r.environment.rdmaCore,
      scenarios: r.scenarios.length,
    })),
    fields,
    changedCount: fields.filter((f) => f.changed).length,
  };
}

function md(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\n/g, '<br>');
}

/**
 * comparison.md: the kernels, then every changed value as a table row (scenario, device,
 * field, one column per kernel, the value that differs from the first kernel's in bold),
 * then the verdict matrix.
 */
export function renderComparisonMarkdown(c: KernelComparison): string {
  const lines = c.kernels.map((k) => k.line);
  const out: string[] = ['# Interop results across kernel lines', ''];
  out.push('| line | kernel (uname -r) | rdma-core | scenarios |', '|---|---|---|---|');
  for (const k of c.kernels)
    out.push(`| ${k.line} | ${k.kernel} | ${k.rdmaCore} | ${k.scenarios} |`);
  out.push(
    '',
    `${c.changedCount} of ${c.fields.length} observed values differ between kernels.`,
    '',
    '## Changed values',
    '',
  );
  const changed = c.fields.filter((f) => f.changed);
  if (changed.length === 0) out.push('None.');
  else {
    out.push(`| scenario | device | field | ${lines.join(' | ')} |`);
    out.push(`|---|---|---|${lines.map(() => '---').join('|')}|`);
    for (const f of changed) {
      const first = f.values[lines[0] ?? ''] ?? ABSENT;
      const cells = lines.map((l) => {
        const v = f.values[l] ?? ABSENT;
        return v === first ? md(v) : `**${md(v)}**`;
      });
      out.push(`| ${f.scenario} | ${f.device} | ${f.field} | ${cells.join(' | ')} |`);
    }
  }
  out.push('', '## Verdicts', '');
  out.push(`| scenario | device | ${lines.join(' | ')} |`);
  out.push(`|---|---|${lines.map(() => '---').join('|')}|`);
  for (const f of c.fields.filter((x) => x.field === 'verdict')) {
    const cells = lines.map((l) => (f.changed ? `**${f.values[l]}**` : (f.values[l] ?? ABSENT)));
    out.push(`| ${f.scenario} | ${f.device} | ${cells.join(' | ')} |`);
  }
  return out.join('\n');
}
