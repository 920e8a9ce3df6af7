/**
 * The two-guest wire mode, host side: boots the guest pair (src/runtime/pair.ts) with
 * the requester in guest A and the responder in guest B, then compares what the engine
 * predicts (predict.ts) with what the guests observed and what crossed the link
 * (observed.ts), and judges each scenario like the one-guest suite (runner.ts `judge`,
 * known-behaviour.ts records).
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findGuestAssets } from '../../runtime/assets.js';
import type { LinkFaultCounts } from '../../runtime/faults/relay.js';
import type { FaultSpec } from '../../runtime/faults/spec.js';
import type { Accelerator } from '../../runtime/kvm.js';
import { linkAddress, PAIR_LINKS, runGuestPair } from '../../runtime/pair.js';
import { packageRoot } from '../../runtime/paths.js';
import { environmentFor, type RunEnvironment } from '../environment.js';
import { judge, type ScenarioResult } from '../runner.js';
import type { Scenario } from '../scenario.js';
import { decodeLinkCapture, type LinkCapture, observedLinkOutcome, qpPairsOf } from './observed.js';
import { expectedLinkOutcome } from './predict.js';
import { CONTROL_PORT, type LinkObservation } from './protocol.js';
import { NO_REPEATS, type WireRepeats, wireRepeats } from './wire-repeats.js';

export interface LinkRunOptions {
  readonly scenarios: readonly Scenario[];
  readonly timeoutSeconds?: number;
  readonly kernelDir?: string;
  readonly accel?: Accelerator | 'auto';
  /** Set in both guests (e.g. the kernel line's rdma-core: runtime/userspace.ts). */
  readonly env?: Readonly<Record<string, string>>;
  readonly onProgress?: (line: string) => void;
  /** The guests' own output (the scenario lines of guest A, errors of either). */
  readonly onGuestOutput?: (guest: 'A' | 'B', chunk: Buffer) => void;
  readonly signal?: AbortSignal;
  /** Faults on both links (the relay of runtime/faults/); none: the guests are joined directly. */
  readonly faults?: FaultSpec;
}

/** What the fault relay did and what the transports repeated, per scenario and side. */
export interface LinkFaultReport {
  readonly spec: FaultSpec;
  /** The relay's counts per link (device), both directions. */
  readonly links: Readonly<Record<string, LinkFaultCounts>>;
  /** Per RoCE scenario: repeats seen at guest A's side and at guest B's side of the relay. */
  readonly scenarios: readonly {
    readonly id: string;
    readonly sideA: WireRepeats;
    readonly sideB: WireRepeats;
  }[];
}

export interface LinkRunResult {
  readonly results: ScenarioResult[];
  readonly environment: RunEnvironment;
  /** Frames in each link capture (all scenarios), by device. */
  readonly frames: Readonly<Record<string, number>>;
  /** What guest A recorded, per scenario (for tests and post-mortems). */
  readonly observations: readonly LinkObservation[];
  /** With `faults`: the relay's counts and the repeats on the wire. */
  readonly faults?: LinkFaultReport;
  /** With `faults`: each link's whole capture on each side of the relay (`rxe0.a.pcap`, `rxe0.b.pcap`, ...). */
  readonly captures: Readonly<Record<string, Uint8Array>>;
}

/** Judges one scenario from its observation and the link captures. */
export function judgeLinkScenario(
  scenario: Scenario,
  observation: LinkObservation | undefined,
  capture: LinkCapture | undefined,
  environment: RunEnvironment,
  seconds = 0,
): ScenarioResult {
  const engine = expectedLinkOutcome(scenario);
  const base = { scenario, engine, findings: [], stale: [], differences: [], seconds };
  if (observation === undefined || observation.error !== undefined || capture === undefined)
    return {
      ...base,
      verdict: 'error',
      kernel: undefined,
      error:
        observation?.error ??
        (observation === undefined ? 'not run (an earlier scenario failed)' : 'no capture'),
    };
  const rxe = PAIR_LINKS.find((l) => l.device === 'rxe0') ?? PAIR_LINKS[0];
  const peers =
    rxe === undefined
      ? { requester: '', responder: '' }
      : { requester: linkAddress(rxe, 0), responder: linkAddress(rxe, 1) };
  const kernel = observedLinkOutcome(scenario, observation, capture, peers);
  return {
    ...base,
    kernel,
    ...judge(scenario, engine, kernel, environmentFor(environment, scenario.device)),
  };
}

