/**
 * The two-guest wire mode, host side: boots the guest pair (src/runtime/pair.ts) with
 * the requester in guest A and the responder in guest B (and, both ways round, then the
 * roles swapped in the same boot: sides.ts), then compares what the engine predicts
 * (predict.ts) with what the guests observed and what crossed the link (observed.ts), and
 * judges each scenario like the one-guest suite (runner.ts `judge`, judge/records/
 * records, each looked up with the environment of the side it belongs to).
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
import type { RunEnvironment } from '../environment.js';
import { judge, type ScenarioResult } from '../runner.js';
import type { Scenario } from '../scenario.js';
import {
  decodeLinkCapture,
  type LinkCapture,
  type LinkPeers,
  observedLinkOutcome,
  qpPairsOf,
} from './observed.js';
import { expectedLinkOutcome } from './predict.js';
import { CONTROL_PORT, type LinkObservation } from './protocol.js';
import { withReadWindows } from './read-window.js';
import {
  directedId,
  type LinkDirection,
  type LinkPair,
  linkFiles,
  linkSide,
  PAIR_GUESTS,
  type PairGuest,
} from './sides.js';
import { NO_REPEATS, tcpRepeats, type WireRepeats, wireRepeats } from './wire-repeats.js';

export interface LinkRunOptions {
  readonly scenarios: readonly Scenario[];
  readonly timeoutSeconds?: number;
  /** Guest A's kernel (a line or an assets directory). */
  readonly kernelDir?: string;
  readonly accel?: Accelerator | 'auto';
  /** Set in guest A (its line's rdma-core: runtime/userspace.ts; its siw variant). */
  readonly env?: Readonly<Record<string, string>>;
  /** Guest B's own kernel and environment (a mixed pair); default: A's. */
  readonly peer?: { readonly kernelDir?: string; readonly env?: Readonly<Record<string, string>> };
  /** `both-ways`: B then requests the same scenarios from A, in the same boot. */
  readonly direction?: LinkDirection;
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
  /**
   * Per scenario: repeats seen at guest A's side and at guest B's side of the relay. RoCE:
   * packets by QP, PSN and opcode (wireRepeats); siw: TCP segments by sequence number
   * (tcpRepeats: requests are A's segments, responses B's).
   */
  readonly scenarios: readonly {
    readonly id: string;
    readonly transport: 'roce' | 'tcp';
    readonly sideA: WireRepeats;
    readonly sideB: WireRepeats;
  }[];
}

export interface LinkRunResult {
  readonly results: ScenarioResult[];
  /** Guest A's environment. */
  readonly environment: RunEnvironment;
  /** Each guest's environment. */
  readonly environments: Readonly<Record<PairGuest, RunEnvironment>>;
  /** Frames in each link capture (all scenarios), by device. */
  readonly frames: Readonly<Record<string, number>>;
  /** What the requesters recorded, per scenario (for tests and post-mortems). */
  readonly observations: readonly LinkObservation[];
  /** With `faults`: the relay's counts and the repeats on the wire. */
  readonly faults?: LinkFaultReport;
  /** With `faults`: each link's whole capture on each side of the relay (`rxe0.a.pcap`, `rxe0.b.pcap`, ...). */
  readonly captures: Readonly<Record<string, Uint8Array>>;
}

/** Which guest requested, and both guests' environments (a pair run). */
export interface LinkJudgeContext {
  readonly environments: Readonly<Record<PairGuest, RunEnvironment>>;
  readonly requester: PairGuest;
  /**
   * Across two hosts (`run --peer`): the device each side opened (default: the scenario's
   * target, rxe0 or siw0) and their RoCE addresses (default: the guest pair's, PAIR_LINKS).
   */
  readonly devices?: Readonly<Record<PairGuest, string>>;
  readonly peers?: LinkPeers;
}

/**
 * What the responder implements of RFC 7306: the patched siw both extensions, a stock siw
 * neither (its siw_get_hdr knows RDMAP opcodes 0-7 only: judge/records/).
 */
