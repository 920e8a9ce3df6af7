/**
 * The finding files of a probe run (probe/finding-file.ts): one per fuzz finding, written into
 * the report's `findings/` folder beside results.json. A minimized finding carries its
 * minimized sequence; one that was not minimized (no --minimize, a broken device) carries the
 * sequence as found, with 0 calls.
 */
import type { GuidedSummary } from '../coverage/guided-roce.js';
import type { SiwGuidedSummary } from '../coverage/guided-siw.js';
import {
  FINDING_FORMAT,
  type FindingFile,
  type FindingSequence,
  kernelLineOf,
  toolVersion,
  writeFindingFile,
} from './finding-file.js';
import type { FuzzFinding, FuzzSummary } from './fuzz-loop.js';

/** The sequence as found: guided inputs (JSON, one or a batch) or packets (hex, comma-joined). */
function foundSequence(summary: FuzzSummary, f: FuzzFinding): FindingSequence | undefined {
  const guided = (summary as Partial<SiwGuidedSummary>).guided;
  if (guided?.inputKind === 'siw') {
    const parsed = JSON.parse(f.bytes) as unknown;
    const inputs = (
      Array.isArray(parsed) ? parsed : [parsed]
    ) as SiwGuidedSummary['guided']['added'];
    return inputs.length === 0 ? undefined : { kind: 'guided-siw', inputs };
  }
  if (guided !== undefined) {
    const parsed = JSON.parse(f.bytes) as unknown;
    const inputs = (Array.isArray(parsed) ? parsed : [parsed]) as GuidedSummary['guided']['added'];
    return inputs.length === 0 ? undefined : { kind: 'guided', inputs };
  }
  const packets = f.bytes.split(',').filter((p) => p !== '');
  return packets.length === 0 ? undefined : { kind: 'packets', packets };
}

/** The finding files of a summary (findings with no bytes sent have none). */
export function findingFilesOf(summary: FuzzSummary): FindingFile[] {
  const out: FindingFile[] = [];
  for (const f of summary.findings) {
    const m = f.minimization;
    const sequence = m?.sequence ?? foundSequence(summary, f);
    if (sequence === undefined) continue;
    const found = foundSequence(summary, f);
    const originalLength =
      m?.originalLength ??
      (found === undefined
        ? 0
        : found.kind === 'packets'
          ? found.packets.length
          : found.inputs.length);
    out.push({
      format: FINDING_FORMAT,
      kernelLine: kernelLineOf(summary.kernel),
      kernel: summary.kernel,
      device: summary.device,
      oracle: m?.oracle ?? f.oracles?.[0] ?? 'unnamed',
      why: f.why,
      seed: summary.seed,
      originalLength: Math.max(originalLength, 1),
      sequence,
      minimize: { calls: m?.calls ?? 0, exhausted: m?.exhausted ?? false },
      toolVersion: toolVersion(),
    });
  }
  return out;
}

/** Writes every summary's finding files into `<dir>/findings/`; returns their paths. */
export function writeFindingFiles(dir: string, summaries: readonly FuzzSummary[]): string[] {
  const paths: string[] = [];
  for (const s of summaries)
    findingFilesOf(s).forEach((file, n) => {
      paths.push(writeFindingFile(dir, file, n));
    });
  return paths;
}
