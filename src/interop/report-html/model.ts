/**
 * What report.html shows, read from results.json (report-files.ts): the scenarios of one
 * or more runs (one per kernel line), their fields split into packets, completions,
 * memory words and the rest, and the recorded behaviour that explains each difference.
 * The page reads the JSON document, not the runner's objects, so the same code renders a
 * report written by this process, a kernel comparison of several runs, and a fixture.
 */
import { RdmaInteropError } from '../../errors.js';
import { verdictFromFile } from '../../judge/verdict.js';

/** A results.json that report.html cannot be made from. */
export class ReportHtmlInputError extends RdmaInteropError {
  override readonly name = 'ReportHtmlInputError';
  readonly origin = 'interop';
}

export interface DifferenceEntry {
  readonly field: string;
  readonly engine: string;
  readonly device: string;
  /** A recorded behaviour's id, `consequence-of-refused-post`, or null (unrecorded). */
  readonly explainedBy: string | null;
}

/** One scenario of results.json, as far as the page reads it. */
export interface ScenarioEntry {
  readonly id: string;
  readonly name: string;
  readonly family: string;
  readonly title: string;
  readonly device: string;
  readonly postApi: string;
  readonly verdict: string;
  readonly seconds: number;
  readonly engine: Readonly<Record<string, string>>;
  readonly device_fields: Readonly<Record<string, string>> | null;
  /** What the device's run noted beside its fields (not compared), when it noted anything. */
  readonly device_note?: string;
  /** Verdict `not-applicable` (issue 37): what the device lacks. */
  readonly notApplicable?: readonly string[];
  /** A scenario bound to a device of another name: the reference target it is written for. */
  readonly target?: string;
  readonly differences: readonly DifferenceEntry[];
  readonly stale: readonly string[];
  readonly error?: string;
  readonly pcap?: string;
  /** A link result: the sides it ran on (link/sides.ts `LinkPair`). */
  readonly pair?: {
    readonly requester: LinkSideEntry;
    readonly responder: LinkSideEntry;
  };
}

/** One side of a link result, as results.json holds it. */
export interface LinkSideEntry {
  readonly guest: 'A' | 'B';
  readonly provider: string;
  readonly kernel: string;
  readonly rdmaCore: string;
}

export interface FindingEntry {
  readonly id: string;
  readonly why: string;
  readonly spec: string | null;
}

/** A wire probe: what the engine and siw answered to our peer's message. */
export interface ProbeEntry {
  readonly id: string;
  readonly verdict: string;
  readonly engine: string;
  readonly device: string;
  readonly error?: string;
}

/** The part of results.json the page reads. */
export interface ResultsEntry {
  readonly schema: string;
  readonly environment: {
    readonly kernel: string;
    readonly rdmaCore: string;
    readonly node: string;
    readonly devices: readonly Readonly<Record<string, unknown>>[];
  };
  readonly strict: boolean;
  readonly scenarios: readonly ScenarioEntry[];
  readonly findings: readonly FindingEntry[];
  readonly probes?: readonly ProbeEntry[];
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Checks the shape of a parsed results.json (enough for the page; the rest is ignored). */
export function resultsEntryOf(document: unknown): ResultsEntry {
  if (!isRecord(document)) throw new ReportHtmlInputError('results.json is not an object');
  const { schema, environment, scenarios, findings } = document;
  if (typeof schema !== 'string' || !schema.startsWith('rdma-interop/results@'))
    throw new ReportHtmlInputError(`not a results.json (schema ${String(schema)})`);
  if (!isRecord(environment) || !Array.isArray(scenarios) || !Array.isArray(findings))
    throw new ReportHtmlInputError('results.json lacks environment, scenarios or findings');
  for (const s of scenarios)
    if (
      !isRecord(s) ||
      typeof s.id !== 'string' ||
      typeof s.verdict !== 'string' ||
      !isRecord(s.engine) ||
      !Array.isArray(s.differences)
    )
      throw new ReportHtmlInputError('results.json has a scenario without id, verdict or fields');
  // A results.json written before issue 31 names its verdicts the former way.
  const probes = (document as { probes?: unknown }).probes;
  return {
    ...(document as unknown as ResultsEntry),
    scenarios: (scenarios as ScenarioEntry[]).map((s) => ({
      ...s,
      verdict: verdictFromFile(s.verdict),
    })),
    ...(Array.isArray(probes)
      ? {
          probes: (probes as ProbeEntry[]).map((p) =>
            isRecord(p) && typeof p.verdict === 'string'
              ? { ...p, verdict: verdictFromFile(p.verdict) }
              : p,
          ),
        }
      : {}),
  };
}

/** One run's results and where its pcaps are. */
export interface RunInput {
  /** The kernel line (`6.1`) in a comparison; the run's kernel otherwise. */
  readonly line: string;
  readonly results: ResultsEntry;
  /** The bytes of a pcap named as results.json names it (`pcap/<id>.pcap`). */
  readonly pcap: (path: string) => Uint8Array | undefined;
  /** Memory words before the program (`mem[8]` -> value), by scenario id. */
  readonly memoryBefore: (id: string) => Readonly<Record<string, string>> | undefined;
}
