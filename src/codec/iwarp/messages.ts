/**
 * The typed message model of the iWARP codec: DDP segments (RFC 5041), RDMAP messages
 * (RFC 5040, RFC 7306, draft-wood-storm-rdmap-ext-v2-00) and MPA frames (RFC 5044,
 * RFC 6581). Plain readonly objects: bigint for 64-bit fields, number for fields of
 * 32 bits or less, Uint8Array for payloads. Each RDMAP message value describes ONE DDP
 * segment (one FPDU), so a multi-segment message is a sequence of values whose `ddp`
 * placement fields differ.
 *
 * Reserved bits are kept as fields so that `encode(decode(bytes))` reproduces the bytes;
 * the `make*` helpers in `build.ts` fill them with their transmit values.
 */
import type {
  DDP_TAGGED_LAYOUT,
  DDP_UNTAGGED_LAYOUT,
  HeaderLayout,
  LayoutValue,
} from './layouts.js';
import type { RdmapFamily, RdmapMessageKind, RdmapOpcodeRow } from './opcodes.js';

// ---------------------------------------------------------------------------------------
// DDP (RFC 5041)

/** Tagged buffer placement fields of a DDP header (RFC 5041 §4.2). */
export interface TaggedPlacement
  extends Pick<LayoutValue<typeof DDP_TAGGED_LAYOUT>, 'last' | 'stag' | 'taggedOffset'> {
  readonly tagged: true;
}

/** Untagged buffer placement fields of a DDP header (RFC 5041 §4.3). */
export interface UntaggedPlacement
  extends Pick<
    LayoutValue<typeof DDP_UNTAGGED_LAYOUT>,
    'last' | 'queueNumber' | 'messageSequenceNumber' | 'messageOffset'
  > {
  readonly tagged: false;
}

/** Either placement. */
export type DdpPlacement = TaggedPlacement | UntaggedPlacement;

/** The bits of the DDP and RDMAP control fields that are not placement or opcode. */
export interface ControlBits {
  /** DDP Control Resrv, 4 bits (RFC 5041 §4.1: zero on transmit, ignored on receive). */
  readonly ddpReserved: number;
  /** DDP Version DV, 2 bits (RFC 5041 §4.1: 01b). */
  readonly ddpVersion: number;
  /** RDMAP Version RV, 2 bits (RFC 5040 §4.2: 01b; V2 draft: 10b). */
  readonly rdmaVersion: number;
  /** RDMAP Control Rsv, 2 bits (RV 1) or 1 bit (RV 2). */
  readonly rdmapReserved: number;
}

/** A DDP header as DDP sees it; RsvdULP is opaque (8 bits tagged, 40 bits untagged). */
export type DdpHeader =
  | (TaggedPlacement & {
      readonly ddpReserved: number;
      readonly ddpVersion: number;
      /** RsvdULP, 8 bits (holds the RDMAP control field). */
      readonly rsvdUlp: number;
    })
  | (UntaggedPlacement & {
      readonly ddpReserved: number;
      readonly ddpVersion: number;
      /** RsvdULP, 40 bits (RDMAP control field and Invalidate STag). */
      readonly rsvdUlp: number;
    });

/** One DDP segment: header plus the bytes after it (the ULP's header and payload). */
export interface DdpSegment {
  readonly header: DdpHeader;
  readonly payload: Uint8Array;
}

// ---------------------------------------------------------------------------------------
// RDMAP messages. Each message type is one family of the opcode table (opcodes.ts): its
// kinds are the family's rows and its header fields those of the family's layout
// (layouts.ts), so neither is written twice.

/** The kinds of the opcodes of family `F`. */
export type KindOf<F extends RdmapFamily> = Extract<RdmapOpcodeRow, { readonly family: F }>['kind'];

/** The header fields of family `F`: its layout's, none when it has no RDMAP header. */
export type HeaderFieldsOf<F extends RdmapFamily> = LayoutValue<
  Extract<
    Exclude<Extract<RdmapOpcodeRow, { readonly family: F }>['layout'], undefined>,
    HeaderLayout
  >
>;

interface TaggedBase {
  readonly ddp: TaggedPlacement;
  readonly control: ControlBits;
}