function withResponderOf(scenario: Scenario, pair: LinkPair): Scenario {
  if (scenario.device !== 'siw0' || pair.responder.provider !== 'siw') return scenario;
  return { ...scenario, responderExtensions: { atomics: false, immediateData: false } };
}

/** Judges one scenario from its observation and the link captures. */
export function judgeLinkScenario(
  scenario: Scenario,
  observation: LinkObservation | undefined,
  capture: LinkCapture | undefined,
  environment: RunEnvironment,
  seconds = 0,
  context: LinkJudgeContext = { environments: { A: environment, B: environment }, requester: 'A' },
): ScenarioResult {
  const requester = context.requester;
  const responder: PairGuest = requester === 'A' ? 'B' : 'A';
  const pair: LinkPair = {
    requester: linkSide(
      requester,
      context.environments[requester],
      scenario.device,
      context.devices?.[requester],
    ),
    responder: linkSide(
      responder,
      context.environments[responder],
      scenario.device,
      context.devices?.[responder],
    ),
  };
  const engine = withReadWindows(scenario, expectedLinkOutcome(withResponderOf(scenario, pair)));
  // The result carries the direction in its id (the report's rows, pcap and junit names).
  const shown: Scenario =
    requester === 'A'
      ? scenario
      : {
          ...scenario,
          id: directedId(scenario.id, requester),
          name: directedId(scenario.name, requester),
          title: `${scenario.title}, B requests from A`,
        };
  const base = { scenario: shown, engine, findings: [], stale: [], differences: [], seconds, pair };
  if (observation === undefined || observation.error !== undefined || capture === undefined)
    return {
      ...base,
      verdict: 'not-run',
      kernel: undefined,
      error:
        observation?.error ??
        (observation === undefined ? 'not run (an earlier scenario failed)' : 'no capture'),
    };
  const rxe = PAIR_LINKS.find((l) => l.device === 'rxe0') ?? PAIR_LINKS[0];
  const at = (guest: PairGuest) => (guest === 'A' ? 0 : 1);
  const peers =
    context.peers ??
    (rxe === undefined
      ? { requester: '', responder: '' }
      : { requester: linkAddress(rxe, at(requester)), responder: linkAddress(rxe, at(responder)) });
  const kernel = withReadWindows(
    scenario,
    observedLinkOutcome(scenario, observation, capture, peers),
  );
  return {
    ...base,
    kernel,
    // Records are keyed by scenario id (without the direction) and by the side they belong to.
    ...judge(scenario, engine, kernel, pair.requester, undefined, pair.responder),
  };
}

