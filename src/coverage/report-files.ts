/**
 * Coverage in a `run --report` directory and across directories (`compare`): results.json
 * gets a `coverage` array (functions.ts), report.md a section; `compare` merges the
 * coverage of every report it reads, per kernel, and across kernel lines.
 */
import { appendFileSync, existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { release } from 'node:os';
import { join } from 'node:path';
import { markCoveragePhase, startFunctionCoverage } from './ftrace.js';
import {
  buildFunctionCoverage,
  type FunctionCoverage,
  mergeFunctionCoverage,
  renderFunctionCoverage,
} from './functions.js';
import { writeCoverageHtml } from './html.js';
import { functionFiles } from './source-map.js';

/** Records the suite's functions (`run --coverage`, in the guest); stop() gives the record. */
export function startSuiteCoverage(): { stop(): Promise<FunctionCoverage> } {
  const recording = startFunctionCoverage(join('/tmp', `rdma-interop-coverage-${process.pid}.txt`));
  markCoveragePhase('suite');
  return {
    async stop() {
      const raw = await recording.stop();
      return buildFunctionCoverage(raw, functionFiles(raw.kernel ?? release()));
    },
  };
}

/** Adds `coverage` to a report directory's results.json and its section to report.md. */
export function attachCoverage(dir: string, coverage: readonly FunctionCoverage[]): void {
  const results = join(dir, 'results.json');
  const doc = JSON.parse(readFileSync(results, 'utf8')) as Record<string, unknown>;
  writeFileSync(results, `${JSON.stringify({ ...doc, coverage }, null, 2)}\n`);
  const md = join(dir, 'report.md');
  if (existsSync(md)) appendFileSync(md, `\n${renderFunctionCoverage(coverage)}`);
  writeCoverageHtml(dir, coverage);
}

/** The coverage records of a report directory or results.json (none when it has none). */
export function readCoverage(path: string): FunctionCoverage[] {
  const file = statSync(path).isDirectory() ? join(path, 'results.json') : path;
  if (!existsSync(file)) return [];
  const doc = JSON.parse(readFileSync(file, 'utf8')) as { coverage?: FunctionCoverage[] };
  return Array.isArray(doc.coverage) ? doc.coverage : [];
}

/**
 * `compare`'s coverage: the reports' records merged per kernel, then a table per module of
 * the functions entered on each kernel line and on any of them (by function name).
 */
export function renderMergedCoverage(all: readonly FunctionCoverage[]): string {
  const merged = mergeFunctionCoverage(all);
  if (merged.length === 0) return '';
  const modules = [...new Set(merged.flatMap((c) => c.modules.map((m) => m.module)))];
  const out = ['## Function coverage across runs', ''];
  out.push(
    `| module | ${merged.map((c) => c.kernel).join(' | ')} | any kernel |`,
    `|---|${merged.map(() => '---').join('|')}|---|`,
  );
  for (const module of modules) {
    const union = new Set<string>();
    const all = new Set<string>();
    const cells = merged.map((c) => {
      const m = c.modules.find((x) => x.module === module);
      if (m === undefined) return '-';
      for (const f of m.files)
        for (const fn of f.functions) {
          all.add(fn.name);
          if (fn.phases.length > 0) union.add(fn.name);
        }
      return `${m.entered.all ?? 0}/${m.traceable}`;
    });
    out.push(`| ${module} | ${cells.join(' | ')} | ${union.size}/${all.size} |`);
  }
  return `${out.join('\n')}\n\n${renderFunctionCoverage(merged)}`;
}
