/**
 * What runs saw, for the findings report's per-line cells: the record ids that explained
 * a difference in each kernel line's results. Reads every results.json under a directory:
 * the suite's (`run --report`, `run --kernels --report`: `scenarios[].differences[]
 * .explainedBy`, `findings[].id`) and the tester's (`probe --report`: `assertions[].known`
 * with `kernels[]` naming each release's line). A results.json whose kernel is no kernel
 * line (runtime/kernel-lines.ts) is refused, as is a directory with none.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { RdmaInteropError } from '../errors.js';
import { FIXES_SUFFIX } from '../judge/record.js';
import { versionNumbers } from '../judge/version-range.js';
import { KERNEL_LINES } from '../runtime/kernel-lines.js';

/** A results directory the findings report cannot read (a user error: one line, exit 1). */
export class FindingsInputError extends RdmaInteropError {
  override readonly name = 'FindingsInputError';
  readonly origin = 'cli';
}

/** The kernel lines a set of runs covered, and the record ids each line's runs showed. */
export interface RunSightings {
  readonly lines: ReadonlySet<string>;
  readonly seen: ReadonlyMap<string, ReadonlySet<string>>;
  /** The scenario and assertion ids each line's runs ran (a record is gone only where its scope ran). */
  readonly ran: ReadonlyMap<string, ReadonlySet<string>>;
  /** The lines a run of which was on the fixed build (a device keyed `rxe+fixes`, `siw+fixes`). */
  readonly fixedBuild: ReadonlySet<string>;
}

/** One results.json's part of a line: the record ids seen, the ids run, the build. */
interface LineSighting {
  readonly line: string;
  readonly ids: string[];
  readonly ran: string[];
  readonly fixedBuild: boolean;
}

/** The kernel line of a release (`6.12.95+deb12-amd64` -> `6.12`), or undefined. */
export function lineOfRelease(release: string): string | undefined {
  const v = versionNumbers(release);
  return KERNEL_LINES.find((l) => {
    const n = versionNumbers(l.line);
    return n.every((x, i) => v[i] === x);
  })?.line;
}

/** Every results.json under `dir` (itself included), at most `depth` folders down. */
function resultsFiles(dir: string, depth = 4): string[] {
  const here = join(dir, 'results.json');
  const own = existsSync(here) ? [here] : [];
  if (depth === 0) return own;
  const below = readdirSync(dir)
    .filter((name) => statSync(join(dir, name)).isDirectory())
    .sort()
    .flatMap((name) => resultsFiles(join(dir, name), depth - 1));
  return [...own, ...below];
}

const isObject = (v: unknown): v is Readonly<Record<string, unknown>> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
const array = (v: unknown): readonly unknown[] => (Array.isArray(v) ? v : []);

/** The (line, record id) pairs of one results.json document. */
function sightingsOf(file: string, document: unknown): LineSighting[] {
  if (!isObject(document)) throw new FindingsInputError(`${file}: not a results document`);
  const lineOf = (release: unknown): string => {
    const line = typeof release === 'string' ? lineOfRelease(release) : undefined;
    if (line === undefined)
      throw new FindingsInputError(
        `${file}: kernel ${String(release)} is none of the kernel lines (${KERNEL_LINES.map((l) => l.line).join(', ')})`,
      );
    return line;
  };
  if (Array.isArray(document.assertions)) {
    // The tester's: each assertion names its kernel release.
    const out = new Map<string, { ids: string[]; ran: string[] }>();
    for (const a of array(document.assertions)) {
      if (!isObject(a)) continue;
      const line = lineOf(a.kernel);
      const part = out.get(line) ?? { ids: [], ran: [] };
      if (typeof a.known === 'string') part.ids.push(a.known);
      if (typeof a.id === 'string') part.ran.push(a.id);
      out.set(line, part);
    }
    return [...out].map(([line, part]) => ({ line, ...part, fixedBuild: false }));
  }
  if (!isObject(document.environment) || !Array.isArray(document.scenarios))
    throw new FindingsInputError(`${file}: neither a run's nor a probe's results.json`);
  const ids = array(document.scenarios).flatMap((s) =>
    isObject(s)
      ? array(s.differences).flatMap((d) =>
          isObject(d) &&
          typeof d.explainedBy === 'string' &&
          d.explainedBy !== 'consequence-of-refused-post'
            ? [d.explainedBy]
            : [],
        )
      : [],
  );
  const findings = array(document.findings).flatMap((f) =>
    isObject(f) && typeof f.id === 'string' ? [f.id] : [],
  );
  const ran = array(document.scenarios).flatMap((s) =>
    isObject(s) && typeof s.id === 'string' ? [s.id] : [],
  );
  const fixedBuild = array(document.environment.devices).some(
    (d) => isObject(d) && typeof d.provider === 'string' && d.provider.endsWith(FIXES_SUFFIX),
  );
  return [
    { line: lineOf(document.environment.kernel), ids: [...ids, ...findings], ran, fixedBuild },
  ];
}

/** What the runs under `dir` saw (`--results`, `--fixed-results`). */
export function readSightings(dir: string): RunSightings {
  if (!existsSync(dir) || !statSync(dir).isDirectory())
    throw new FindingsInputError(`${dir}: no such directory`);
  const files = resultsFiles(dir);
  if (files.length === 0)
    throw new FindingsInputError(`${dir}: no results.json in it (a run's or probe's --report)`);
  const seen = new Map<string, Set<string>>();
  const ran = new Map<string, Set<string>>();
  const fixedBuild = new Set<string>();
  for (const file of files) {
    let document: unknown;
    try {
      document = JSON.parse(readFileSync(file, 'utf8'));
    } catch (error) {
      throw new FindingsInputError(`${file}: ${(error as Error).message}`);
    }
    for (const part of sightingsOf(file, document)) {
      seen.set(part.line, new Set([...(seen.get(part.line) ?? []), ...part.ids]));
      ran.set(part.line, new Set([...(ran.get(part.line) ?? []), ...part.ran]));
      if (part.fixedBuild) fixedBuild.add(part.line);
    }
  }
  return { lines: new Set(seen.keys()), seen, ran, fixedBuild };
}
