/**
 * A requester QP and a responder QP on one real device, connected to each other: by hand
 * on rxe (RoCE: INIT/RTR/RTS with the IPv4-mapped RoCE v2 GID), through rdma_cm on siw
 * (an iWARP QP reaches RTS only with an LLP socket from iw_cm, kernel-runtime.md) and on
 * rxe when a scenario asks for it (ib_cm over RoCE, to the device's own address).
 */
import { type CmId, EventChannel } from '../../verbs/cm.js';
import { connectPairByHand } from '../../verbs/connect.js';
import type { Cq } from '../../verbs/cq.js';
import { type Context, openDevice } from '../../verbs/device.js';
import { closeQuietly } from '../../verbs/lifetime.js';
import type { Access, Mr, RegisteredRange } from '../../verbs/mr.js';
import type { Pd } from '../../verbs/pd.js';
import type { Qp } from '../../verbs/qp.js';
import type { Srq } from '../../verbs/srq.js';
import type { QpCreateFlag } from '../operations.js';
import { type Connection, DEVICES, type DeviceBinding, type DeviceName } from '../scenario.js';

export interface LoopbackPair {
  readonly context: Context;
  readonly pd: Pd;
  readonly requesterCq: Cq;
  readonly responderCq: Cq;
  readonly requester: Qp;
  readonly responder: Qp;
  /** The SRQ the responder QPs receive through (`srq` asked). */
  readonly srq: Srq | undefined;
  /**
   * The second requester QP (on the requester CQ) and the second responder QP (on the
   * responder CQ and the SRQ), connected to each other (`secondPair` asked).
   */
  readonly second: { readonly requester: Qp; readonly responder: Qp } | undefined;
  /**
   * Allocates and registers addon-owned memory (pd.allocMr: all of it, or `range`), living
   * until {@link close}, which closes it after the QPs (the PD's close order). Safe on every
   * Node (regMr is not, docs/verbs.md).
   */
  allocateMemory(length: number, access: readonly Access[], range?: RegisteredRange): Mr;
  /**
   * One more requester QP connected to one more responder QP, both in this pair's PD and
   * on `cq`, brought up the way this device's pairs are (by hand, or through rdma_cm).
   * `index` keeps their PSNs distinct.
   */
  addPair(cq: Cq, index: number, extended: boolean): Promise<ExtraPair>;
  /**
   * Accepts a requester QP of another process through rdma_cm (siw): the listener's port
   * to give it, and the responder QP once it has connected.
   */
  readonly listenerPort: number | undefined;
  acceptRemote(cq: Cq): Promise<ExtraPair>;
  /**
   * Tears everything down: disconnect (both CM ends concurrently), then the roots with their
   * children (the verbs cascade, src/verbs/lifetime.ts): the event channel (CM ids, each
   * with its QP), then the context (the PD with its QPs before its memory, so that no
   * posted request still refers to it; then the CQs). Everything made on the pair's
   * context, PD or channel goes with it.
   */
  close(): Promise<void>;
}

/** A further pair of QPs; `close` disconnects (rdma_cm) and destroys both. */
export interface ExtraPair {
  readonly requester: Qp | undefined;
  readonly responder: Qp;
  close(): Promise<void>;
}

/** The resources of a pair made the same way however it connects: its PD and two CQs. */
type PairBase = Pick<LoopbackPair, 'context' | 'pd' | 'requesterCq' | 'responderCq'>;
/** The connected QPs of a pair over its base. */
type PairQps = PairBase & Pick<LoopbackPair, 'requester' | 'responder' | 'srq' | 'second'>;
/** How further QPs join a pair: the way this device's pairs connect. */
type PairJoin = Pick<LoopbackPair, 'listenerPort' | 'acceptRemote' | 'addPair'>;

function pairBase(context: Context): PairBase {
  const pd = context.allocPd();
  const requesterCq = context.createCq({ cqe: 16 });
  const responderCq = context.createCq({ cqe: 16 });
  return { context, pd, requesterCq, responderCq };
}

/** The LoopbackPair around connected resources: `roots` close in order (see `close`). */
function pairOf(
  parts: PairQps,
  join: PairJoin,
  roots: readonly (EventChannel | Context)[],
  disconnect: () => Promise<void>,
): LoopbackPair {
  return {
    ...parts,
    ...join,
    allocateMemory: (length, access, range) => parts.pd.allocMr(length, access, range),
    close: async () => {
      await disconnect().catch(() => {});
      closeQuietly(...roots);
    },
  };
}

const IRD_ORD = 4;
/** The second pair's PSNs (distinct from the first pair's and the hammer's). */
const SECOND_PSN = 0x7700;

