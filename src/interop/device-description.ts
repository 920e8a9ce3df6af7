/**
 * A device as the suite runs on it (issue 37): what it is (kernel driver, userspace
 * provider, vendor and part ids, firmware, port speed and MTU), how it is addressed (GID
 * index, GID, netdev and address) and what it offers (transport, capabilities). The kernel
 * side probes one (kernel/device-target.ts); a host test may write one by hand (an
 * mlx5-like RoCE device), and the runner (run-plan.ts) binds scenarios to it.
 */
import type { Capability, DeviceOffer, TransportFamily } from './requirements.js';

export interface DeviceDescription extends DeviceOffer {
  /** The kernel driver bound to it (`rdma_rxe`, `siw`, `mlx5_ib`, `irdma`...). */
  readonly kernelDriver: string;
  /** The userspace provider records key on (`rxe`, `siw`, `siw+rfc7306`, `mlx5`...). */
  readonly provider: string;
  readonly vendorId: number;
  readonly vendorPartId: number;
  readonly firmware: string;
  /** Port 1's active speed as ibv_devinfo prints it (`25.0 Gbps` ...), or `unknown`. */
  readonly portSpeed: string;
  /** Port 1's active MTU in bytes (256..4096), 0 when unknown. */
  readonly activeMtu: number;
  /** The netdev the device sits on (`lab0`), or empty (InfiniBand, or unknown). */
  readonly netdev: string;
  /** The address rdma_cm binds and connects to (IPv4 or IPv6 text). */
  readonly address: string;
  /** The GID index a by-hand bring-up uses (RoCE, IB). */
  readonly gidIndex: number;
  /** That GID as IPv6 text. */
  readonly gid: string;
  /** ibv_query_device's atomic_cap (`NONE`, `HCA`, `GLOB`). */
  readonly atomicCap: string;
  readonly transport: TransportFamily;
  readonly capabilities: readonly Capability[];
}

/**
 * The userspace provider (rdma-core's providers/<name>) of each kernel driver, from
 * rdma-core's providers/*\/*.c `VERBS_DRIVER_ID(RDMA_DRIVER_*)` tables and the kernel's
 * drivers/infiniband/hw/*: one source of truth for how a device's records are keyed.
 */
export const PROVIDER_OF_DRIVER: Readonly<Record<string, string>> = {
  rdma_rxe: 'rxe',
  siw: 'siw',
  mlx5_ib: 'mlx5',
  mlx5_core: 'mlx5',
  mlx4_ib: 'mlx4',
  mlx4_core: 'mlx4',
  irdma: 'irdma',
  i40iw: 'i40iw',
  iw_cxgb4: 'cxgb4',
  cxgb4: 'cxgb4',
  bnxt_re: 'bnxt_re',
  bnxt_en: 'bnxt_re',
  qedr: 'qedr',
  qede: 'qedr',
  efa: 'efa',
  hns_roce_hw_v2: 'hns',
  erdma: 'erdma',
  mana_ib: 'mana',
  vmw_pvrdma: 'vmw_pvrdma',
  ocrdma: 'ocrdma',
};

/**
 * The IBTA port speeds as ibv_devinfo names them (`active_speed` code -> Gbps per lane,
 * libibverbs/verbs.h enum ibv_port_speed / ibv_rate), times `active_width` lanes.
 */
const LANE_GBPS: Readonly<Record<number, number>> = {
  1: 2.5,
  2: 5,
  4: 10,
  8: 10.3125,
  16: 14.0625,
  32: 25.78125,
  64: 53.125,
  128: 106.25,
};
const WIDTH_LANES: Readonly<Record<number, number>> = { 1: 1, 2: 4, 4: 8, 8: 12, 16: 2 };

/** `active_speed` x `active_width` in Gbps (`25.0 Gbps`), or `unknown`. */
export function portSpeedText(activeSpeed: number, activeWidth: number): string {
  const lane = LANE_GBPS[activeSpeed];
  const lanes = WIDTH_LANES[activeWidth];
  if (lane === undefined || lanes === undefined) return 'unknown';
  return `${(lane * lanes).toFixed(1)} Gbps`;
}

/** The facts a report shows for a device (results.json `environment.devices[]`). */
export function deviceFactsOf(d: DeviceDescription) {
  return {
    kernelDriver: d.kernelDriver,
    vendorId: `0x${d.vendorId.toString(16).padStart(4, '0')}`,
    vendorPartId: d.vendorPartId,
    portSpeed: d.portSpeed,
    activeMtu: d.activeMtu,
    netdev: d.netdev,
    address: d.address,
    gidIndex: d.gidIndex,
    gid: d.gid,
    capabilities: d.capabilities.join(',') || 'none',
  };
}
