/**
 * Reading `--report` directories for `rdma-interop compare`: each holds a results.json
 * (report-files.ts), or per-kernel subdirectories of one (`run --kernels`), or a
 * `siw-rfc7306/` pass beside its own (`run --siw both`). A path may also name a
 * results.json itself. What the comparison needs of each run is read here and checked;
 * the rest of the document is ignored, so reports of older versions of the schema compare.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { requireArray, requireString } from '../../arguments.js';
import { RdmaInteropError } from '../../errors.js';
import { verdictFromFile } from '../../judge/verdict.js';
import { type ReportTest, reportTestsOf } from '../../rdma-core-tests/compare.js';
import { mergeShards } from './shards.js';
import { ulpWorkloadsByLine } from './ulp-workloads.js';

/** One scenario's outcome on one device, as the comparison reads it. */
export interface ReportScenario {
  readonly id: string;
  readonly device: string;
  readonly verdict: string;
  readonly fields: Readonly<Record<string, string>>;
  /** Field -> the id of the record that explains the device's value there. */
  readonly reasons: Readonly<Record<string, string>>;
  readonly error?: string;
}

/** One results.json: where it came from and what it observed. */
export interface ReportRun {
  /** A short name for the run: the path as given, or the kernel line of a matrix run. */
  readonly label: string;
  /** The results.json it was read from (absolute). */
  readonly path: string;
  /** The machine it ran on (`os.hostname()`, recorded from schema results@2 with `host`). */
  readonly host: string;
  readonly kernel: string;
  readonly rdmaCore: string;
  readonly node: string;
  readonly devices: readonly Readonly<Record<string, unknown>>[];
  readonly scenarios: readonly ReportScenario[];
  readonly probes: readonly {
    readonly id: string;
    readonly verdict: string;
    readonly device: string;
  }[];
  /** rdma-core's own tests (`rdma-interop rdma-core-tests`): a third kind of result. */
  readonly rdmaCoreTests?: readonly ReportTest[];
  /** `k/n` when the run is shard k of n (`run --shard`); shards.ts merges the parts. */
  readonly shard?: string;
  /** What the shard was split from (`shardSelection`: the filters, e.g. `device=rxe0`). */
  readonly shardSelection?: string;
  /** A merged sharded run: the results.json of each of its shards, in shard order. */
  readonly parts?: readonly string[];
}

/** A report that cannot be compared: missing, not JSON, not a results.json. */
export class ReportInputError extends RdmaInteropError {
  override readonly name = 'ReportInputError';
  readonly origin = 'interop';
  constructor(
    /** The path (or kernel line) of the report. */
    readonly source: string,
    message: string,
  ) {
    super(`${source}: ${message}`);
  }
}

const UNKNOWN = 'unknown';

function stringOr(value: unknown, fallback: string): string {
  return typeof value === 'string' && value !== '' ? value : fallback;
}

function stringRecord(value: unknown): Record<string, string> {
  if (typeof value !== 'object' || value === null) return {};
  return Object.fromEntries(
    Object.entries(value).filter((e): e is [string, string] => typeof e[1] === 'string'),
  );
}

