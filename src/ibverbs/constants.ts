/**
 * libibverbs / librdmacm enums the verbs layer names, as data (names and values from
 * rdma-core's `libibverbs/verbs.h` and `librdmacm/rdma_cma.h`, rdma-core 44). The
 * work-request, completion, access and QP-state tables, which the engine reads too, are
 * its siblings in this folder.
 */

/** `enum ibv_transport_type`. */
export const TRANSPORT_TYPE = {
  UNKNOWN: -1,
  InfiniBand: 0,
  iWARP: 1,
  usNIC: 2,
  usNIC_UDP: 3,
  Unspecified: 4,
} as const;
/** A transport name. */
export type TransportType = keyof typeof TRANSPORT_TYPE;

/** `enum ibv_node_type`. */
export const NODE_TYPE = {
  UNKNOWN: -1,
  CA: 1,
  SWITCH: 2,
  ROUTER: 3,
  RNIC: 4,
  USNIC: 5,
  USNIC_UDP: 6,
  UNSPECIFIED: 7,
} as const;
/** A node type name. */
export type NodeType = keyof typeof NODE_TYPE;

/** `enum ibv_atomic_cap` (an enum, not a bitmask). */
export const ATOMIC_CAP = { NONE: 0, HCA: 1, GLOB: 2 } as const;
/** An atomic capability name. */
export type AtomicCap = keyof typeof ATOMIC_CAP;

/** `enum ibv_mtu`. */
export const MTU = { 256: 1, 512: 2, 1024: 3, 2048: 4, 4096: 5 } as const;
/** A path MTU in bytes. */
export type Mtu = keyof typeof MTU;

/** `enum ibv_port_state`. */
export const PORT_STATE = {
  NOP: 0,
  DOWN: 1,
  INIT: 2,
  ARMED: 3,
  ACTIVE: 4,
  ACTIVE_DEFER: 5,
} as const;
/** A port state name. */
export type PortState = keyof typeof PORT_STATE;

/** `IBV_LINK_LAYER_*`. */
export const LINK_LAYER = { UNSPECIFIED: 0, InfiniBand: 1, Ethernet: 2 } as const;
/** A link layer name. */
export type LinkLayer = keyof typeof LINK_LAYER;

/** `enum ibv_gid_type` (`IBV_GID_TYPE_*`). */
export const GID_TYPE = { IB: 0, RoCEv1: 1, RoCEv2: 2 } as const;
/** A GID type name. */
export type GidType = keyof typeof GID_TYPE;

/** `enum ibv_qp_type`. */
export const QP_TYPE = { RC: 2, UC: 3, UD: 4 } as const;
/** A QP type name. */
export type QpType = keyof typeof QP_TYPE;

/** `enum ibv_send_flags`. */
export const SEND_FLAGS = {
  FENCE: 1,
  SIGNALED: 2,
  SOLICITED: 4,
  INLINE: 8,
  IP_CSUM: 16,
} as const;
/** A send flag name. */
export type SendFlag = keyof typeof SEND_FLAGS;

/** `enum ibv_qp_create_send_ops_flags` (IBV_QP_EX_WITH_*), the ones for RC. */
export const SEND_OPS_FLAGS = {
  RDMA_WRITE: 1n << 0n,
  RDMA_WRITE_WITH_IMM: 1n << 1n,
  SEND: 1n << 2n,
  SEND_WITH_IMM: 1n << 3n,
  RDMA_READ: 1n << 4n,
  ATOMIC_CMP_AND_SWP: 1n << 5n,
  ATOMIC_FETCH_AND_ADD: 1n << 6n,
  LOCAL_INV: 1n << 7n,
  BIND_MW: 1n << 8n,
  SEND_WITH_INV: 1n << 9n,
  FLUSH: 1n << 11n,
  ATOMIC_WRITE: 1n << 12n,
} as const;