/** How a pair is brought up. */
export interface PairOptions {
  /** An ibv_wr_* (extended) requester QP. */
  readonly extended: boolean;
  /** How the pair is brought up; default the device's (DEVICES). */
  readonly connect?: Connection;
  /**
   * IBTA 1.5 operations the extended requester QP is created for (IBV_QP_EX_WITH_ATOMIC_WRITE,
   * IBV_QP_EX_WITH_FLUSH; by-hand bring-up only); default none.
   */
  readonly placementOps?: Partial<Readonly<Record<QpCreateFlag, boolean>>>;
  /** Remote access the responder QP grants (by-hand bring-up only); default all. */
  readonly responderAccess?: readonly Access[];
  /** The requester's initiator depth (max_rd_atomic / rdma_cm initiator_depth); default 4. */
  readonly initiatorDepth?: number;
  /** The requester's rnr_retry (7 = infinite; by-hand bring-up only); default 7. */
  readonly rnrRetry?: number;
  /** The responder's min_rnr_timer (IBTA RNR timer code; by-hand only); default 12. */
  readonly minRnrTimer?: number;
  /** The requester's transport timeout (4.096 us x 2^timeout; by-hand only); default 14. */
  readonly timeout?: number;
  /** Runs once the rdma_cm listener has its port (rdma_cm only), e.g. to start a capture. */
  readonly beforeConnect?: (port: number) => Promise<void>;
  /** The responder QP receives through a shared receive queue (ibv_create_srq). */
  readonly srq?: boolean;
  /** A second requester QP connected to a second responder QP on the same SRQ. */
  readonly secondPair?: boolean;
}

/** The SRQ of a pair: enough receives for a scenario, one SGE each. */
const SRQ_SIZE = { maxWr: 16, maxSge: 1 } as const;

/** A reference target, or the device a scenario is bound to (scenario.ts). */
export type LoopbackDevice = DeviceName | DeviceBinding;

function bindingOf(device: LoopbackDevice): DeviceBinding & { readonly target?: DeviceName } {
  if (typeof device !== 'string') return device;
  const d = DEVICES[device];
  return { name: device, provider: d.provider, address: d.address, gidIndex: -1, target: device };
}

/** Connects a loopback pair on `device`. */
export async function connectLoopback(
  device: LoopbackDevice,
  options: PairOptions,
): Promise<LoopbackPair> {
  const binding = bindingOf(device);
  const connect =
    options.connect ??
    (binding.provider === 'siw' || binding.provider.startsWith('siw+') ? 'rdma-cm' : 'by-hand');
  return connect === 'by-hand'
    ? connectByHand(binding, options)
    : connectThroughCm(binding, options);
}

async function connectByHand(device: DeviceBinding, options: PairOptions): Promise<LoopbackPair> {
  const extended = options.extended;
  const context = openDevice(device.name);
  try {
    const base = pairBase(context);
    const { pd, requesterCq, responderCq } = base;
    const requester = pd.createQp({ sendCq: requesterCq, extended, ...options.placementOps });
    const srq = options.srq === true ? pd.createSrq(SRQ_SIZE) : undefined;
    const responder = pd.createQp({ sendCq: responderCq, ...(srq === undefined ? {} : { srq }) });
    // A reference target: its first RoCE v2 IPv4 GID, as before; a bound device: its GID.
    const gid =
      device.gidIndex < 0
        ? context.findGid()
        : (context.gidTable(1).find((g) => g.index === device.gidIndex) ?? context.findGid());
    connectPairByHand(requester, responder, gid, {
      maxDestRdAtomic: IRD_ORD,
      a: {
        maxRdAtomic: options.initiatorDepth ?? IRD_ORD,
        rnrRetry: options.rnrRetry ?? 7,
        ...(options.timeout === undefined ? {} : { timeout: options.timeout }),
      },
      b: {
        maxRdAtomic: IRD_ORD,
        ...(options.minRnrTimer === undefined ? {} : { minRnrTimer: options.minRnrTimer }),
        ...(options.responderAccess === undefined
          ? {}
          : { access: ['LOCAL_WRITE', ...options.responderAccess] }),
      },
    });
    let second: LoopbackPair['second'];
    if (options.secondPair === true) {
      const a = pd.createQp({ sendCq: requesterCq, extended, ...options.placementOps });
      const b = pd.createQp({ sendCq: responderCq, ...(srq === undefined ? {} : { srq }) });
      connectPairByHand(a, b, gid, {
        aPsn: SECOND_PSN,
        bPsn: SECOND_PSN + 1,
        maxRdAtomic: IRD_ORD,
        maxDestRdAtomic: IRD_ORD,
      });
      second = { requester: a, responder: b };
    }
    const join: PairJoin = {
      listenerPort: undefined,
      acceptRemote: () => Promise.reject(new RangeError('rxe pairs are connected by hand')),
      addPair: async (cq, index, extendedQp) => {
        const a = pd.createQp({ sendCq: cq, extended: extendedQp });
        const b = pd.createQp({ sendCq: cq });
        const psn = 0x100 * (index + 1);
        connectPairByHand(a, b, gid, {
          aPsn: psn,
          bPsn: psn + 1,
          maxRdAtomic: IRD_ORD,
          maxDestRdAtomic: IRD_ORD,
        });
        return {
          requester: a,
          responder: b,
          close: async () => {
            a.close();
            b.close();
          },
        };
      },
    };
    const qps = { ...base, requester, responder, srq, second };
    return pairOf(qps, join, [context], async () => {});
  } catch (error) {
    closeQuietly(context);
    throw error;
  }
}

