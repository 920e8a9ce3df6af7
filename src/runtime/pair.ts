/**
 * Two guests joined by a real (emulated) Ethernet link, so that RoCEv2 frames leave rxe
 * and cross a netdev: rxe delivers between QPs of one guest internally and never puts a
 * frame on a wire (kernel-runtime.md). Each guest gets two virtio-net NICs, one per soft
 * device (rdma_cm picks the device by the netdev of the address), joined pairwise by a
 * QEMU UDP socket netdev (`-netdev socket,udp=...,localaddr=...`; the TCP mode adds
 * ~22 ms stalls). Guest A's side of each link is recorded by QEMU's own `filter-dump`
 * into a pcap on the host: no capture tool runs in the guests, and the file holds the
 * frames exactly as they crossed the link (both directions).
 *
 * Both QEMUs are ended by pid (bootGuest kills its child) on every path: a guest that fails
 * or exits non-zero aborts the other, the caller's signal aborts both, and each run
 * directory is removed by bootGuest.
 */
import { createSocket } from 'node:dgram';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { GuestAssets } from './assets.js';
import { GuestRuntimeError } from './errors.js';
import { type LinkFaultCounts, LinkRelay } from './faults/relay.js';
import type { FaultSpec } from './faults/spec.js';
import { type Accelerator, chooseAccelerator } from './kvm.js';
import { cacheRoot, packageRoot } from './paths.js';
import { type BootResult, bootGuest } from './qemu.js';
import { cleanupStaleRuns } from './run-dir.js';

/** One link of the pair: a subnet from RFC 5737 and the soft device that rides on it. */
export interface PairLink {
  /** Device name in both guests (`rxe0`, `siw0`). */
  readonly device: string;
  readonly type: 'rxe' | 'siw';
  /** The two guests' addresses (A, B) with their prefix, e.g. `192.0.2.1/24`. */
  readonly addresses: readonly [string, string];
}

/** The pair's links: RoCEv2 on TEST-NET-1, iWARP (siw over TCP) on TEST-NET-2. */
export const PAIR_LINKS: readonly PairLink[] = [
  { device: 'rxe0', type: 'rxe', addresses: ['192.0.2.1/24', '192.0.2.2/24'] },
  { device: 'siw0', type: 'siw', addresses: ['198.51.100.1/24', '198.51.100.2/24'] },
];

/** The address without its prefix. */
export function linkAddress(link: PairLink, guest: 0 | 1): string {
  return link.addresses[guest].split('/')[0] ?? '';
}

export interface GuestPairOptions {
  readonly assets: GuestAssets;
  readonly accel: Accelerator | 'auto';
  /** Guest A's command (the side that drives); guest B's (the side that serves). */
  readonly commands: readonly [readonly string[], readonly string[]];
  readonly cwd: string;
  readonly timeoutSeconds: number;
  /** Writable directory both guests mount at the same path. */
  readonly shareDir: string;
  /** Where the link captures go: `<device>.pcap` per link (guest A's NIC). */
  readonly captureDir: string;
  readonly env: Readonly<Record<string, string>>;
  /** Guest B's own kernel and environment (a mixed pair); default: A's `assets` and `env`. */
  readonly peer?: { readonly assets: GuestAssets; readonly env: Readonly<Record<string, string>> };
  readonly memoryMiB?: number;
  readonly cpus?: number;
  readonly onOutput?: (guest: 0 | 1, chunk: Buffer) => void;
  readonly onErrorOutput?: (guest: 0 | 1, chunk: Buffer) => void;
  readonly onProgress?: (line: string) => void;
  readonly signal?: AbortSignal;
  /**
   * Faults on every link: the frames then cross a relay in this process (faults/relay.ts)
   * instead of going straight from one QEMU to the other, and each link is captured on
   * both sides of the relay (`<device>.pcap` at A, `<device>.b.pcap` at B).
   */
  readonly faults?: FaultSpec;
  /** TCP ports whose segments the relay never changes the payload of (the control channel). */
  readonly spareTcpPorts?: readonly number[];
}

export interface GuestPairResult {
  readonly guests: readonly [BootResult, BootResult];
  /** The capture of each link, by device name (guest A's side). */
  readonly captures: Readonly<Record<string, string>>;
  /** With `faults`: guest B's side of each link, by device name. */
  readonly capturesB?: Readonly<Record<string, string>>;
  /** With `faults`: what the relay did on each link, by device name. */
  readonly faults?: Readonly<Record<string, LinkFaultCounts>>;
}