/** Runs the link scenarios in a fresh guest pair. */
export async function runLinkScenarios(options: LinkRunOptions): Promise<LinkRunResult> {
  const work = mkdtempSync(join(tmpdir(), 'rdma-interop-link-'));
  try {
    const share = join(work, 'share');
    const files = linkFiles(share);
    const direction = options.direction ?? 'one-way';
    const guestMain = join(packageRoot(), 'dist', 'interop', 'link', 'guest-main.js');
    const node = process.execPath;
    const ids = options.scenarios.map((s) => s.id);
    const started = performance.now();
    const pair = await runGuestPair({
      assets: findGuestAssets(options.kernelDir),
      accel: options.accel ?? 'auto',
      commands: [
        [node, guestMain, 'A', share, direction, ...ids],
        [node, guestMain, 'B', share, direction, ...ids],
      ],
      cwd: packageRoot(),
      timeoutSeconds: options.timeoutSeconds ?? 600,
      shareDir: share,
      captureDir: join(work, 'captures'),
      env: options.env ?? {},
      ...(options.peer === undefined
        ? {}
        : {
            peer: {
              assets: findGuestAssets(options.peer.kernelDir ?? options.kernelDir),
              env: options.peer.env ?? options.env ?? {},
            },
          }),
      ...(options.onProgress === undefined ? {} : { onProgress: options.onProgress }),
      onOutput: (guest, chunk) => options.onGuestOutput?.(guest === 0 ? 'A' : 'B', chunk),
      onErrorOutput: (guest, chunk) => options.onGuestOutput?.(guest === 0 ? 'A' : 'B', chunk),
      ...(options.signal === undefined ? {} : { signal: options.signal }),
      ...(options.faults === undefined
        ? {}
        : { faults: options.faults, spareTcpPorts: [CONTROL_PORT] }),
    });
    const requesters: readonly PairGuest[] = direction === 'both-ways' ? PAIR_GUESTS : ['A'];
    const seconds =
      (performance.now() - started) / 1000 / Math.max(1, ids.length * requesters.length);
    const readJson = <T>(file: string, missing: T): T =>
      existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as T) : missing;
    const environments = {
      A: readJson<RunEnvironment | undefined>(files.environment('A'), undefined),
      B: readJson<RunEnvironment | undefined>(files.environment('B'), undefined),
    };
    if (environments.A === undefined) throw new Error('guest A wrote no environment');
    const both = { A: environments.A, B: environments.B ?? environments.A };
    const captures = new Map<string, LinkCapture>();
    const frames: Record<string, number> = {};
    for (const link of PAIR_LINKS) {
      const file = join(work, 'captures', `${link.device}.pcap`);
      if (!existsSync(file)) continue;
      const capture = decodeLinkCapture(new Uint8Array(readFileSync(file)));
      captures.set(link.device, capture);
      frames[link.device] = capture.decoded.frameCount;
    }
    const observations: LinkObservation[] = [];
    const results = requesters.flatMap((requester) => {
      const observed = readJson<LinkObservation[]>(files.observations(requester), []);
      observations.push(...observed);
      return options.scenarios.map((scenario) =>
        judgeLinkScenario(
          scenario,
          observed.find((o) => o.id === scenario.id),
          captures.get(scenario.device),
          both[requester],
          seconds,
          { environments: both, requester },
        ),
      );
    });
    const faults =
      options.faults === undefined
        ? undefined
        : faultReport(options.faults, pair.faults ?? {}, observations, captures, pair.capturesB);
    const captureFiles: Record<string, Uint8Array> = {};
    if (faults !== undefined)
      for (const link of PAIR_LINKS)
        for (const [side, file] of [
          ['a', pair.captures[link.device]],
          ['b', pair.capturesB?.[link.device]],
        ] as const)
          if (file !== undefined && existsSync(file))
            captureFiles[`${link.device}.${side}.pcap`] = new Uint8Array(readFileSync(file));
    return {
      results,
      environment: both.A,
      environments: both,
      frames,
      observations,
      captures: captureFiles,
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
  const sideBOf = (device: string): LinkCapture | undefined => {
    const file = capturesB?.[device];
    return file !== undefined && existsSync(file)
      ? decodeLinkCapture(new Uint8Array(readFileSync(file)))
      : undefined;
  };
  const rxeA = captures.get('rxe0');
  const rxeB = sideBOf('rxe0');
  const siwA = captures.get('siw0');
  const siwB = sideBOf('siw0');
  const peers =
    rxe === undefined
      ? undefined
      : { requester: linkAddress(rxe, 0), responder: linkAddress(rxe, 1) };
  const scenarios = observations
    .filter((o) => o.error === undefined)
    .flatMap((o): LinkFaultReport['scenarios'][number][] => {
      if (o.requesterQpn !== undefined && rxeA !== undefined && peers !== undefined) {
        const qps = qpPairsOf(o);
        return [
          {
            id: o.id,
            transport: 'roce',
            sideA: wireRepeats(rxeA, qps, peers),
            sideB: rxeB === undefined ? NO_REPEATS : wireRepeats(rxeB, qps, peers),
          },
        ];
      }
      if (o.serverPort !== undefined && siwA !== undefined)
        return [
          {
            id: o.id,
            transport: 'tcp',
            sideA: tcpRepeats(siwA, o.serverPort),
            sideB: siwB === undefined ? NO_REPEATS : tcpRepeats(siwB, o.serverPort),
          },
        ];
      return [];
    });
  return { spec, links, scenarios };
}