/** Runs the link scenarios in a fresh guest pair. */
export async function runLinkScenarios(options: LinkRunOptions): Promise<LinkRunResult> {
  const work = mkdtempSync(join(tmpdir(), 'rdma-interop-link-'));
  try {
    const share = join(work, 'share');
    const observationsFile = join(share, 'link-observations.json');
    const environmentFile = join(share, 'link-environment.json');
    const guestMain = join(packageRoot(), 'dist', 'interop', 'link', 'guest-main.js');
    const node = process.execPath;
    const started = performance.now();
    const pair = await runGuestPair({
      assets: findGuestAssets(options.kernelDir),
      accel: options.accel ?? 'auto',
      commands: [
        [
          node,
          guestMain,
          'requester',
          observationsFile,
          environmentFile,
          ...options.scenarios.map((s) => s.id),
        ],
        [node, guestMain, 'responder'],
      ],
      cwd: packageRoot(),
      timeoutSeconds: options.timeoutSeconds ?? 600,
      shareDir: share,
      captureDir: join(work, 'captures'),
      env: options.env ?? {},
      ...(options.onProgress === undefined ? {} : { onProgress: options.onProgress }),
      onOutput: (guest, chunk) => options.onGuestOutput?.(guest === 0 ? 'A' : 'B', chunk),
      onErrorOutput: (guest, chunk) => options.onGuestOutput?.(guest === 0 ? 'A' : 'B', chunk),
      ...(options.signal === undefined ? {} : { signal: options.signal }),
      ...(options.faults === undefined
        ? {}
        : { faults: options.faults, spareTcpPorts: [CONTROL_PORT] }),
    });
    const seconds = (performance.now() - started) / 1000 / Math.max(1, options.scenarios.length);
    const observations = existsSync(observationsFile)
      ? (JSON.parse(readFileSync(observationsFile, 'utf8')) as LinkObservation[])
      : [];
    const environment = JSON.parse(readFileSync(environmentFile, 'utf8')) as RunEnvironment;
    const captures = new Map<string, LinkCapture>();
    const frames: Record<string, number> = {};
    for (const link of PAIR_LINKS) {
      const file = join(work, 'captures', `${link.device}.pcap`);
      if (!existsSync(file)) continue;
      const capture = decodeLinkCapture(new Uint8Array(readFileSync(file)));
      captures.set(link.device, capture);
      frames[link.device] = capture.decoded.frameCount;
    }
    const results = options.scenarios.map((scenario) =>
      judgeLinkScenario(
        scenario,
        observations.find((o) => o.id === scenario.id),
        captures.get(scenario.device),
        environment,
        seconds,
      ),
    );
    const faults =
      options.faults === undefined
        ? undefined
        : faultReport(options.faults, pair.faults ?? {}, observations, captures, pair.capturesB);
    const files: Record<string, Uint8Array> = {};
    if (faults !== undefined)
      for (const link of PAIR_LINKS)
        for (const [side, file] of [
          ['a', pair.captures[link.device]],
          ['b', pair.capturesB?.[link.device]],
        ] as const)
          if (file !== undefined && existsSync(file))
            files[`${link.device}.${side}.pcap`] = new Uint8Array(readFileSync(file));
    return {
      results,
      environment,
      frames,
      observations,
      captures: files,
      ...(faults === undefined ? {} : { faults }),
    };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

function faultReport(
  spec: FaultSpec,
  links: Readonly<Record<string, LinkFaultCounts>>,
  observations: readonly LinkObservation[],
  captures: ReadonlyMap<string, LinkCapture>,
  capturesB: Readonly<Record<string, string>> | undefined,
): LinkFaultReport {
  const rxe = PAIR_LINKS.find((l) => l.device === 'rxe0');
  const fileB = capturesB?.rxe0;
  const sideA = captures.get('rxe0');
  const sideB =
    fileB !== undefined && existsSync(fileB)
      ? decodeLinkCapture(new Uint8Array(readFileSync(fileB)))
      : undefined;
  if (rxe === undefined || sideA === undefined) return { spec, links, scenarios: [] };
  const peers = { requester: linkAddress(rxe, 0), responder: linkAddress(rxe, 1) };
  const scenarios = observations
    .filter((o) => o.requesterQpn !== undefined && o.error === undefined)
    .map((o) => {
      const qps = qpPairsOf(o);
      return {
        id: o.id,
        sideA: wireRepeats(sideA, qps, peers),
        sideB: sideB === undefined ? NO_REPEATS : wireRepeats(sideB, qps, peers),
      };
    });
  return { spec, links, scenarios };
}
