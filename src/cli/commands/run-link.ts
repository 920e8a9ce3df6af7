/**
 * `rdma-interop run --link`: the wire scenarios across a real link between two guests
 * (src/interop/link/), captured host-side and compared packet by packet with the engine.
 * Each guest boots its own set-up (`--kernel`/`--siw` for A, `--peer-kernel`/`--peer-siw`
 * for B, each defaulting to A's); a mixed pair runs both ways round in one boot.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import picomatch from 'picomatch';
import {
  FAULT_LINK_SCENARIOS,
  isSoakOnly,
  needsSiwRfc7306,
  scenarioWireKind,
  wireKindOf,
} from '../../interop/link/fault-scenarios.js';
import { type LinkFaultReport, runLinkScenarios } from '../../interop/link/run.js';
import { LINK_SCENARIOS } from '../../interop/link/scenarios.js';
import { renderFindings, renderReport, summaryLine } from '../../interop/report.js';
import { resultsDocument, writeReport } from '../../interop/report-files.js';
import { passed } from '../../interop/runner.js';
import type { DeviceName, Scenario } from '../../interop/scenario.js';
import { findGuestAssets, selectKernel } from '../../runtime/assets.js';
import { type FaultSpec, formatFaults } from '../../runtime/faults/spec.js';
import { abortOnSignals, DEFAULT_KERNEL_LINE, GuestRuntimeError } from '../../runtime/index.js';
import { findKernelLine } from '../../runtime/kernel-lines.js';
import { type SiwVariant, siwVariantEnv } from '../../runtime/siw-variant-env.js';
import { rdmaCoreEnv } from '../../runtime/userspace.js';
import { reportGuestFailure } from '../devices-or-guest.js';

export interface LinkCliOptions {
  readonly device?: DeviceName[];
  readonly scenario?: string;
  readonly report?: string;
  readonly strict?: boolean;
  readonly timeout: number;
  /** Guest A's kernel line or assets directory (default 6.1). */
  readonly kernel?: string;
  /** Guest A's siw (default stock). */
  readonly siw?: SiwVariant;
  /** Guest B's kernel line or assets directory (default: A's). */
  readonly peerKernel?: string;
  /** Guest B's siw (default: A's). */
  readonly peerSiw?: SiwVariant;
  readonly json?: boolean;
  /** The fault relay between the guests (`--faults`). */
  readonly faults?: FaultSpec;
}

/** What one guest boots. */
export interface LinkGuestKernel {
  readonly kernelDir: string;
  readonly env: Record<string, string>;
  readonly release: string;
  readonly siw: SiwVariant;
}

/**
 * What a guest boots for its kernel and siw: the kernel's assets (the line set up first:
 * `rdma-interop setup --kernel <line>`), and the environment that gives it the line's own
 * rdma-core and then, for the patched siw, its module and libsiw (whose rdma-core wins the
 * library path), as `vm --kernel --siw` does (runtime/index.ts `runInGuest`).
 */
export function linkKernel(kernel: string | undefined, siw: SiwVariant): LinkGuestKernel {
  const name = kernel ?? DEFAULT_KERNEL_LINE;
  const assets = findGuestAssets(name);
  const selected = selectKernel(name);
  const rdmaCore = selected.kind === 'line' ? findKernelLine(selected.line)?.rdmaCore : undefined;
  return {
    kernelDir: name,
    env: {
      ...(rdmaCore === undefined ? {} : rdmaCoreEnv(rdmaCore)),
      ...siwVariantEnv(siw, assets),
    },
    release: assets.kernelRelease,
    siw,
  };
}

/**
 * The link scenarios the filters select: the faulty-wire ones (fault-scenarios.ts) with
 * `--faults` (the lost-wire ones with `drop=1`), the wire ones without; a `--scenario`
 * pattern chooses from both.
 */
export function selectLinkScenarios(
  options: Pick<LinkCliOptions, 'device' | 'scenario' | 'faults'> & {
    readonly siw?: SiwVariant | undefined;
    readonly peerSiw?: SiwVariant | undefined;
  },
): Scenario[] {
  // The siw hammers and streams need RFC 7306 on both guests: a pattern still selects them.
  const siwRfc7306 =
    (options.siw ?? 'stock') === 'rfc7306' && (options.peerSiw ?? options.siw) === 'rfc7306';
  const match = options.scenario === undefined ? () => true : picomatch(options.scenario);
  // Without a pattern, `drop=1` selects the lost-wire scenario, `corrupt-payload` the MPA
  // CRC case and any other faults the rest (fault-scenarios.ts wireKindOf).
  const wire = options.faults === undefined ? undefined : wireKindOf(options.faults);
  const table =
    options.scenario !== undefined
      ? [...LINK_SCENARIOS, ...FAULT_LINK_SCENARIOS]
      : options.faults !== undefined
        ? FAULT_LINK_SCENARIOS.filter(
            (s) =>
              scenarioWireKind(s) === wire && (siwRfc7306 || !needsSiwRfc7306(s)) && !isSoakOnly(s),
          )
        : LINK_SCENARIOS;
  return table.filter(
    (s) => (options.device === undefined || options.device.includes(s.device)) && match(s.id),
  );
}