/** `enum ibv_device_cap_flags` (the 32-bit `device_cap_flags`). */
export const DEVICE_CAP_FLAGS = {
  RESIZE_MAX_WR: 1 << 0,
  BAD_PKEY_CNTR: 1 << 1,
  BAD_QKEY_CNTR: 1 << 2,
  RAW_MULTI: 1 << 3,
  AUTO_PATH_MIG: 1 << 4,
  CHANGE_PHY_PORT: 1 << 5,
  UD_AV_PORT_ENFORCE: 1 << 6,
  CURR_QP_STATE_MOD: 1 << 7,
  SHUTDOWN_PORT: 1 << 8,
  INIT_TYPE: 1 << 9,
  PORT_ACTIVE_EVENT: 1 << 10,
  SYS_IMAGE_GUID: 1 << 11,
  RC_RNR_NAK_GEN: 1 << 12,
  SRQ_RESIZE: 1 << 13,
  N_NOTIFY_CQ: 1 << 14,
  MEM_WINDOW: 1 << 17,
  UD_IP_CSUM: 1 << 18,
  XRC: 1 << 20,
  MEM_MGT_EXTENSIONS: 1 << 21,
  MEM_WINDOW_TYPE_2A: 1 << 23,
  MEM_WINDOW_TYPE_2B: 1 << 24,
  RC_IP_CSUM: 1 << 25,
  RAW_IP_CSUM: 1 << 26,
  MANAGED_FLOW_STEERING: 1 << 29,
} as const;
/** A device capability flag name. */
export type DeviceCapFlag = keyof typeof DEVICE_CAP_FLAGS;

/** `enum ibv_qp_attr_mask`: which `ibv_qp_attr` fields `ibv_modify_qp` reads. */
export const QP_ATTR_MASK = {
  STATE: 1 << 0,
  CUR_STATE: 1 << 1,
  EN_SQD_ASYNC_NOTIFY: 1 << 2,
  ACCESS_FLAGS: 1 << 3,
  PKEY_INDEX: 1 << 4,
  PORT: 1 << 5,
  QKEY: 1 << 6,
  AV: 1 << 7,
  PATH_MTU: 1 << 8,
  TIMEOUT: 1 << 9,
  RETRY_CNT: 1 << 10,
  RNR_RETRY: 1 << 11,
  RQ_PSN: 1 << 12,
  MAX_QP_RD_ATOMIC: 1 << 13,
  ALT_PATH: 1 << 14,
  MIN_RNR_TIMER: 1 << 15,
  SQ_PSN: 1 << 16,
  MAX_DEST_RD_ATOMIC: 1 << 17,
  PATH_MIG_STATE: 1 << 18,
  CAP: 1 << 19,
  DEST_QPN: 1 << 20,
} as const;
/** A QP attribute mask bit name. */
export type QpAttrMaskBit = keyof typeof QP_ATTR_MASK;

/** `enum ibv_srq_attr_mask`: which `ibv_srq_attr` fields `ibv_modify_srq` reads. */
export const SRQ_ATTR_MASK = { MAX_WR: 1 << 0, LIMIT: 1 << 1 } as const;
/** An SRQ attribute mask bit name. */
export type SrqAttrMaskBit = keyof typeof SRQ_ATTR_MASK;

/** `enum ibv_mw_type`: type 1 (bound by `ibv_bind_mw`) and type 2 (by a BIND_MW request). */
export const MW_TYPE = { 1: 1, 2: 2 } as const;
/** A memory window type. */
export type MwType = keyof typeof MW_TYPE;

/** `enum rdma_cm_event_type`. */
export const CM_EVENT = {
  ADDR_RESOLVED: 0,
  ADDR_ERROR: 1,
  ROUTE_RESOLVED: 2,
  ROUTE_ERROR: 3,
  CONNECT_REQUEST: 4,
  CONNECT_RESPONSE: 5,
  CONNECT_ERROR: 6,
  UNREACHABLE: 7,
  REJECTED: 8,
  ESTABLISHED: 9,
  DISCONNECTED: 10,
  DEVICE_REMOVAL: 11,
  MULTICAST_JOIN: 12,
  MULTICAST_ERROR: 13,
  ADDR_CHANGE: 14,
  TIMEWAIT_EXIT: 15,
} as const;
/** An rdma_cm event name. */
export type CmEventType = keyof typeof CM_EVENT;

// Reverse maps, built once per table (lookups sit on the completion hot path).
const reverseMaps = new WeakMap<object, Map<number, string>>();

/**
 * The name of `value` in `table`, or `undefined`: the reverse lookup every raw number
 * from the addon goes through, so names come from the same table as the values.
 */