/** libsiw implements no create_qp_ex: an extended QP on siw is a bring-up error. */
function requireExtendedQps(device: DeviceBinding, extended: boolean): void {
  if (extended && device.provider.startsWith('siw'))
    throw new Error('siw has no extended QPs (libsiw implements no create_qp_ex)');
}

async function connectThroughCm(
  device: DeviceBinding,
  options: PairOptions,
): Promise<LoopbackPair> {
  const extended = options.extended;
  const initiatorDepth = options.initiatorDepth ?? IRD_ORD;
  const beforeConnect = options.beforeConnect ?? (async () => {});
  requireExtendedQps(device, extended);
  const address = device.address;
  // The roots: the channel (its CM ids, each with its QP) and the CM's context (PD, CQs).
  const channel = new EventChannel();
  let context: Context | undefined;
  try {
    const listener = channel.createId();
    listener.bindAddr(address, 0);
    listener.listen();
    await beforeConnect(listener.localPort);
    const client = channel.createId();
    // The source too: on rxe the destination is the device's own address (loopback).
    await client.resolveAddr(address, listener.localPort, { src: address });
    await client.resolveRoute();
    context = client.context();
    const base = pairBase(context);
    const { pd, requesterCq, responderCq } = base;
    const requester = client.createQp(pd, { sendCq: requesterCq, extended });
    const srq = options.srq === true ? pd.createSrq(SRQ_SIZE) : undefined;
    const onSrq = srq === undefined ? {} : { srq };
    const connected = client.connect({ initiatorDepth, responderResources: IRD_ORD });
    const request = await listener.nextConnectRequest({ timeoutMs: 30_000 });
    const server = request.id;
    const responder = server.createQp(pd, { sendCq: responderCq, ...onSrq });
    await server.accept({ initiatorDepth: IRD_ORD, responderResources: IRD_ORD });
    await connected;
    // The second pair: one more connection to the same listener, its responder QP on the SRQ.
    const secondIds: CmId[] = [];
    let second: LoopbackPair['second'];
    if (options.secondPair === true) {
      const client2 = channel.createId();
      secondIds.push(client2);
      await client2.resolveAddr(address, listener.localPort, { src: address });
      await client2.resolveRoute();
      const a = client2.createQp(pd, { sendCq: requesterCq, extended });
      const connecting = client2.connect({ initiatorDepth, responderResources: IRD_ORD });
      const incoming = await listener.nextConnectRequest({ timeoutMs: 30_000 });
      secondIds.push(incoming.id);
      const b = incoming.id.createQp(pd, { sendCq: responderCq, ...onSrq });
      await incoming.id.accept({ initiatorDepth: IRD_ORD, responderResources: IRD_ORD });
      await connecting;
      second = { requester: a, responder: b };
    }
    // Another process may take long to start under emulation (node, the addon, rdma_cm).
    const acceptOne = async (cq: Cq, timeoutMs = 30_000): Promise<{ id: CmId; qp: Qp }> => {
      const incoming = await listener.nextConnectRequest({ timeoutMs });
      const qp = incoming.id.createQp(pd, { sendCq: cq });
      await incoming.id.accept({ initiatorDepth: IRD_ORD, responderResources: IRD_ORD });
      return { id: incoming.id, qp };
    };
    const join: PairJoin = {
      listenerPort: listener.localPort,
      acceptRemote: async (cq) => {
        const { id, qp } = await acceptOne(cq, 180_000);
        return {
          requester: undefined,
          responder: qp,
          close: async () => {
            // The other process may be gone already: bounded.
            await Promise.race([
              id.disconnect().catch(() => {}),
              new Promise((resolve) => setTimeout(resolve, 1000)),
            ]);
            id.close(); // and its QP
          },
        };
      },
      addPair: async (cq, _index, extendedQp) => {
        requireExtendedQps(device, extendedQp);
        const id = channel.createId();
        await id.resolveAddr(address, listener.localPort, { src: address });
        await id.resolveRoute();
        const a = id.createQp(pd, { sendCq: cq, extended: extendedQp });
        const connecting = id.connect({ initiatorDepth: IRD_ORD, responderResources: IRD_ORD });
        const accepted = await acceptOne(cq);
        await connecting;
        return {
          requester: a,
          responder: accepted.qp,
          close: async () => {
            await Promise.all([id.disconnect(), accepted.id.disconnect()]).catch(() => {});
            id.close(); // and its QP
            accepted.id.close();
          },
        };
      },
    };
    // Both ends at once: one after the other can stall for ~100 s (kernel-runtime.md).
    const qps = { ...base, requester, responder, srq, second };
    return pairOf(qps, join, [channel, context], async () => {
      await Promise.all([client, server, ...secondIds].map((id) => id.disconnect()));
    });
  } catch (error) {
    closeQuietly(channel, context);
    throw error;
  }
}
