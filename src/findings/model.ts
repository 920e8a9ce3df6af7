/**
 * The findings document (issue 33): every recorded behaviour (judge/records/) once per
 * id, with its class and rule, the source lines its `why` names, the reproducer and the
 * patches of its defect (fixes.ts), and per kernel line what the records say: present,
 * fixed upstream, or not yet there, and whether a patch here fixes it. Runs (`run
 * --report`, stock and on the fixed build) add what was seen (results.ts). The rows open
 * with the defects still present upstream, as a conformance report opens with its issues.
 */
import {
  type BehaviourRecord,
  coversScenario,
  FIXES_SUFFIX,
  RECORD_CLASSES,
  type RecordClass,
} from '../judge/record.js';
import { RECORDS } from '../judge/records/index.js';
import { compareToBound, inRange, rangeText, type VersionRange } from '../judge/version-range.js';
import { KERNEL_LINES, kernelLine } from '../runtime/kernel-lines.js';
import { DEFECT_FIXES, type DefectFix, type FixComponent } from './fixes.js';
import type { RunSightings } from './results.js';

/** The bump on any incompatible change to findings.json. */
export const FINDINGS_SCHEMA = 'rdma-interop/findings@1';

/** What the records say of one id on one kernel line. */
export type LineState =
  /** The record's kernel range covers the line. */
  | 'present'
  /** The range ends before the line: upstream changed it (the version in `upstream`). */
  | 'fixed-upstream'
  /**
   * The range starts after the line: the code is not there yet, or (siw before 6.8,
   * whose query_qp reads RESET) the behaviour could not be measured there.
   */
  | 'not-yet';

/** What a run of that line showed for the record: it explained a difference, or it did not. */
export type RunState = 'seen' | 'not-seen' | 'not-run';

export interface LineCell {
  readonly line: string;
  readonly state: LineState;
  /** The version (or the fix's commit) that changed it, where `state` is fixed-upstream. */
  readonly upstream?: string;
  /** Where the record's range starts, where `state` is not-yet. */
  readonly from?: string;
  /** A patch here fixes it on this line (fixes.ts has one for its component). */
  readonly fixedHere: boolean;
  /** The stock run of this line (`--results`), where given. */
  readonly stockRun?: RunState;
  /** The run on the fixed build (`--fixed-results`), where given. */
  readonly fixedRun?: RunState;
  /**
   * The fix here is proven on this line: fixed here, and a run on the fixed build (a device
   * keyed `rxe+fixes`/`siw+fixes`, `run --fixes`) ran a scenario in the record's scope and
   * the record explained nothing there.
   */
  readonly proven?: boolean;
}

export interface FindingRow {
  readonly id: string;
  readonly class: RecordClass;
  /** The kernel driver (`rxe`, `siw`) or the userspace provider (`librxe`, `libsiw`). */
  readonly component: FixComponent;
  /** The providers it holds for (`siw+rfc7306`: only on the patched siw of patches/siw/). */
  readonly providers: readonly string[];
  readonly rule: string;
  readonly unclear?: string;
  /** The source files and functions its `why` names, in order, once each. */
  readonly sources: readonly string[];
  readonly kernels: readonly string[];
  readonly why: string;
  readonly reproducer?: string;
  readonly patches: readonly string[];
  readonly lines: readonly LineCell[];
}

/** The report's sections, in order. */
export const SECTIONS = [
  'defects present upstream',
  'defects fixed upstream',
  'unimplemented',
  'allowed',
  'engine',
] as const;
export type Section = (typeof SECTIONS)[number];

export interface FindingsDocument {
  readonly schema: string;
  readonly lines: readonly string[];
  /** What the per-line cells read besides the records: the runs given, or none. */
  readonly runs: { readonly stock: boolean; readonly fixed: boolean };
  readonly counts: Readonly<Record<RecordClass, number>>;
  readonly sections: readonly { readonly section: Section; readonly rows: readonly FindingRow[] }[];
}

