/**
 * The link mode across two hosts (issue 37: "`--peer <host>` for two hosts where a device
 * cannot talk to itself"): the same control protocol (link/protocol.ts) and the same two
 * halves (link/guest.ts) as the guest pair, each on one device of its host, any name.
 * `rdma-interop peer serve --device <name>` runs the responder half on the peer host;
 * `rdma-interop run --device <name> --peer <host[:port]>` drives the requester half here,
 * captures this host's side of the wire (tcpdump on the interface routed to the peer) and
 * judges each scenario as the link mode does, the responder's records keyed on the
 * provider the peer reported.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { isIP } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import picomatch from 'picomatch';
import { ArgumentError, RdmaInteropError } from '../../errors.js';
import type { DeviceDescription } from '../device-description.js';
import { collectEnvironment, type RunEnvironment } from '../environment.js';
import { startTcpdump } from '../kernel/capture.js';
import { probeDevice } from '../kernel/device-target.js';
import { driveRequester, serveResponder } from '../link/guest.js';
import { decodeLinkCapture } from '../link/observed.js';
import type { PairPlace } from '../link/place.js';
import { CONTROL_PORT, type LinkObservation } from '../link/protocol.js';
import { judgeLinkScenario } from '../link/run.js';
import { LINK_SCENARIOS } from '../link/scenarios.js';
import type { ScenarioResult } from '../runner.js';
import type { DeviceName, Scenario } from '../scenario.js';

/** A peer run that could not start or was refused (unreachable, another transport...). */
export class PeerError extends RdmaInteropError {
  override readonly name = 'PeerError';
  readonly origin = 'interop';
}

/** A peer as `--peer` names it: a host (name, IPv4, IPv6) and the control port. */
export interface PeerAddress {
  readonly host: string;
  readonly port: number;
}

/** Parses `host`, `host:port`, `[v6]:port` or a bare IPv6 address (the default port: CONTROL_PORT). */
export function parsePeerAddress(text: string): PeerAddress {
  const bad = (why: string) =>
    new ArgumentError('interop', '--peer', `${JSON.stringify(text)}: ${why}`);
  const port = (p: string) => {
    const n = Number(p);
    if (!/^\d+$/.test(p) || n < 1 || n > 65535) throw bad('the port is an integer 1-65535');
    return n;
  };
  const bracketed = /^\[([^\]]+)\](?::(.*))?$/.exec(text);
  if (bracketed !== null) {
    const [, host = '', p] = bracketed;
    if (isIP(host) !== 6) throw bad('brackets hold an IPv6 address');
    return { host, port: p === undefined ? CONTROL_PORT : port(p) };
  }
  if (isIP(text) === 6) return { host: text, port: CONTROL_PORT };
  const [host = '', p, ...more] = text.split(':');
  if (more.length > 0) throw bad('an IPv6 address with a port goes in brackets: [addr]:port');
  if (!/^[A-Za-z0-9.-]{1,253}$/.test(host)) throw bad('give a host name or address');
  return { host, port: p === undefined ? CONTROL_PORT : port(p) };
}

/**
 * The link scenarios' target a device runs as: RoCE the by-hand rxe0 programs, iWARP the
 * rdma_cm siw0 ones. InfiniBand has no IP address to find a GID by (link/guest.ts
 * findGid): not across hosts yet.
 */
export function linkTargetOf(d: Pick<DeviceDescription, 'name' | 'transport'>): DeviceName {
  switch (d.transport) {
    case 'roce':
      return 'rxe0';
    case 'iwarp':
      return 'siw0';
    case 'ib':
      throw new PeerError(
        `${d.name} is InfiniBand: the link scenarios address a peer by IP (a RoCE GID or an iWARP address); not supported across hosts yet`,
      );
  }
}

/** A RoCE device's address must be IPv4: the by-hand bring-up finds its GID by it. */
function requireUsableAddress(d: DeviceDescription, target: DeviceName): void {
  if (d.address === '')
    throw new PeerError(`${d.name} has no address (its netdev ${d.netdev || '(none)'} has none)`);
  if (target === 'rxe0' && isIP(d.address) !== 4)
    throw new PeerError(
      `${d.name}: ${d.address} is not IPv4; the RoCE link scenarios find their GID by an IPv4 address (--address)`,
    );
}

/** The place of one end on `device` (both targets map to it: it serves only its own). */
function placeOf(
  d: DeviceDescription,
  control: PairPlace['control'],
  peerAddress: string,
): PairPlace {
  const here = { me: d.address, peer: peerAddress };
  return {
    devices: { rxe0: d.name, siw0: d.name },
    addresses: { rxe0: here, siw0: here },
    control,
  };
}

export interface PeerServeOptions {
  readonly device: string;
  readonly address?: string;
  readonly gidIndex?: number;
  /** The address the control port listens on (default: every address). */
  readonly listen?: string;
  readonly port?: number;
  /** How long to wait for the requester, and for each of its messages (seconds). */
  readonly timeoutSeconds?: number;
  readonly onListening?: (port: number, device: DeviceDescription) => void;
}

/** `peer serve`: the responder half for one requester, until it says `bye` (or the timeout). */
export async function servePeer(options: PeerServeOptions): Promise<void> {
  const d = probeDevice(options.device, {
    ...(options.address === undefined ? {} : { address: options.address }),
    ...(options.gidIndex === undefined ? {} : { gidIndex: options.gidIndex }),
  });
  const target = linkTargetOf(d);
  requireUsableAddress(d, target);
  const place: PairPlace = {
    ...placeOf(
      d,
      { listen: options.listen ?? '0.0.0.0', connect: '', port: options.port ?? CONTROL_PORT },
      '',
    ),
    serveMs: (options.timeoutSeconds ?? 600) * 1000,
    environment: collectEnvironment([d.name], [d]),
  };
  try {
    await serveResponder(place, [target], (port) => options.onListening?.(port, d));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE' || code === 'EADDRNOTAVAIL' || code === 'EACCES')
      throw new PeerError(
        `cannot listen on ${place.control.listen}:${place.control.port}: ${code}`,
      );
    if (error instanceof Error && error.message.startsWith('no requester connected'))
      throw new PeerError(error.message);
    throw error;
  }
}