/** Boots the guest pair, runs `scenarios`, prints and writes the report; the exit status. */
export async function runLink(
  scenarios: readonly Scenario[],
  options: LinkCliOptions,
): Promise<number> {
  const interrupt = abortOnSignals();
  try {
    const kernel = linkKernel(options.kernel, options.siw ?? 'stock');
    const peer = linkKernel(options.peerKernel ?? options.kernel, options.peerSiw ?? kernel.siw);
    // A mixed pair is asked both ways round: the roles swap in the same boot.
    const mixed = peer.release !== kernel.release || peer.siw !== kernel.siw;
    const sides = mixed
      ? `A: kernel ${kernel.release}, siw ${kernel.siw}; B: kernel ${peer.release}, siw ${peer.siw}; both ways round`
      : `requester in A, responder in B, kernel ${kernel.release}${kernel.siw === 'stock' ? '' : `, siw ${kernel.siw}`}`;
    process.stderr.write(
      `interop: ${scenarios.length} link scenarios on a guest pair (${sides})\n`,
    );
    const run = await runLinkScenarios({
      scenarios,
      kernelDir: kernel.kernelDir,
      env: kernel.env,
      peer: { kernelDir: peer.kernelDir, env: peer.env },
      direction: mixed ? 'both-ways' : 'one-way',
      timeoutSeconds: options.timeout,
      ...(options.faults === undefined ? {} : { faults: options.faults }),
      signal: interrupt.signal,
      onProgress: (line) => process.stderr.write(`[link] ${line}\n`),
      onGuestOutput: (guest, chunk) => {
        for (const line of chunk.toString().split('\n'))
          if (line !== '') process.stderr.write(`[${guest}] ${line}\n`);
      },
    });
    const results = run.results;
    results.forEach((r, i) => {
      process.stderr.write(
        `  [${i + 1}/${results.length}] ${r.scenario.device} ${r.scenario.id}: ${r.verdict}\n`,
      );
    });
    const strict = options.strict === true;
    if (options.json === true) {
      process.stdout.write(
        `${JSON.stringify(resultsDocument(results, run.environment, strict, run.environments), null, 2)}\n`,
      );
    } else {
      process.stdout.write(`${renderReport(results)}\n`);
      const findings = renderFindings(results);
      if (findings !== '')
        process.stdout.write(`\nKnown provider behaviour seen in this run:\n${findings}\n`);
    }
    if (options.report !== undefined) {
      writeReport(options.report, results, run.environment, strict, run.environments);
      if (run.faults !== undefined) writeFaultReport(options.report, run.faults, run.captures);
    }
    if (run.faults !== undefined)
      (options.json === true ? process.stderr : process.stdout).write(faultSummary(run.faults));
    const frames = Object.entries(run.frames)
      .map(([device, n]) => `${n} frames on ${device}'s link`)
      .join(', ');
    (options.json === true ? process.stderr : process.stdout).write(
      `interop: ${summaryLine(
        results.map((r) => r.verdict),
        strict,
      )} (${frames})\n`,
    );
    return results.every((r) => passed(r.verdict, strict)) ? 0 : 1;
  } catch (error) {
    if (!(error instanceof GuestRuntimeError)) throw error;
    return reportGuestFailure(error, interrupt.received(), 'rdma-interop run', '[link]');
  } finally {
    interrupt.dispose();
  }
}

/** `<report>/faults.json` and both sides' link captures (`captures/<device>.{a,b}.pcap`). */
function writeFaultReport(
  dir: string,
  faults: LinkFaultReport,
  captures: Readonly<Record<string, Uint8Array>>,
): void {
  writeFileSync(
    join(dir, 'faults.json'),
    `${JSON.stringify({ faults: formatFaults(faults.spec), ...faults }, null, 2)}\n`,
  );
  mkdirSync(join(dir, 'captures'), { recursive: true });
  for (const [name, bytes] of Object.entries(captures))
    writeFileSync(join(dir, 'captures', name), bytes);
}

/** The relay's counts per link and the repeats per scenario, as lines. */
export function faultSummary(faults: LinkFaultReport): string {
  const lines = [`faults: ${formatFaults(faults.spec)}`];
  for (const [device, counts] of Object.entries(faults.links))
    for (const [direction, c] of [
      ['A->B', counts.aToB],
      ['B->A', counts.bToA],
    ] as const)
      lines.push(
        `  ${device} ${direction}: ${c.frames} frames, ${c.dropped} dropped, ${c.duplicated} duplicated, ${c.reordered} reordered, ${c.corrupted} bit-flipped, ${c.corruptedPayload} payload-corrupted${c.mpaCrcRequested > 0 ? `, ${c.mpaCrcRequested} MPA Request(s) set to ask for CRCs` : ''}`,
      );
  for (const s of faults.scenarios)
    lines.push(
      s.transport === 'tcp'
        ? `  ${s.id}: ${s.sideA.repeatedRequests} of ${s.sideA.requests} TCP segments A->B and ${s.sideA.repeatedResponses} of ${s.sideA.responses} B->A retransmitted (A's side)`
        : `  ${s.id}: ${s.sideA.repeatedRequests} retransmitted requests (A's side); at B: ${s.sideB.duplicateAtomics} duplicate atomics, ${s.sideB.answeredFromSavedResult} answered from the saved result, ${s.sideB.answeredDifferently} answered differently`,
    );
  return `${lines.join('\n')}\n`;
}