export function nameOf<T extends Record<string, number>>(
  table: T,
  value: number,
): keyof T | undefined {
  let reverse = reverseMaps.get(table);
  if (reverse === undefined) {
    reverse = new Map();
    for (const [name, v] of Object.entries(table)) if (!reverse.has(v)) reverse.set(v, name);
    reverseMaps.set(table, reverse);
  }
  return reverse.get(value) as keyof T | undefined;
}

/** The names of the bits set in `mask`, from a table of single-bit flags. */
export function flagNames<T extends Record<string, number>>(table: T, mask: number): (keyof T)[] {
  const names: (keyof T)[] = [];
  for (const [name, bit] of Object.entries(table))
    if (bit !== 0 && (mask & bit) === bit) names.push(name);
  return names;
}

/** The mask of a list of flag names. */
export function flagMask<T extends Record<string, number>>(
  table: T,
  names: readonly (keyof T)[],
): number {
  let mask = 0;
  for (const name of names) mask |= table[name] as number;
  return mask;
}

/** `enum ibv_event_type`: the asynchronous events of a device context. */
export const ASYNC_EVENT = {
  CQ_ERR: 0,
  QP_FATAL: 1,
  QP_REQ_ERR: 2,
  QP_ACCESS_ERR: 3,
  COMM_EST: 4,
  SQ_DRAINED: 5,
  PATH_MIG: 6,
  PATH_MIG_ERR: 7,
  DEVICE_FATAL: 8,
  PORT_ACTIVE: 9,
  PORT_ERR: 10,
  LID_CHANGE: 11,
  PKEY_CHANGE: 12,
  SM_CHANGE: 13,
  SRQ_ERR: 14,
  SRQ_LIMIT_REACHED: 15,
  QP_LAST_WQE_REACHED: 16,
  CLIENT_REREGISTER: 17,
  GID_CHANGE: 18,
  WQ_FATAL: 19,
} as const;
/** An asynchronous event name (the C name without `IBV_EVENT_`). */
export type AsyncEventType = keyof typeof ASYNC_EVENT;

/**
 * How each table of this file spells its names in C: the prefix, and the names that
 * are not simply prefix + name (the engine's tables use `C_NAME_PREFIX`). Read by the
 * test that checks every value against the headers the addon was built with.
 */
export const C_NAMES = {
  ASYNC_EVENT: { prefix: 'IBV_EVENT_', rename: {} },
  ATOMIC_CAP: { prefix: 'IBV_ATOMIC_', rename: {} },
  CM_EVENT: { prefix: 'RDMA_CM_EVENT_', rename: {} },
  DEVICE_CAP_FLAGS: { prefix: 'IBV_DEVICE_', rename: {} },
  GID_TYPE: {
    prefix: 'IBV_GID_TYPE_',
    rename: { RoCEv1: 'IBV_GID_TYPE_ROCE_V1', RoCEv2: 'IBV_GID_TYPE_ROCE_V2' },
  },
  LINK_LAYER: {
    prefix: 'IBV_LINK_LAYER_',
    rename: { InfiniBand: 'IBV_LINK_LAYER_INFINIBAND', Ethernet: 'IBV_LINK_LAYER_ETHERNET' },
  },
  MTU: { prefix: 'IBV_MTU_', rename: {} },
  MW_TYPE: { prefix: 'IBV_MW_TYPE_', rename: {} },
  NODE_TYPE: { prefix: 'IBV_NODE_', rename: {} },
  PORT_STATE: { prefix: 'IBV_PORT_', rename: {} },
  QP_ATTR_MASK: { prefix: 'IBV_QP_', rename: {} },
  QP_TYPE: { prefix: 'IBV_QPT_', rename: {} },
  SEND_FLAGS: { prefix: 'IBV_SEND_', rename: {} },
  SEND_OPS_FLAGS: { prefix: 'IBV_QP_EX_WITH_', rename: {} },
  SRQ_ATTR_MASK: { prefix: 'IBV_SRQ_', rename: {} },
  TRANSPORT_TYPE: {
    prefix: 'IBV_TRANSPORT_',
    rename: {
      InfiniBand: 'IBV_TRANSPORT_IB',
      iWARP: 'IBV_TRANSPORT_IWARP',
      usNIC: 'IBV_TRANSPORT_USNIC',
      usNIC_UDP: 'IBV_TRANSPORT_USNIC_UDP',
      Unspecified: 'IBV_TRANSPORT_UNSPECIFIED',
    },
  },
} as const;