interface UntaggedBase {
  readonly ddp: UntaggedPlacement;
  readonly control: ControlBits;
  /**
   * Invalidate STag (second part of the untagged RsvdULP, RFC 5040 §4.2). Meaningful for
   * the invalidate variants; "set to zero by the sender, ignored by the receiver" otherwise
   * (RFC 7306 §4.1), kept for exact round trips.
   */
  readonly invalidateSTag: number;
}

/** RDMA Write, opcode 0x0 (RFC 5040 §4.3). Tagged. */
export interface RdmaWrite extends TaggedBase {
  readonly kind: KindOf<'write'>;
  readonly payload: Uint8Array;
}

/** RDMA Read Request, opcode 0x1, QN 1 (RFC 5040 §4.4; fields: `READ_REQUEST_LAYOUT`). */
export interface RdmaReadRequest extends UntaggedBase, HeaderFieldsOf<'read-request'> {
  readonly kind: KindOf<'read-request'>;
}

/** RDMA Read Response, opcode 0x2 (RFC 5040 §4.3). Tagged. */
export interface RdmaReadResponse extends TaggedBase {
  readonly kind: KindOf<'read-response'>;
  readonly payload: Uint8Array;
}

/** Send variants, opcodes 0x3-0x6, QN 0 (RFC 5040 §4.3). */
export interface Send extends UntaggedBase {
  readonly kind: KindOf<'send'>;
  readonly payload: Uint8Array;
}

/**
 * Terminate, opcode 0x7, QN 2 (RFC 5040 §4.8; the fixed part's fields: `TERMINATE_LAYOUT`),
 * and its variable tail.
 */
export interface Terminate extends UntaggedBase, HeaderFieldsOf<'terminate'> {
  readonly kind: KindOf<'terminate'>;
  /**
   * DDP Segment Length (16 bits, the MPA ULPDU Length of the terminated segment); present
   * on the wire together with the terminated DDP header (D bit), else undefined.
   */
  readonly ddpSegmentLength: number | undefined;
  /** The copied DDP header (14 bytes tagged, 18 untagged) when D is set, else undefined. */
  readonly terminatedDdpHeader: Uint8Array | undefined;
  /** The copied RDMA header (e.g. 28-byte Read Request header) when R is set. */
  readonly terminatedRdmaHeader: Uint8Array | undefined;
}

/** Immediate Data 0x8 / Immediate Data with SE 0x9, QN 0 (RFC 7306 §6.3: 8 bytes, big-endian). */
export interface ImmediateData extends UntaggedBase, HeaderFieldsOf<'immediate-data'> {
  readonly kind: KindOf<'immediate-data'>;
}

/**
 * Atomic Request 0xA, QN 1 (RFC 7306 §5.2.1, Figure 4: 52-byte header, `ATOMIC_REQUEST_LAYOUT`).
 * Add Data / Mask are the Swap Data / Mask for Swap and CmpSwap; unused masks are all ones.
 */
export interface AtomicRequest extends UntaggedBase, HeaderFieldsOf<'atomic-request'> {
  readonly kind: KindOf<'atomic-request'>;
}

/** Atomic Response 0xB, QN 3 (RFC 7306 §5.2.2, Figure 5). */
export interface AtomicResponse extends UntaggedBase, HeaderFieldsOf<'atomic-response'> {
  readonly kind: KindOf<'atomic-response'>;
}

/** RDMA Read V2 Request 0x11, QN 1 (draft-wood-storm-rdmap-ext-v2-00 §6.1). */
export interface ReadV2Request extends UntaggedBase, HeaderFieldsOf<'read-v2-request'> {
  readonly kind: KindOf<'read-v2-request'>;
}

/** RDMA Read V2 Response 0x12, QN 3 (draft-wood-storm-rdmap-ext-v2-00 §6.2). */
export interface ReadV2Response extends UntaggedBase {
  readonly kind: KindOf<'read-v2-response'>;
  readonly payload: Uint8Array;
}

/**
 * Send with Immediate Data variants 0x13-0x16, QN 0 (draft-wood-storm-rdmap-ext-v2-00
 * §5.3): a segment with L = 0 carries payload only; the segment with L = 1 carries the
 * 8 bytes of immediate data and nothing else.
 */