/** Reads one parsed results.json document; `label` names it in errors and reports. */
export function reportRunOf(label: string, path: string, document: unknown): ReportRun {
  requireString('interop', 'label', label, true);
  requireString('interop', 'path', path, true);
  if (typeof document !== 'object' || document === null)
    throw new ReportInputError(label, 'results.json is not an object');
  const d = document as Record<string, unknown>;
  if (typeof d.schema !== 'string' || !d.schema.startsWith('rdma-interop/results@'))
    throw new ReportInputError(label, `not a results.json (schema ${String(d.schema)})`);
  if (!Array.isArray(d.scenarios) || typeof d.environment !== 'object' || d.environment === null)
    throw new ReportInputError(label, 'results.json lacks scenarios or environment');
  const env = d.environment as Record<string, unknown>;
  const scenarios = (d.scenarios as unknown[]).map((raw, i): ReportScenario => {
    const s = (typeof raw === 'object' && raw !== null ? raw : {}) as Record<string, unknown>;
    if (typeof s.id !== 'string' || typeof s.device !== 'string')
      throw new ReportInputError(label, `scenario ${i} has no id or device`);
    const reasons: Record<string, string> = {};
    for (const diff of Array.isArray(s.differences) ? s.differences : []) {
      const { field, explainedBy } = (diff ?? {}) as Record<string, unknown>;
      if (typeof field === 'string' && typeof explainedBy === 'string')
        reasons[field] = explainedBy;
    }
    return {
      id: s.id,
      // A scenario bound to a device of another name (issue 37) is compared under the
      // reference target it is written for: lab_roce's rows line up with rxe0's.
      device: typeof s.target === 'string' ? s.target : s.device,
      verdict: verdictFromFile(stringOr(s.verdict, UNKNOWN)),
      fields: stringRecord(s.device_fields),
      reasons,
      ...(typeof s.error === 'string' ? { error: s.error } : {}),
    };
  });
  const probes = (Array.isArray(d.probes) ? d.probes : []).flatMap((raw) => {
    const p = (raw ?? {}) as Record<string, unknown>;
    return typeof p.id === 'string'
      ? [
          {
            id: p.id,
            verdict: verdictFromFile(stringOr(p.verdict, UNKNOWN)),
            device: stringOr(p.device, ''),
          },
        ]
      : [];
  });
  return {
    label,
    path,
    host: stringOr(env.host, UNKNOWN),
    kernel: stringOr(env.kernel, UNKNOWN),
    rdmaCore: stringOr(env.rdmaCore, UNKNOWN),
    node: stringOr(env.node, UNKNOWN),
    devices: Array.isArray(env.devices)
      ? (env.devices.filter((x) => typeof x === 'object' && x !== null) as Record<
          string,
          unknown
        >[])
      : [],
    scenarios,
    probes,
    ...(Array.isArray(d.rdmaCoreTests) ? { rdmaCoreTests: reportTestsOf(d) } : {}),
    ...(typeof d.shard === 'string' ? { shard: d.shard } : {}),
    ...(typeof d.shardSelection === 'string' ? { shardSelection: d.shardSelection } : {}),
  };
}

function readResults(label: string, file: string): ReportRun[] {
  let document: unknown;
  try {
    document = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new ReportInputError(label, `cannot read ${file}: ${(e as Error).message}`);
  }
  const run = reportRunOf(label, file, document);
  // A `ulp` report: a run per kernel line (or link pair), its workloads as rows.
  const lines = ulpWorkloadsByLine(document as Record<string, unknown>);
  if (lines.size === 0) return [run];
  return [...lines].map(([line, { kernel, rows }]) => ({
    ...run,
    label: lines.size === 1 ? label : `${label}/${line}`,
    kernel,
    scenarios: [...run.scenarios, ...rows],
  }));
}

/** The results.json files at or below `dir` (itself, then its direct subdirectories). */
function resultsFilesIn(dir: string): string[] {
  const own = join(dir, 'results.json');
  const subs = readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isDirectory() && existsSync(join(dir, e.name, 'results.json')))
    .map((e) => join(dir, e.name, 'results.json'))
    .sort();
  return [...(existsSync(own) ? [own] : []), ...subs];
}

/**
 * The runs behind `paths` (report directories or results.json files), in the order
 * given; a directory holding per-kernel or per-variant subreports gives one run each,
 * and the shards of one run (`run --shard`) give one run together (shards.ts).
 */
export function readReports(paths: readonly string[]): ReportRun[] {
  return mergeShards(readRuns(paths));
}

function readRuns(paths: readonly string[]): ReportRun[] {
  requireArray('interop', 'paths', paths).forEach((p, i) => {
    requireString('interop', `paths[${i}]`, p);
  });
  if (paths.length === 0) throw new ReportInputError('compare', 'no report given');
  return paths.flatMap((given) => {
    const path = resolve(given);
    if (!existsSync(path)) throw new ReportInputError(given, 'no such file or directory');
    // A results.json names its run by its directory, as a report directory does.
    if (statSync(path).isFile())
      return readResults(given.replace(/(^|\/)results\.json$/, '') || '.', path);
    const files = resultsFilesIn(path);
    if (files.length === 0)
      throw new ReportInputError(given, 'holds no results.json (a --report directory?)');
    return files.flatMap((file) => {
      const sub = relative(path, dirname(file));
      return readResults(sub === '' ? given : `${given.replace(/\/$/, '')}/${sub}`, file);
    });
  });
}
