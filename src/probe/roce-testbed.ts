/**
 * The RoCEv2 testbed inside the guest: a veth pair, the tester's end in its own network
 * namespace (rxe listens on UDP 4791 only in the initial namespace, kernel-runtime.md), an
 * rxe device `rxe_t` on the other end, and the tester's UDP relay (roce-relay.ts) in the
 * namespace (roce-relay.py). The device's QPs are connected by hand to the QPN, GID and PSN the tester
 * plays; their verbs resources live in this process.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { LinkType } from '../codec/pcap/linktype.js';
import { encodePcap, type PcapWriteRecord } from '../codec/pcap/pcap.js';
import { packageRoot } from '../runtime/paths.js';
import { connectRcByHand, type RcConnectParams } from '../verbs/connect.js';
import type { Cq } from '../verbs/cq.js';
import { type Context, openDevice } from '../verbs/device.js';
import type { Mr } from '../verbs/mr.js';
import type { Pd } from '../verbs/pd.js';
import type { Qp } from '../verbs/qp.js';
import {
  type DatagramOptions,
  DEVICE_ADDRESS,
  TESTER_ADDRESS,
  testerIpPacket,
} from './roce-datagram.js';

/** Names the testbed creates (idempotently). */
export const ROCE_TESTBED = {
  namespace: 'roce-tester',
  deviceNetdev: 'vroce0',
  testerNetdev: 'vroce1',
  device: 'rxe_t',
  prefix: 24,
  /**
   * An IPv4 multicast group the device's netdev joins (an `autojoin` address): rxe attaches
   * a UD QP to the group's GID but joins it only at the link layer, and IPv4 delivers a
   * multicast datagram to UDP only on an interface that joined the group (the guided fuzz's
   * multicast set-up, coverage/guided-roce-qp.ts).
   */
  multicastGroup: '239.77.3.9',
} as const;

/** The QPN the tester plays (any 24-bit value; rxe does not check that it exists). */
export const TESTER_QPN = 0x0c0ffe;

/**
 * The tester QPN a requester assertion connects the device QP `qpNum` to: one per device
 * QP, so that the tester counts only that QP's requests. Every device QP sends from the
 * same first PSN, and a QP that retransmits for ever (retry_cnt 7) has packets in flight
 * when it is destroyed: counted as the next assertion's requests, they were one or two
 * "extra transmissions" of roce-requester-rnr-retry-0 (6.1, 6.12, 7.3; 2-3 ms apart in
 * the pcaps, far less than any timer).
 */
export function requesterTesterQpn(qpNum: number): number {
  return (TESTER_QPN + 1 + qpNum) & 0xffffff;
}