export interface PeerRunOptions {
  readonly device: string;
  readonly address?: string;
  readonly gidIndex?: number;
  readonly peer: PeerAddress;
  readonly scenario?: string;
  /** How long to keep trying the peer's control port (seconds; default 5). */
  readonly connectSeconds?: number;
  readonly onProgress?: (line: string) => void;
}

export interface PeerRunResult {
  readonly results: ScenarioResult[];
  readonly environment: RunEnvironment;
  readonly environments: { readonly A: RunEnvironment; readonly B: RunEnvironment };
  readonly frames: number;
  readonly device: DeviceDescription;
}

/** The link scenarios a device of `target` runs, by `--scenario`. */
export function peerScenarios(target: DeviceName, pattern: string | undefined): Scenario[] {
  const match = pattern === undefined ? () => true : picomatch(pattern);
  return LINK_SCENARIOS.filter((s) => s.device === target && match(s.id));
}

/** The interface the route to `host` leaves by (`ip route get`): where its traffic shows. */
function routeInterface(host: string): string {
  try {
    const routes = JSON.parse(
      execFileSync('ip', ['-j', 'route', 'get', host], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
      }),
    ) as { dev?: string }[];
    const dev = routes[0]?.dev;
    if (dev !== undefined && dev !== '') return dev;
  } catch {
    // a name ip cannot resolve, or no route: said below
  }
  throw new PeerError(`no route to ${host} (ip route get ${host})`);
}

/** `run --device <name> --peer <host>`: the requester half here, judged here. */
export async function runPeer(options: PeerRunOptions): Promise<PeerRunResult> {
  const d = probeDevice(options.device, {
    ...(options.address === undefined ? {} : { address: options.address }),
    ...(options.gidIndex === undefined ? {} : { gidIndex: options.gidIndex }),
  });
  const target = linkTargetOf(d);
  requireUsableAddress(d, target);
  const scenarios = peerScenarios(target, options.scenario);
  if (scenarios.length === 0)
    throw new ArgumentError(
      'interop',
      '--scenario',
      `no ${target === 'rxe0' ? 'RoCE' : 'iWARP'} link scenario matches ${options.scenario ?? '*'} (rdma-interop run --link --list lists them)`,
    );
  const environment = collectEnvironment([d.name], [d]);
  const { host, port } = options.peer;
  const iface = routeInterface(host);
  // This host's side of the wire: RoCEv2 (UDP 4791) and the iWARP streams, not the control.
  const tcpdump = await startTcpdump(iface, `udp port 4791 or (tcp and not port ${port})`).catch(
    (error: unknown) => {
      throw new PeerError(
        `cannot capture on ${iface} (tcpdump, as root): ${error instanceof Error ? error.message : String(error)}`,
      );
    },
  );
  const work = mkdtempSync(join(tmpdir(), 'rdma-interop-peer-'));
  let peerEnvironment: RunEnvironment | undefined;
  let pcap: Uint8Array | undefined;
  const started = performance.now();
  try {
    const out = join(work, 'observations.json');
    const place: PairPlace = {
      ...placeOf(d, { listen: '', connect: host, port }, host),
      connectMs: (options.connectSeconds ?? 5) * 1000,
      bindSource: true,
      onPeerEnvironment: (env) => {
        peerEnvironment = env;
      },
    };
    options.onProgress?.(
      `${scenarios.length} link scenarios: requester ${d.name} (${d.address}) here, responder at ${host}:${port}`,
    );
    try {
      await driveRequester(
        scenarios.map((s) => s.id),
        out,
        place,
      );
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
      throw new PeerError(
        `cannot reach the peer at ${host}:${port}: ${code} (is 'rdma-interop peer serve' running there?)`,
      );
    }
    pcap = await tcpdump.stop();
    const observed = JSON.parse(readFileSync(out, 'utf8')) as LinkObservation[];
    const refused = observed.find((o) => o.error?.startsWith('LinkRefusedError') === true);
    if (refused?.error !== undefined)
      throw new PeerError(refused.error.replace(/^LinkRefusedError: /, ''));
    const seconds = (performance.now() - started) / 1000 / Math.max(1, scenarios.length);
    const capture = decodeLinkCapture(pcap);
    const responderEnv = peerEnvironment ?? environment;
    const responderFacts = peerEnvironment?.devices[0];
    const environments = { A: environment, B: responderEnv };
    // Each result names the device it ran on (results.json `device`, its target beside it).
    const on = { name: d.name, provider: d.provider, address: d.address, gidIndex: d.gidIndex };
    const results = scenarios.map((scenario) =>
      judgeLinkScenario(
        { ...scenario, on },
        observed.find((o) => o.id === scenario.id),
        capture,
        environment,
        seconds,
        {
          environments,
          requester: 'A',
          devices: { A: d.name, B: responderFacts?.name ?? d.name },
          peers: { requester: d.address, responder: responderFacts?.address ?? host },
        },
      ),
    );
    return {
      results,
      environment,
      environments,
      frames: capture.decoded.frameCount,
      device: d,
    };
  } finally {
    if (pcap === undefined) await tcpdump.stop().catch(() => undefined);
    rmSync(work, { recursive: true, force: true });
  }
}
