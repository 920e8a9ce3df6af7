/**
 * `rdma-interop run --device <name> --peer <host[:port]>`: the link scenarios of the
 * device's transport across two hosts (src/interop/peer/peer.ts), this host the
 * requester, the peer host's `rdma-interop peer serve` the responder; reported as the
 * link mode reports (results.json, junit.xml, report.md, report.html with --report).
 */
import { InvalidArgumentError } from 'commander';
import { ArgumentError } from '../../errors.js';
import { type PeerAddress, parsePeerAddress, runPeer } from '../../interop/peer/peer.js';
import { renderFindings, renderReport, summaryLine } from '../../interop/report.js';
import { resultsDocument, writeReport } from '../../interop/report-files.js';
import { passed } from '../../interop/runner.js';

/** commander argument parser for `--peer <host[:port]>`. */
export function parsePeerOption(value: string): PeerAddress {
  try {
    return parsePeerAddress(value);
  } catch (error) {
    if (error instanceof ArgumentError)
      throw new InvalidArgumentError(error.message.replace(/^--peer: /, ''));
    throw error;
  }
}

export interface PeerCliOptions {
  readonly device: string;
  readonly peer: PeerAddress;
  readonly address?: string;
  readonly gidIndex?: number;
  readonly scenario?: string;
  readonly report?: string;
  readonly strict?: boolean;
  readonly json?: boolean;
}

/** Runs the requester half against the peer, prints and writes the report; the exit status. */
export async function runAgainstPeer(options: PeerCliOptions): Promise<number> {
  const run = await runPeer({
    device: options.device,
    peer: options.peer,
    ...(options.address === undefined ? {} : { address: options.address }),
    ...(options.gidIndex === undefined ? {} : { gidIndex: options.gidIndex }),
    ...(options.scenario === undefined ? {} : { scenario: options.scenario }),
    onProgress: (line) => process.stderr.write(`interop: ${line}\n`),
  });
  const { results } = run;
  results.forEach((r, i) => {
    process.stderr.write(`  [${i + 1}/${results.length}] ${r.scenario.id}: ${r.verdict}\n`);
  });
  const strict = options.strict === true;
  if (options.json === true)
    process.stdout.write(
      `${JSON.stringify(resultsDocument(results, run.environment, strict, run.environments), null, 2)}\n`,
    );
  else {
    process.stdout.write(`${renderReport(results)}\n`);
    const findings = renderFindings(results);
    if (findings !== '')
      process.stdout.write(`\nKnown provider behaviour seen in this run:\n${findings}\n`);
  }
  if (options.report !== undefined)
    writeReport(options.report, results, run.environment, strict, run.environments);
  (options.json === true ? process.stderr : process.stdout).write(
    `interop: ${summaryLine(
      results.map((r) => r.verdict),
      strict,
    )} (${run.frames} frames captured on this host's side)\n`,
  );
  return results.every((r) => passed(r.verdict, strict)) ? 0 : 1;
}
