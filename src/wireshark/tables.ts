/**
 * What the Wireshark plugin is generated from: the codec's own tables (header layouts,
 * opcode and AOpCode tables, Terminate codes, profiles, the ICRC's masked bytes), gathered
 * in one object so a test can generate the plugin from a changed table (a layout with an
 * extra field) and see the change in tshark's output with no edit here or in the Lua.
 */

import {
  DDP_TAGGED_LAYOUT,
  DDP_UNTAGGED_LAYOUT,
  type HeaderLayout,
  IMMEDIATE_DATA_LAYOUT,
  RDMAP_CONTROL_V2_LAYOUT,
  READ_V2_REQUEST_LAYOUT,
  SEND_IMMEDIATE_LAYOUT,
} from '../codec/iwarp/layouts.js';
import {
  ATOMIC_OPCODES,
  type AtomicOpcodeInfo,
  QUEUE_NUMBER_VARIANTS,
  type QueueNumberVariant,
  RDMAP_OPCODES,
  type RdmapFamily,
  type RdmapOpcodeInfo,
} from '../codec/iwarp/opcodes.js';
import {
  DEFAULT_IWARP_PROFILE,
  IWARP_PROFILE_SOURCES,
  IWARP_PROFILES,
  type IwarpProfile,
  PROFILE_RDMA_VERSION,
} from '../codec/iwarp/profiles.js';
import {
  TERMINATE_CODES,
  TERMINATE_ERROR_TYPES,
  TERMINATE_LAYER_NAMES,
  type TerminateCodeInfo,
  type TerminateErrorTypeInfo,
} from '../codec/iwarp/terminate-codes.js';
import { ICRC_MASKED_BYTES, ICRC_PSEUDO_LRH_LENGTH } from '../codec/roce/icrc.js';
import { ROCE_V2_UDP_PORT } from '../codec/roce/packet.js';

/** Everything the generator reads. */
export interface PluginTables {
  readonly ddpTagged: HeaderLayout;
  readonly ddpUntagged: HeaderLayout;
  /** The RDMAP control octet of RV 2 (replaces the DDP layouts' octet-1 fields when RV = 2). */
  readonly controlV2: HeaderLayout;
  /** The RDMAP header after the DDP header, per family (the opcode rows' layouts). */
  readonly headerLayouts: Readonly<Record<RdmapFamily, HeaderLayout | undefined>>;
  readonly opcodes: readonly RdmapOpcodeInfo[];
  readonly atomicOpcodes: readonly AtomicOpcodeInfo[];
  readonly queueNumberVariants: readonly QueueNumberVariant[];
  readonly profiles: readonly IwarpProfile[];
  readonly defaultProfile: IwarpProfile;
  readonly profileSources: Readonly<Record<IwarpProfile, string>>;
  readonly profileRdmaVersion: Readonly<Record<IwarpProfile, number>>;
  readonly terminateLayers: Readonly<Record<number, string>>;
  readonly terminateErrorTypes: readonly TerminateErrorTypeInfo[];
  readonly terminateCodes: readonly TerminateCodeInfo[];
  readonly icrc: {
    readonly masked: typeof ICRC_MASKED_BYTES;
    readonly pseudoLrhLength: number;
    readonly udpPort: number;
  };
}

/** Each family's header layout, from its opcode rows (every family has one). */
function familyLayouts(): Readonly<Record<RdmapFamily, HeaderLayout | undefined>> {
  const out: Partial<Record<RdmapFamily, HeaderLayout | undefined>> = {};
  for (const row of RDMAP_OPCODES) out[row.family] = row.layout;
  // opcodes.ts checks at compile time that every family has a row.
  return out as Record<RdmapFamily, HeaderLayout | undefined>;
}

/** The codec's tables as they are: the plugin `rdma-interop wireshark-plugin` prints. */
export const CODEC_TABLES: PluginTables = {
  ddpTagged: DDP_TAGGED_LAYOUT,
  ddpUntagged: DDP_UNTAGGED_LAYOUT,
  controlV2: RDMAP_CONTROL_V2_LAYOUT,
  headerLayouts: familyLayouts(),
  opcodes: RDMAP_OPCODES,
  atomicOpcodes: ATOMIC_OPCODES,
  queueNumberVariants: QUEUE_NUMBER_VARIANTS,
  profiles: IWARP_PROFILES,
  defaultProfile: DEFAULT_IWARP_PROFILE,
  profileSources: IWARP_PROFILE_SOURCES,
  profileRdmaVersion: PROFILE_RDMA_VERSION,
  terminateLayers: TERMINATE_LAYER_NAMES,
  terminateErrorTypes: TERMINATE_ERROR_TYPES,
  terminateCodes: TERMINATE_CODES,
  icrc: {
    masked: ICRC_MASKED_BYTES,
    pseudoLrhLength: ICRC_PSEUDO_LRH_LENGTH,
    udpPort: ROCE_V2_UDP_PORT,
  },
};

/**
 * The filter-name prefix of a layout whose fields tshark 4.0 has no name for (the field
 * then is `<prefix>.<field in snake case>`); a layout not listed here gets
 * `rdma_interop.<its name in snake case>`. Immediate Data (RFC 7306 §6.3) and the V2
 * Send with Immediate's last segment (V2 draft §5.3) carry the same 8 bytes: one name.
 */
export const LAYOUT_PREFIXES: ReadonlyMap<string, string> = new Map([
  [RDMAP_CONTROL_V2_LAYOUT.name, 'rdma_interop.v2'],
  [IMMEDIATE_DATA_LAYOUT.name, 'rdma_interop'],
  [SEND_IMMEDIATE_LAYOUT.name, 'rdma_interop'],
  [READ_V2_REQUEST_LAYOUT.name, 'rdma_interop.read_v2'],
]);
