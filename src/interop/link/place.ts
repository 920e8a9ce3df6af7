/**
 * Where each end of a link run is (guest.ts runs the two halves there): the guest pair's
 * rxe0 and siw0 on PAIR_LINKS, or one device of each of two hosts (src/interop/peer/).
 */
import { connect as connectTcp, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type { RunEnvironment } from '../environment.js';
import type { DeviceName } from '../scenario.js';
import { CONTROL_PORT } from './protocol.js';

/** The guests' addresses on each link (src/runtime/pair.ts PAIR_LINKS). */
export const LINK_ADDRESSES = {
  rxe0: ['192.0.2.1', '192.0.2.2'],
  siw0: ['198.51.100.1', '198.51.100.2'],
} as const;

/**
 * Where one end of a link run is: the device it opens for each target of the link
 * scenarios (`rxe0`: RoCE, connected by hand; `siw0`: iWARP, through rdma_cm), its own
 * address on each and its partner's (the responder may not know it: ''), and the control
 * connection (the responder listens on it, the requester connects to it). In a guest pair
 * (pairPlace) the devices are the guests' rxe0 and siw0 on PAIR_LINKS; across two hosts
 * (`run --peer`, `peer serve`: src/interop/peer/) one device of the host, any name.
 */
export interface PairPlace {
  readonly devices: Readonly<Record<DeviceName, string>>;
  readonly addresses: Readonly<Record<DeviceName, { readonly me: string; readonly peer: string }>>;
  /** The control connection: the address this end listens on as the responder, the one it connects to as the requester. */
  readonly control: { readonly listen: string; readonly connect: string; readonly port: number };
  /** How long the requester keeps trying to reach the control port (a guest may boot later). */
  readonly connectMs?: number;
  /** The responder: how long it waits for the requester's connection and each scenario. */
  readonly serveMs?: number;
  /**
   * The requester across two hosts: rdma_cm binds its iWARP connections to this end's
   * address (a host with several devices; two devices of one host: the route alone would
   * pick the responder's own device for a local destination).
   */
  readonly bindSource?: boolean;
  /** The responder across two hosts: its environment, sent with each `ready`. */
  readonly environment?: RunEnvironment;
  /** The requester across two hosts: told the responder's environment when it comes. */
  readonly onPeerEnvironment?: (environment: RunEnvironment) => void;
}

/** A is the first requester, B the first responder (run.ts); either serves either role. */
export function pairPlace(guest: 'A' | 'B'): PairPlace {
  const [me, peer] = guest === 'A' ? ([0, 1] as const) : ([1, 0] as const);
  return {
    devices: { rxe0: 'rxe0', siw0: 'siw0' },
    addresses: {
      rxe0: { me: LINK_ADDRESSES.rxe0[me], peer: LINK_ADDRESSES.rxe0[peer] },
      siw0: { me: LINK_ADDRESSES.siw0[me], peer: LINK_ADDRESSES.siw0[peer] },
    },
    // The responder listens on its RoCE link address; the requester connects there.
    control: {
      listen: LINK_ADDRESSES.rxe0[me],
      connect: LINK_ADDRESSES.rxe0[peer],
      port: CONTROL_PORT,
    },
  };
}

/** The responder's refusal of a scenario its device cannot serve (`peer serve` on one device). */
export class LinkRefusedError extends Error {
  override readonly name = 'LinkRefusedError';
}

/** rdma_cm's source address for the requester's connections (PairPlace bindSource). */
export function sourceOf(place: PairPlace): { src?: string } {
  return place.bindSource === true ? { src: place.addresses.siw0.me } : {};
}

/** How long guest A keeps trying to reach guest B's control port (B may boot later). */
const CONTROL_CONNECT_MS = 180_000;

/** The requester's control connection to the responder (retried until `connectMs`). */
export async function connectControl(place: PairPlace): Promise<Socket> {
  const deadline = Date.now() + (place.connectMs ?? CONTROL_CONNECT_MS);
  for (;;) {
    try {
      return await new Promise<Socket>((resolve, reject) => {
        const socket = connectTcp(place.control.port, place.control.connect);
        socket.once('connect', () => resolve(socket));
        socket.once('error', reject);
      });
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await sleep(250);
    }
  }
}