/**
 * How long the other guest may take to finish once one has exited non-zero (its partner
 * is gone, so it can only be finishing what it already had).
 */
const PARTNER_GRACE_MS = 5_000;

/** A UDP port free right now on 127.0.0.1 (QEMU binds it moments later). */
async function freeUdpPort(): Promise<number> {
  const socket = createSocket('udp4');
  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.bind(0, '127.0.0.1', () => resolve());
  });
  const { port } = socket.address();
  await new Promise<void>((resolve) => socket.close(() => resolve()));
  return port;
}

/** A locally administered MAC for `guest`'s NIC on link `index`. */
function macOf(index: number, guest: 0 | 1): string {
  return `52:54:00:0a:${index.toString(16).padStart(2, '0')}:0${guest + 1}`;
}

/**
 * Boots guests A and B at once, runs one command in each with the link devices up
 * (scripts/guest/link-up.sh), and resolves when both have exited. Rejects (after both
 * QEMUs are gone) when either guest fails to boot or to finish.
 */
export async function runGuestPair(options: GuestPairOptions): Promise<GuestPairResult> {
  const progress = options.onProgress ?? (() => {});
  // A run killed too hard to clean up (SIGKILL) left its directory and maybe a QEMU.
  const stale = await cleanupStaleRuns(cacheRoot());
  for (const dir of stale.removed) progress(`removed the directory of a dead run: ${dir}`);
  if (stale.killed.length > 0)
    progress(`killed QEMU left by a dead run: pid ${stale.killed.join(', ')}`);
  mkdirSync(options.captureDir, { recursive: true });
  mkdirSync(options.shareDir, { recursive: true });
  const ports = await Promise.all(PAIR_LINKS.flatMap(() => [freeUdpPort(), freeUdpPort()]));
  const relays: LinkRelay[] = [];
  try {
    if (options.faults !== undefined)
      for (const [index] of PAIR_LINKS.entries())
        relays.push(
          await LinkRelay.open(
            options.faults,
            index,
            [ports[2 * index] ?? 0, ports[2 * index + 1] ?? 0],
            options.spareTcpPorts,
          ),
        );
    const result = await runPair(options, ports, relays, progress);
    if (relays.length === 0) return result;
    return {
      ...result,
      faults: Object.fromEntries(
        PAIR_LINKS.flatMap((link, i) => {
          const relay = relays[i];
          return relay === undefined ? [] : [[link.device, relay.counts()]];
        }),
      ),
    };
  } finally {
    for (const relay of relays) await relay.close();
  }
}