function run(command: string, args: readonly string[]): string {
  return execFileSync(command, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

function tryRun(command: string, args: readonly string[]): boolean {
  try {
    run(command, args);
    return true;
  } catch {
    return false;
  }
}

/** Creates the namespace, the veth pair, the addresses and rxe_t (each only if missing). */
export function setUpRoceTestbed(): void {
  const t = ROCE_TESTBED;
  tryRun('modprobe', ['veth']);
  tryRun('modprobe', ['rdma_rxe']);
  if (!tryRun('ip', ['netns', 'exec', t.namespace, 'true']))
    run('ip', ['netns', 'add', t.namespace]);
  if (!tryRun('ip', ['link', 'show', t.deviceNetdev]))
    run('ip', [
      'link',
      'add',
      t.deviceNetdev,
      'type',
      'veth',
      'peer',
      'name',
      t.testerNetdev,
      'netns',
      t.namespace,
    ]);
  run('ip', ['addr', 'replace', `${DEVICE_ADDRESS}/${t.prefix}`, 'dev', t.deviceNetdev]);
  run('ip', ['link', 'set', t.deviceNetdev, 'up']);
  tryRun('ip', ['addr', 'replace', `${t.multicastGroup}/32`, 'dev', t.deviceNetdev, 'autojoin']);
  run('ip', [
    '-n',
    t.namespace,
    'addr',
    'replace',
    `${TESTER_ADDRESS}/${t.prefix}`,
    'dev',
    t.testerNetdev,
  ]);
  run('ip', ['-n', t.namespace, 'link', 'set', t.testerNetdev, 'up']);
  run('ip', ['-n', t.namespace, 'link', 'set', 'lo', 'up']);
  if (!existsSync(`/sys/class/infiniband/${t.device}`))
    run('rdma', ['link', 'add', t.device, 'type', 'rxe', 'netdev', t.deviceNetdev]);
}

/**
 * The relay script, with the guest's other scripts: the package ships scripts/guest/ and
 * not src/, so an installed package finds it too (it was kept beside the sources).
 */
function relayPath(): string {
  return join(packageRoot(), 'scripts', 'guest', 'roce-relay.py');
}

/** Nanoseconds since the epoch, for capture timestamps. */
const nowNs = (): bigint => BigInt(Math.round((performance.timeOrigin + performance.now()) * 1e6));

/**
 * The tester's wire: sends datagrams from the namespace and collects what comes back.
 * Every packet either way is also kept for the run's pcap (the tester sees all of them:
 * rxe_t talks only to it).
 */
export class RoceWire {
  readonly #child: ChildProcess;
  #received: Uint8Array[] = [];
  #waiters: (() => void)[] = [];
  readonly #capture: PcapWriteRecord[] = [];

  private constructor(child: ChildProcess) {
    this.#child = child;
  }

  /** Starts the relay in the tester's namespace; resolves once its socket is bound. */
  static start(): Promise<RoceWire> {
    const child = spawn(
      'ip',
      ['netns', 'exec', ROCE_TESTBED.namespace, 'python3', relayPath(), DEVICE_ADDRESS],
      { stdio: ['pipe', 'pipe', 'inherit'] },
    );
    const wire = new RoceWire(child);
    return new Promise((resolve, reject) => {
      const lines = createInterface({ input: child.stdout! });
      let ready = false;
      lines.on('line', (line) => {
        if (!ready) {
          if (line === 'ready') {
            ready = true;
            resolve(wire);
          }
          return;
        }
        const datagram = Uint8Array.from(Buffer.from(line, 'hex'));
        // The relay's UDP socket does not see the device's IPv4 header: the capture gets
        // one rebuilt around the datagram (its identification, which the ICRC covers, is
        // the tester's, so a dissector's ICRC check of these packets is not meaningful).
        wire.#capture.push({
          timestampNs: nowNs(),
          data: testerIpPacket(datagram, { source: DEVICE_ADDRESS, destination: TESTER_ADDRESS }),
        });
        wire.#received.push(datagram);
        for (const w of wire.#waiters.splice(0)) w();
      });
      child.on('exit', (code) => {
        if (!ready) reject(new Error(`the RoCE relay exited (${code}) before it was ready`));
      });
    });
  }

  /**
   * Sends one datagram (the UDP payload) to the device, in the IPv4 packet its ICRC covers;
   * `addresses` put another source or destination in that packet's header (the relay's raw
   * socket sends it as it is, routed towards the device).
   */
  send(
    datagram: Uint8Array,
    addresses: Pick<DatagramOptions, 'source' | 'destination'> = {},
  ): void {
    const packet = testerIpPacket(datagram, addresses);
    this.#capture.push({ timestampNs: nowNs(), data: packet });
    this.#child.stdin!.write(`${Buffer.from(packet).toString('hex')}\n`);
  }

  /** Writes every packet sent and received so far as a pcap (LINKTYPE_RAW: IPv4). */
  writePcap(path: string): void {
    writeFileSync(path, encodePcap({ linkType: LinkType.RAW }, this.#capture));
  }

  /** Forgets what arrived so far. */
  clear(): void {
    this.#received = [];
  }

  /**
   * Waits until `count` datagrams arrived (or `timeoutMs`), then `settleMs` more for any
   * extra one, and returns (and forgets) everything received.
   */
  async collect(count: number, timeoutMs: number, settleMs: number): Promise<Uint8Array[]> {
    const deadline = Date.now() + timeoutMs;
    while (this.#received.length < count && Date.now() < deadline) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.max(1, deadline - Date.now()));
        this.#waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    await new Promise((resolve) => setTimeout(resolve, settleMs));
    const out = this.#received;
    this.#received = [];
    return out;
  }

  close(): void {
    this.#child.stdin!.end();
    this.#child.kill();
  }
}

/** The IPv4-mapped GID of an address (RoCE v2). */
export function mappedGid(address: string): Buffer {
  const gid = Buffer.alloc(16);
  gid[10] = 0xff;
  gid[11] = 0xff;
  address.split('.').forEach((part, i) => {
    gid[12 + i] = Number(part);
  });
  return gid;
}

/** The device's verbs side: one context, PD and CQ; QPs and memory per assertion. */
export class RoceDeviceSide {
  readonly context: Context;
  readonly pd: Pd;
  readonly cq: Cq;
  readonly sgidIndex: number;

  private constructor(context: Context, pd: Pd, cq: Cq, sgidIndex: number) {
    this.context = context;
    this.pd = pd;
    this.cq = cq;
    this.sgidIndex = sgidIndex;
  }

  /** Opens rxe_t; waits up to 5 s for its IPv4 GID (rxe adds it when the address appears). */
  static async open(): Promise<RoceDeviceSide> {
    const context = openDevice(ROCE_TESTBED.device);
    try {
      let index: number | undefined;
      for (let i = 0; i < 50 && index === undefined; i++) {
        try {
          index = context.findGid({ ipv4: DEVICE_ADDRESS }).index;
        } catch {
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      }
      if (index === undefined) throw new Error(`rxe_t has no GID for ${DEVICE_ADDRESS}`);
      const pd = context.allocPd();
      const cq = context.createCq({ cqe: 64 });
      return new RoceDeviceSide(context, pd, cq, index);
    } catch (error) {
      context.close();
      throw error;
    }
  }

  /** A QP in RESET. */
  createQp(): Qp {
    return this.pd.createQp({ sendCq: this.cq });
  }

  /** Memory the tester may read, write and use atomics on. */
  allocateMemory(length: number): Mr {
    return this.pd.allocMr(length, ['LOCAL_WRITE', 'REMOTE_WRITE', 'REMOTE_READ', 'REMOTE_ATOMIC']);
  }

  /** Connects `qp` to the tester's QPN/GID/PSN (RESET -> INIT -> RTR -> RTS). */
  connect(
    qp: Qp,
    psns: { readonly tester: number; readonly device: number },
    params: Omit<RcConnectParams, 'remote' | 'localPsn' | 'sgidIndex'> = {},
    testerQpn: number = TESTER_QPN,
  ): void {
    connectRcByHand(qp, {
      ...params,
      sgidIndex: this.sgidIndex,
      remote: { qpNum: testerQpn, psn: psns.tester, gid: mappedGid(TESTER_ADDRESS) },
      localPsn: psns.device,
    });
  }

  close(): void {
    this.cq.close();
    this.pd.close();
    this.context.close();
  }
}
