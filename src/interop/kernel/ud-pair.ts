/**
 * The UD bring-up of a `ud` scenario (UD multicast, issue 34) on one real device: a UD
 * requester QP that sends to the scenario's multicast groups through one address handle
 * per group (the group's GID, QPN 0xFFFFFF), and two UD receiving QPs, each on a CQ of its
 * own, which the program attaches to groups (ibv_attach_mcast). All QPs reach RTS with
 * readyUd and one Q_Key.
 *
 * rxe sends to a multicast GID through the IP stack (rxe_net.c: the destination is not one
 * of its own GIDs, so no internal loopback), and its attach only adds the group's MAC to
 * the netdev's filter (rxe_mcast.c): the looped-back datagram reaches UDP port 4791 only
 * when this host has joined the IP group on that interface, which a dgram socket's
 * addMembership does here for both groups, until close (as test/kernel/verbs/
 * multicast.test.ts found).
 */
import { createSocket, type Socket } from 'node:dgram';
import { isIPv4 } from 'node:net';
import { readyUd } from '../../verbs/connect.js';
import type { Cq } from '../../verbs/cq.js';
import { type Context, openDevice } from '../../verbs/device.js';
import { closeQuietly } from '../../verbs/lifetime.js';
import type { Access, Mr, RegisteredRange } from '../../verbs/mr.js';
import { MULTICAST_QPN, mcastGidBytes } from '../../verbs/multicast.js';
import type { Ah } from '../../verbs/pd.js';
import type { Qp } from '../../verbs/qp.js';
import {
  DEVICES,
  type DeviceBinding,
  MCAST_GROUPS,
  type McastGroup,
  type RequesterQp,
} from '../scenario.js';
import type { LoopbackDevice } from './loopback.js';

/** The Q_Key every QP of the pair uses (any value both ends share; not a palindrome). */
export const UD_QKEY = 0x4d2c1b0a;

/** A receiving QP and its CQ. */
export interface UdReceiver {
  readonly qp: Qp;
  readonly cq: Cq;
}

export interface UdPair {
  readonly context: Context;
  readonly requester: Qp;
  readonly requesterCq: Cq;
  readonly receivers: Readonly<Record<RequesterQp, UdReceiver>>;
  /** The destination of a UD Send to `group` (its AH, the multicast QPN, the Q_Key). */
  destinationOf(group: McastGroup): { ah: Ah; remoteQpn: number; remoteQkey: number };
  /** 40 bytes every UD receive's GRH scatters into (not observed). */
  readonly grh: Mr;
  /** Allocates and registers addon-owned memory in the pair's PD (closed with it). */
  allocateMemory(length: number, access: readonly Access[], range?: RegisteredRange): Mr;
  close(): Promise<void>;
}

/** Each receive: the GRH, then the payload (kernel/device-side.ts). */
const MAX_RECV_SGE = 2;

function bindingOf(device: LoopbackDevice): DeviceBinding {
  if (typeof device !== 'string') return device;
  const d = DEVICES[device];
  return { name: device, provider: d.provider, address: d.address, gidIndex: -1 };
}

/** Joins both groups' IP multicast on the device's IPv4 address (see the file's comment). */
async function joinGroups(address: string): Promise<Socket | undefined> {
  if (!isIPv4(address)) return undefined;
  const socket = createSocket({ type: 'udp4', reuseAddr: true });
  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.bind(0, '0.0.0.0', () => resolve());
  });
  for (const group of Object.values(MCAST_GROUPS)) socket.addMembership(group, address);
  return socket;
}

/**
 * Brings up the UD pair on `device`. A device without UD QPs (siw: siw_create_qp accepts
 * IB_QPT_RC only) throws the VerbsError of ibv_create_qp, before anything else is joined.
 */
export async function connectUdPair(device: LoopbackDevice): Promise<UdPair> {
  const binding = bindingOf(device);
  const context = openDevice(binding.name);
  let membership: Socket | undefined;
  try {
    const pd = context.allocPd();
    const requesterCq = context.createCq({ cqe: 16 });
    const requester = pd.createQp({ sendCq: requesterCq, type: 'UD' });
    const receiverOf = (): UdReceiver => {
      const cq = context.createCq({ cqe: 16 });
      return { qp: pd.createQp({ sendCq: cq, type: 'UD', maxRecvSge: MAX_RECV_SGE }), cq };
    };
    const receivers = { first: receiverOf(), second: receiverOf() };
    for (const qp of [requester, receivers.first.qp, receivers.second.qp])
      readyUd(qp, { qkey: UD_QKEY });
    const gid =
      binding.gidIndex < 0
        ? context.findGid()
        : (context.gidTable(1).find((g) => g.index === binding.gidIndex) ?? context.findGid());
    const ahs = new Map<McastGroup, Ah>();
    for (const group of Object.keys(MCAST_GROUPS) as McastGroup[])
      ahs.set(
        group,
        pd.createAh({
          port: 1,
          grh: { dgid: mcastGidBytes(MCAST_GROUPS[group]), sgidIndex: gid.index, hopLimit: 1 },
        }),
      );
    membership = await joinGroups(binding.address);
    const grh = pd.allocMr(40, ['LOCAL_WRITE']);
    const joined = membership;
    return {
      context,
      requester,
      requesterCq,
      receivers,
      destinationOf: (group) => {
        const ah = ahs.get(group);
        if (ah === undefined) throw new RangeError(`no multicast group ${group}`);
        return { ah, remoteQpn: MULTICAST_QPN, remoteQkey: UD_QKEY };
      },
      grh,
      allocateMemory: (length, access, range) => pd.allocMr(length, access, range),
      close: async () => {
        joined?.close();
        // The QPs (detached from their groups first) with the PD's other children.
        closeQuietly(context);
      },
    };
  } catch (error) {
    membership?.close();
    closeQuietly(context);
    throw error;
  }
}
