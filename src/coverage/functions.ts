/**
 * Function coverage as results.json carries it (issue 32): per kernel, per module, per
 * source file, each traceable function with the phases that entered it (suite, tester,
 * fuzz; setup = device creation before the first phase). Built on the host from the
 * guest's raw recording (ftrace.ts) and the line's source (source-map.ts); merged across
 * runs (the same kernel: union of phases) for `compare`.
 */
import type { RawFunctionCoverage } from './ftrace.js';
import { baseName } from './source-map.js';

/** One function and the phases that entered it (empty: never entered). */
export interface FunctionEntry {
  readonly name: string;
  readonly phases: readonly string[];
}

export interface FileCoverage {
  /** The source file (e.g. rxe_resp.c), or `(no source)` when the cache holds none. */
  readonly file: string;
  readonly functions: readonly FunctionEntry[];
}

export interface ModuleCoverage {
  readonly module: string;
  /** Functions ftrace could trace in the module. */
  readonly traceable: number;
  /** phase (and `all`) -> functions of the module entered. */
  readonly entered: Readonly<Record<string, number>>;
  readonly files: readonly FileCoverage[];
}

/** One kernel's function coverage. */
export interface FunctionCoverage {
  readonly kernel: string;
  readonly method: 'ftrace-function';
  readonly lost: number;
  readonly seconds: number;
  readonly modules: readonly ModuleCoverage[];
}

export const NO_SOURCE = '(no source)';

function percent(n: number, of: number): string {
  return of === 0 ? '-' : `${((100 * n) / of).toFixed(1)} %`;
}

/** A module's coverage from function -> phases and the function -> file map. */
function moduleCoverage(
  module: string,
  phasesOf: ReadonlyMap<string, readonly string[]>,
  files: ReadonlyMap<string, string> | undefined,
): ModuleCoverage {
  const byFile = new Map<string, FunctionEntry[]>();
  const entered: Record<string, number> = { all: 0 };
  for (const [name, phases] of [...phasesOf].sort(([a], [b]) => a.localeCompare(b))) {
    const file = files?.get(baseName(name)) ?? NO_SOURCE;
    const list = byFile.get(file) ?? [];
    list.push({ name, phases });
    byFile.set(file, list);
    if (phases.length > 0) entered.all = (entered.all ?? 0) + 1;
    for (const p of phases) entered[p] = (entered[p] ?? 0) + 1;
  }
  return {
    module,
    traceable: phasesOf.size,
    entered,
    files: [...byFile]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([file, functions]) => ({ file, functions })),
  };
}

/** results.json's coverage of one kernel from the guest's recording. */
export function buildFunctionCoverage(
  raw: RawFunctionCoverage,
  filesOf: ReadonlyMap<string, ReadonlyMap<string, string>>,
): FunctionCoverage {
  const modules: ModuleCoverage[] = [];
  for (const [module, functions] of Object.entries(raw.traceable)) {
    const phasesOf = new Map<string, string[]>(functions.map((f) => [f, []]));
    for (const [phase, entered] of Object.entries(raw.entered))
      for (const f of entered) phasesOf.get(f)?.push(phase);
    modules.push(moduleCoverage(module, phasesOf, filesOf.get(module)));
  }
  return {
    kernel: raw.kernel,
    method: raw.method,
    lost: raw.lost,
    seconds: raw.seconds,
    modules,
  };
}

/** Several recordings merged: per kernel, the union of the phases of each function. */
export function mergeFunctionCoverage(all: readonly FunctionCoverage[]): FunctionCoverage[] {
  const byKernel = new Map<string, FunctionCoverage[]>();
  for (const c of all) byKernel.set(c.kernel, [...(byKernel.get(c.kernel) ?? []), c]);
  return [...byKernel].map(([kernel, list]) => {
    const modules = new Map<
      string,
      { phases: Map<string, Set<string>>; files: Map<string, string> }
    >();
    for (const c of list)
      for (const m of c.modules) {
        const into = modules.get(m.module) ?? { phases: new Map(), files: new Map() };
        for (const f of m.files)
          for (const fn of f.functions) {
            const set = into.phases.get(fn.name) ?? new Set<string>();
            for (const p of fn.phases) set.add(p);
            into.phases.set(fn.name, set);
            if (f.file !== NO_SOURCE) into.files.set(baseName(fn.name), f.file);
          }
        modules.set(m.module, into);
      }
    return {
      kernel,
      method: 'ftrace-function' as const,
      lost: list.reduce((n, c) => n + c.lost, 0),
      seconds: list.reduce((n, c) => n + c.seconds, 0),
      modules: [...modules].map(([module, { phases, files }]) =>
        moduleCoverage(module, new Map([...phases].map(([f, s]) => [f, [...s].sort()])), files),
      ),
    };
  });
}

/** The phases a coverage set names, in run order. */
function phasesIn(all: readonly FunctionCoverage[]): string[] {
  const order = ['setup', 'suite', 'tester', 'fuzz', 'guided'];
  const seen = new Set(all.flatMap((c) => c.modules.flatMap((m) => Object.keys(m.entered))));
  seen.delete('all');
  return [...order.filter((p) => seen.has(p)), ...[...seen].filter((p) => !order.includes(p))];
}

/** report.md's coverage section: a table per kernel and module, then per file. */
export function renderFunctionCoverage(
  all: readonly FunctionCoverage[],
  lineOf: (release: string) => string = (r) => r,
  detailModules: readonly string[] = ['rdma_rxe', 'siw'],
): string {
  if (all.length === 0) return '';
  const phases = phasesIn(all);
  const out: string[] = ['## Function coverage (ftrace)', ''];
  out.push(
    'Functions of each module entered, of those ftrace can trace (inlined functions have no entry of their own). ' +
      '`setup` is device creation before the first phase; `all` the union.',
    '',
    `| kernel | module | traceable | ${phases.join(' | ')} | all |`,
    `|---|---|---|${phases.map(() => '---').join('|')}|---|`,
  );
  for (const c of all)
    for (const m of c.modules)
      out.push(
        `| ${lineOf(c.kernel)} | ${m.module} | ${m.traceable} | ${[...phases, 'all']
          .map((p) => `${m.entered[p] ?? 0} (${percent(m.entered[p] ?? 0, m.traceable)})`)
          .join(' | ')} |`,
      );
  const lost = all.filter((c) => c.lost > 0);
  if (lost.length > 0)
    out.push('', ...lost.map((c) => `Lost trace events on ${lineOf(c.kernel)}: ${c.lost}.`));
  for (const c of all)
    for (const m of c.modules.filter((x) => detailModules.includes(x.module))) {
      out.push('', `### ${m.module} on ${lineOf(c.kernel)}, per file`, '');
      out.push('| file | entered | never entered |', '|---|---|---|');
      for (const f of m.files) {
        const hit = f.functions.filter((fn) => fn.phases.length > 0);
        const miss = f.functions.filter((fn) => fn.phases.length === 0);
        out.push(
          `| ${f.file} | ${hit.length}/${f.functions.length} | ${miss.map((fn) => fn.name).join(', ')} |`,
        );
      }
    }
  return `${out.join('\n')}\n`;
}