async function runPair(
  options: GuestPairOptions,
  ports: readonly number[],
  relays: readonly LinkRelay[],
  progress: (line: string) => void,
): Promise<GuestPairResult> {
  const captures: Record<string, string> = {};
  const capturesB: Record<string, string> = {};
  const qemuArgs = (guest: 0 | 1): string[] =>
    PAIR_LINKS.flatMap((link, index) => {
      const mine = ports[2 * index + guest] ?? 0;
      // With a relay, each guest sends to the relay's socket that faces it.
      const theirs = relays[index]?.ports[guest] ?? ports[2 * index + (1 - guest)] ?? 0;
      const netdev = `link${index}`;
      const args = [
        '-netdev',
        `socket,id=${netdev},udp=127.0.0.1:${theirs},localaddr=127.0.0.1:${mine}`,
        '-device',
        `virtio-net-pci,netdev=${netdev},mac=${macOf(index, guest)}`,
      ];
      if (guest === 0) {
        const file = join(options.captureDir, `${link.device}.pcap`);
        captures[link.device] = file;
        args.push('-object', `filter-dump,id=dump${index},netdev=${netdev},file=${file}`);
      } else if (relays[index] !== undefined) {
        const file = join(options.captureDir, `${link.device}.b.pcap`);
        capturesB[link.device] = file;
        args.push('-object', `filter-dump,id=dump${index},netdev=${netdev},file=${file}`);
      }
      return args;
    });
  const linkEnv = (guest: 0 | 1): string =>
    PAIR_LINKS.map(
      (link, index) =>
        `${macOf(index, guest)},${link.addresses[guest]},${link.device},${link.type}`,
    ).join(' ');

  let accel: Accelerator;
  if (options.accel === 'auto') {
    const choice = await chooseAccelerator(options.assets, async (candidate) => {
      progress(`probing ${candidate} with a short boot (cached afterwards)`);
      try {
        const probe = await bootGuest({
          assets: options.assets,
          accel: candidate,
          command: [],
          cwd: options.cwd,
          timeoutMs: 25_000,
          memoryMiB: 512,
          cpus: 1,
          env: {},
          probe: true,
        });
        return { ok: probe.exitCode === 0, detail: `${candidate} probe exit ${probe.exitCode}` };
      } catch (error) {
        return { ok: false, detail: error instanceof Error ? error.message : String(error) };
      }
    });
    accel = choice.accel;
  } else {
    accel = options.accel;
  }

  // One controller stops both: the caller's signal, or the partner's failure.
  const controller = new AbortController();
  const onCallerAbort = () => controller.abort(options.signal?.reason);
  if (options.signal?.aborted) onCallerAbort();
  options.signal?.addEventListener('abort', onCallerAbort, { once: true });
  let graceTimer: NodeJS.Timeout | undefined;
  const stopPartner = (guest: 0 | 1, why: string) => {
    if (controller.signal.aborted) return;
    progress(`guest ${'AB'[guest]} ${why}: stopping guest ${'AB'[1 - guest]}`);
    controller.abort(new Error(`guest ${'AB'[guest]} ${why}`));
  };
  const boot = (guest: 0 | 1): Promise<BootResult> =>
    bootGuest({
      assets: guest === 1 && options.peer ? options.peer.assets : options.assets,
      accel,
      command: [join(packageRoot(), 'scripts', 'guest', 'link-up.sh'), ...options.commands[guest]],
      cwd: options.cwd,
      timeoutMs: options.timeoutSeconds * 1000,
      memoryMiB: options.memoryMiB ?? 1024,
      cpus: options.cpus ?? 1,
      env: {
        ...(guest === 1 && options.peer ? options.peer.env : options.env),
        RDMA_INTEROP_LINK: linkEnv(guest),
        RDMA_INTEROP_PAIR_GUEST: 'AB'[guest] ?? '',
      },
      shareDir: options.shareDir,
      signal: controller.signal,
      extraQemuArgs: qemuArgs(guest),
      onGuestLog: (line) => progress(`[${'AB'[guest]}] ${line}`),
      ...(options.onOutput ? { onOutput: (c: Buffer) => options.onOutput?.(guest, c) } : {}),
      ...(options.onErrorOutput
        ? { onErrorOutput: (c: Buffer) => options.onErrorOutput?.(guest, c) }
        : {}),
    }).then(
      (result) => {
        if (result.exitCode !== 0 && graceTimer === undefined) {
          // The partner may be waiting for this guest forever: give it a moment, then stop it.
          graceTimer = setTimeout(
            () => stopPartner(guest, `exited ${result.exitCode}`),
            PARTNER_GRACE_MS,
          );
        }
        return result;
      },
      (error: unknown) => {
        stopPartner(guest, 'failed');
        throw error;
      },
    );
  progress(
    `booting a guest pair under ${accel} (links: ${PAIR_LINKS.map((l) => l.device).join(', ')})`,
  );
  const settled = await Promise.allSettled([boot(0), boot(1)]);
  clearTimeout(graceTimer);
  options.signal?.removeEventListener('abort', onCallerAbort);
  const [a, b] = settled;
  const exited = settled.flatMap((s, g) =>
    s.status === 'fulfilled' && s.value.exitCode !== 0
      ? [`guest ${'AB'[g]} exited ${s.value.exitCode}`]
      : [],
  );
  if (exited.length > 0 && (a.status === 'rejected' || b.status === 'rejected'))
    // A guest that exited non-zero is the cause; the partner's `aborted` its consequence.
    throw new GuestRuntimeError('partner-failed', `${exited.join('; ')}; its partner was stopped`);
  if (a.status === 'rejected' || b.status === 'rejected') {
    // The first failure is the cause; the partner's `aborted` is its consequence.
    const failures = settled.flatMap((s) => (s.status === 'rejected' ? [s.reason] : []));
    const cause =
      failures.find((f) => !(f instanceof GuestRuntimeError && f.failure === 'aborted')) ??
      failures[0];
    throw cause;
  }
  return {
    guests: [a.value, b.value],
    captures,
    ...(relays.length === 0 ? {} : { capturesB }),
  };
}