export interface SendWithImmediate extends UntaggedBase {
  readonly kind: KindOf<'send-immediate'>;
  /** ULP payload (only when `ddp.last` is false; empty otherwise). */
  readonly payload: Uint8Array;
  /** The immediate data (only when `ddp.last` is true; undefined otherwise). */
  readonly immediateData: HeaderFieldsOf<'send-immediate'>['immediateData'] | undefined;
}

/** Every RDMAP message (one DDP segment each). Discriminated by `kind`. */
export type RdmapMessage =
  | RdmaWrite
  | RdmaReadRequest
  | RdmaReadResponse
  | Send
  | Terminate
  | ImmediateData
  | AtomicRequest
  | AtomicResponse
  | ReadV2Request
  | ReadV2Response
  | SendWithImmediate;

/** The message type of a given kind. */
export type RdmapMessageOf<K extends RdmapMessageKind> = Extract<RdmapMessage, { kind: K }>;

/** The message type of a family. */
export type RdmapMessageOfFamily<F extends RdmapFamily> = RdmapMessageOf<KindOf<F>>;

// ---------------------------------------------------------------------------------------
// MPA (RFC 5044, RFC 6581)

/** RFC 6581 §5 enhanced connection parameters (first 4 bytes of the private data). */
export interface MpaEnhancedParameters {
  /** IRD, 14 bits. */
  readonly ird: number;
  /** ORD, 14 bits. */
  readonly ord: number;
  /** A bit (IRD word): peer-to-peer (ready-to-receive) model. */
  readonly peerToPeer: boolean;
  /** B bit (IRD word): zero-length Send (FPDU) is an acceptable RTR message. */
  readonly sendRtr: boolean;
  /** C bit (ORD word): zero-length RDMA Write is an acceptable RTR message. */
  readonly writeRtr: boolean;
  /** D bit (ORD word): zero-length RDMA Read is an acceptable RTR message. */
  readonly readRtr: boolean;
}

/** An MPA Request or Reply frame (RFC 5044 §7.1; RFC 6581 §5 for revision 2). */
export interface MpaRequestReply {
  readonly kind: 'mpa-request' | 'mpa-reply';
  /** M: markers wanted by the sender (Request) / in use (Reply). */
  readonly markers: boolean;
  /** C: CRC wanted / in use. */
  readonly crc: boolean;
  /** R: reject (Reply only; zero in a Request). */
  readonly reject: boolean;
  /** RFC 6581 enhanced-mode bit (revision 2 only). */
  readonly enhanced: boolean;
  /** The remaining 4 reserved bits of the flags byte. */
  readonly reserved: number;
  /** Rev, 8 bits: 1 (RFC 5044) or 2 (RFC 6581). */
  readonly revision: number;
  /**
   * The ULP's private data. When `enhancedParameters` is present (revision 2 with the
   * enhanced bit) the wire's Private Data is those 4 bytes followed by this.
   */
  readonly privateData: Uint8Array;
  /** RFC 6581 parameters: present exactly when revision is 2 and `enhanced` is set. */
  readonly enhancedParameters: MpaEnhancedParameters | undefined;
}

/** A marker found in (or put into) an MPA stream (RFC 5044 §5). */
export interface MpaMarker {
  /** Byte offset of the marker in the bytes handed to the decoder. */
  readonly offset: number;
  /** The 16 reserved bits (zero on transmit). */
  readonly reserved: number;
  /** FPDUPTR: octets from the start of the FPDU back to this marker. */
  readonly fpduPointer: number;
}

/** CRC state of a received FPDU. */
export type MpaCrcState = 'valid' | 'invalid' | 'not-in-use';

/** One FPDU (RFC 5044 §4): markers already removed. */
export interface MpaFpdu {
  /** ULPDU Length, 16 bits. */
  readonly ulpduLength: number;
  /** The ULPDU (a DDP segment). */
  readonly ulpdu: Uint8Array;
  /** Pad bytes as received (0-3 bytes, zero on transmit). */
  readonly pad: Uint8Array;
  /**
   * The CRC field's 4 bytes read in network order (as Wireshark's iwarp_mpa.crc_check
   * shows it). MPA sends the CRC32c least significant byte first (iSCSI convention), so
   * the CRC32c value is this byte-swapped: see `crcFieldValue`.
   */
  readonly crc: number;
}

/** The MPA settings of one direction after negotiation (RFC 5044 §7.1). */
export interface MpaNegotiated {
  readonly markers: boolean;
  readonly crc: boolean;
}