/**
 * The component a record is about: its fix's where one is recorded, else the userspace
 * provider for a record named after it (`libsiw-*`, `librxe-*`) or one keyed by rdma-core
 * but not named after the kernel driver (refused-post-keeps-rts), else the kernel driver.
 */
export function componentOf(k: BehaviourRecord, fix?: DefectFix): FixComponent {
  if (fix !== undefined) return fix.component;
  const driver = k.provider.startsWith('rxe') ? 'rxe' : 'siw';
  const library =
    k.id.startsWith('lib') || (k.rdmaCore !== undefined && !k.id.startsWith(`${driver}-`));
  return library ? (`lib${driver}` as FixComponent) : driver;
}

/**
 * The source a why names, in order, once each: a file with the function after it
 * (`providers/siw/siw.c siw_post_send`, `rxe_comp.c`), then the driver functions and
 * structs it names on their own (`siw_get_trailer`, `struct iwarp_terminate`).
 */
export function sourcesOf(why: string): string[] {
  const files = [
    ...why.matchAll(/\b((?:[\w-]+\/)*[\w-]+\.[ch])\b(?:\s+\(?([a-z]\w*_\w+)(?:\(\))?)?/g),
  ].map((m) => (m[2] === undefined ? (m[1] as string) : `${m[1]} ${m[2]}`));
  const named = new Set(files.flatMap((f) => f.split(' ').slice(1)));
  const functions = [...why.matchAll(/\b(?:struct \w+|(?:siw|rxe)_[a-z]\w*)\b(?!\.[ch]\b)/g)]
    .map((m) => m[0])
    .filter((f) => !named.has(f));
  return [...new Set([...files, ...functions])];
}

/** The sources of several whys: a bare function another entry names with its file is left out. */
function sourcesOfAll(whys: readonly string[]): string[] {
  const all = [...new Set(whys.flatMap(sourcesOf))];
  return all.filter((s) => s.includes(' ') || !all.some((o) => o.endsWith(` ${s}`)));
}

/** Kernel lines a patch path names (`patches/rxe/6.1/...`); none: every line. */
function patchLines(patches: readonly string[]): Set<string> | undefined {
  const names = new Set(KERNEL_LINES.map((l) => l.line));
  const named = patches.flatMap((p) => p.split('/').filter((s) => names.has(s)));
  return named.length === 0 ? undefined : new Set(named);
}

function lineCell(
  line: string,
  records: readonly BehaviourRecord[],
  fixes: readonly DefectFix[],
  runs: { readonly stock?: RunSightings; readonly fixed?: RunSightings },
  id: string,
): LineCell {
  const ranges = records.map((k) => k.kernel);
  const present = ranges.some((r) => inRange(line, r));
  // A range that ends at or before the line: upstream changed the behaviour there.
  const ended = ranges.find((r) => r.before !== undefined && compareToBound(line, r.before) >= 0);
  const state: LineState = present ? 'present' : ended !== undefined ? 'fixed-upstream' : 'not-yet';
  const upstream =
    state === 'fixed-upstream'
      ? (fixes.find((f) => f.fixedUpstream !== undefined)?.fixedUpstream ?? ended?.before)
      : undefined;
  const fixedHere =
    present &&
    fixes.some((f) => f.patches.length > 0 && (patchLines(f.patches)?.has(line) ?? true));
  const runState = (s: RunSightings | undefined): RunState | undefined => {
    if (s === undefined) return undefined;
    if (!s.lines.has(line)) return 'not-run';
    return s.seen.get(line)?.has(id) === true ? 'seen' : 'not-seen';
  };
  const stockRun = runState(runs.stock);
  const fixedRun = runState(runs.fixed);
  const scopeRan = [...(runs.fixed?.ran.get(line) ?? [])].some((r) =>
    records.some((k) => coversScenario(k, r)),
  );
  const proven =
    fixedHere && fixedRun === 'not-seen' && runs.fixed?.fixedBuild.has(line) === true && scopeRan;
  return {
    line,
    state,
    ...(upstream === undefined ? {} : { upstream }),
    ...(state === 'not-yet' ? { from: ranges.map((r) => r.from).join(', ') } : {}),
    fixedHere,
    ...(stockRun === undefined ? {} : { stockRun }),
    ...(fixedRun === undefined ? {} : { fixedRun }),
    ...(runs.fixed === undefined || !fixedHere ? {} : { proven }),
  };
}

/** True when every provider key is a fixed build's (`rxe+fixes`, `siw+rfc7306+fixes`). */
export function onFixedBuildOnly(providers: readonly string[]): boolean {
  return providers.length > 0 && providers.every((p) => p.endsWith(FIXES_SUFFIX));
}

/**
 * A defect is still present upstream when one of its ranges is open-ended (the newest
 * kernels measured still show it) and no fix records an upstream change.
 */
function sectionOf(
  k: BehaviourRecord,
  ranges: readonly VersionRange[],
  fixes: readonly DefectFix[],
): Section {
  if (k.class !== 'defect') return k.class;
  // A defect recorded on a fixed build only (`siw+rfc7306+fixes`) is how its cause, still
  // upstream, shows there; the end of its range is where the stock record takes over.
  if (onFixedBuildOnly([k.provider, ...(k.alsoFor ?? [])])) return 'defects present upstream';
  const upstreamFixed = fixes.some((f) => f.fixedUpstream !== undefined);
  return ranges.some((r) => r.before === undefined) && !upstreamFixed
    ? 'defects present upstream'
    : 'defects fixed upstream';
}

export interface FindingsOptions {
  /** The kernel lines to show (default: every line). */
  readonly lines?: readonly string[];
  readonly records?: readonly BehaviourRecord[];
  readonly fixes?: readonly DefectFix[];
  readonly stock?: RunSightings;
  readonly fixed?: RunSightings;
}

/** The findings document of the records (one row per id, in table order within each section). */
export function findingsDocument(options: FindingsOptions = {}): FindingsDocument {
  const records = options.records ?? RECORDS;
  const fixes = options.fixes ?? DEFECT_FIXES;
  // A name that is no kernel line is refused (UnknownNameError), not shown as an empty column.
  const lines = (options.lines ?? KERNEL_LINES.map((l) => l.line)).map((l) => kernelLine(l).line);
  const byId = new Map<string, BehaviourRecord[]>();
  for (const k of records) byId.set(k.id, [...(byId.get(k.id) ?? []), k]);
  const rows: (FindingRow & { readonly section: Section })[] = [...byId].map(([id, ks]) => {
    const first = ks[0] as BehaviourRecord;
    // Its own fix, or one whose patches fix it too (alsoFixes: no reproducer of its own).
    const own = fixes.filter((f) => f.recordId === id || f.alsoFixes?.includes(id) === true);
    const reproducer = fixes.find((f) => f.recordId === id)?.reproducer;
    const ranges = ks.map((k) => k.kernel);
    return {
      section: sectionOf(first, ranges, own),
      id,
      class: first.class,
      component: componentOf(first, own[0]),
      providers: [...new Set(ks.flatMap((k) => [k.provider, ...(k.alsoFor ?? [])]))],
      rule: first.rule,
      ...(first.unclear === undefined ? {} : { unclear: first.unclear }),
      sources: sourcesOfAll(ks.map((k) => k.why)),
      kernels: [...new Set(ranges.map(rangeText))],
      why: first.why,
      ...(reproducer === undefined ? {} : { reproducer }),
      patches: own.flatMap((f) => f.patches),
      lines: lines.map((line) =>
        lineCell(line, ks, own, { stock: options.stock, fixed: options.fixed }, id),
      ),
    };
  });
  const counts = Object.fromEntries(
    RECORD_CLASSES.map((c) => [c, rows.filter((r) => r.class === c).length]),
  ) as Record<RecordClass, number>;
  return {
    schema: FINDINGS_SCHEMA,
    lines,
    runs: { stock: options.stock !== undefined, fixed: options.fixed !== undefined },
    counts,
    sections: SECTIONS.map((section) => ({
      section,
      rows: rows.filter((r) => r.section === section).map(({ section: _, ...row }) => row),
    })),
  };
}
