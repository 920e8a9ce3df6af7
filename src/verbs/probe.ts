/**
 * Capability probing: what a device says (`ibv_query_device`) plus what it does when
 * asked (creating an extended QP, a UD QP). libibverbs has no capability bit for the
 * extended QP API (rdma-core's own tests probe it the same way), and siw's RC-only rule
 * shows only at QP creation.
 */
import type { AtomicCap, TransportType } from '../ibverbs/constants.js';
import { listDevices, openDevice } from './device.js';
import { VerbsError } from './errors.js';

/** What a device can do, as far as probing without a peer can tell. */
export interface DeviceCapabilities {
  readonly name: string;
  readonly transport: TransportType;
  readonly atomicCap: AtomicCap;
  /** `atomic_cap` is not NONE: FetchAdd / CmpSwap may be posted. */
  readonly atomics: boolean;
  readonly maxQpRdAtom: number;
  readonly maxQpInitRdAtom: number;
  /** RC QPs can be moved to RTS with `ibv_modify_qp` (InfiniBand/RoCE), not only via rdma_cm. */
  readonly connectByHand: boolean;
  /** `ibv_create_qp_ex` with send_ops_flags works (the `ibv_wr_*` path). */
  readonly extendedQp: boolean;
  /** UD QPs can be created. */
  readonly ud: boolean;
}

// Tries `create` and reports whether it worked; refusals that mean "not supported" are
// false, anything else is a real failure and propagates.
function works(create: () => { close(): void }): boolean {
  try {
    create().close();
    return true;
  } catch (e) {
    if (
      e instanceof VerbsError &&
      ['EOPNOTSUPP', 'EINVAL', 'ENOSYS', 'EPROTONOSUPPORT'].includes(e.code)
    )
      return false;
    throw e;
  }
}

/** Opens `name`, queries and probes it, and closes everything it made. */
export function probeCapabilities(name: string): DeviceCapabilities {
  using ctx = openDevice(name);
  const attr = ctx.queryDevice();
  using pd = ctx.allocPd();
  using cq = ctx.createCq({ cqe: 4, channel: false });
  const transport = listDevices().find((d) => d.name === name)?.transport ?? 'UNKNOWN';
  return {
    name,
    transport,
    atomicCap: attr.atomic,
    atomics: attr.atomic !== 'NONE',
    maxQpRdAtom: attr.maxQpRdAtom,
    maxQpInitRdAtom: attr.maxQpInitRdAtom,
    connectByHand: transport === 'InfiniBand',
    extendedQp: works(() =>
      pd.createQp({ sendCq: cq, extended: true, maxSendWr: 1, maxRecvWr: 1 }),
    ),
    ud: works(() => pd.createQp({ sendCq: cq, type: 'UD', maxSendWr: 1, maxRecvWr: 1 })),
  };
}
