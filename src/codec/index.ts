/**
 * `rdma-interop/codec`: wire formats, pure TypeScript, no I/O.
 *
 * The curated public surface (issue 25): every name below is one a user of the codec needs;
 * helpers of the CLI (`decode --summary`/`--fields`/`--filter`, the streaming and lazy
 * decoders behind it) and building blocks of the encoders stay inside the package, where
 * its own code imports them from their modules. test/host/package/exports.test.ts pins the
 * list, so the surface changes only on purpose.
 */

export { ArgumentError, UnknownNameError } from '../errors.js';
export {
  type CaptureDecode,
  type CaptureDecodeOptions,
  type CaptureItem,
  decodeCaptureMessages,
  type FpduItem,
  type ItemOrigin,
  type MpaFrameItem,
  type ProblemItem,
  type RoceItem,
  type RoceMessagePosition,
} from './capture/decode-capture.js';
export {
  type CaptureSummary,
  captureItemToJson,
  captureItemToText,
  captureToJson,
  captureToText,
  type PlainValue,
} from './capture/render.js';
export {
  reassembleTcp,
  type TcpConnection,
  type TcpDirection,
  type TcpEndpoint,
  type TcpGap,
  type TcpRunPiece,
  type TcpSegmentInput,
  type TcpStreamRun,
} from './capture/tcp-reassembly.js';
export { crc32c } from './crc32c.js';
export {
  type CodecLayer,
  DecodeError,
  type DecodeReason,
  type DecodeResult,
  EncodeError,
} from './errors.js';
export {
  type AtomicRequestFields,
  makeAtomicRequest,
  makeAtomicResponse,
  makeImmediateData,
  makeRdmaWrite,
  makeReadRequest,
  makeReadResponse,
  makeSend,
  makeTerminate,
  type TaggedSegmentFields,
  type TerminatedHeaders,
  type TerminateFields,
} from './iwarp/build.js';
export {
  DDP_TAGGED_HEADER_LENGTH,
  DDP_UNTAGGED_HEADER_LENGTH,
  decodeDdpSegment,
  encodeDdpSegment,
} from './iwarp/ddp.js';
export {
  ATOMIC_REQUEST_LAYOUT,
  ATOMIC_RESPONSE_LAYOUT,
  DDP_TAGGED_LAYOUT,
  DDP_UNTAGGED_LAYOUT,
  type HeaderField,
  type HeaderLayout,
  IMMEDIATE_DATA_LAYOUT,
  IWARP_LAYOUTS,
  MPA_ENHANCED_LAYOUT,
  MPA_FPDU_LAYOUT,
  MPA_FRAME_LAYOUT,
  MPA_MARKER_LAYOUT,
  RDMAP_CONTROL_V2_LAYOUT,
  READ_REQUEST_LAYOUT,
  READ_V2_REQUEST_LAYOUT,
  readHeader,
  SEND_IMMEDIATE_LAYOUT,
  TERMINATE_LAYOUT,
  tsharkFieldName,
  writeHeader,
} from './iwarp/layouts.js';
export { RdmapView } from './iwarp/lazy.js';
export type {
  AtomicRequest,
  AtomicResponse,
  ControlBits,
  DdpHeader,
  DdpPlacement,
  DdpSegment,
  ImmediateData,
  MpaCrcState,
  MpaEnhancedParameters,
  MpaFpdu,
  MpaMarker,
  MpaNegotiated,
  MpaRequestReply,
  RdmapMessage,
  RdmapMessageOf,
  RdmaReadRequest,
  RdmaReadResponse,
  RdmaWrite,
  ReadV2Request,
  ReadV2Response,
  Send,
  SendWithImmediate,
  TaggedPlacement,
  Terminate,
  UntaggedPlacement,
} from './iwarp/messages.js';
export {
  type DecodedFpdu,
  decodeFpdu,
  encodeFpdu,
  encodeFpdus,
  type FpduOptions,
  MPA_CRC_LENGTH,
  MPA_MARKER_INTERVAL,
  MPA_MAX_ULPDU_LENGTH,
  mpaPadLength,
} from './iwarp/mpa.js';
export {
  type DecodedMpaFrame,
  decodeMpaFrame,
  encodeMpaFrame,
  makeMpaFrame,
  mpaFrameKind,
} from './iwarp/mpa-frames.js';
export {
  ATOMIC_OPCODES,
  type AtomicOpcodeInfo,
  type AtomicOperationKind,
  atomicOpcodeInfo,
  atomicOpcodeOf,
  RDMAP_OPCODES,
  type RdmapFamily,
  type RdmapMessageKind,
  type RdmapOpcodeInfo,
  rdmapOpcodeInfo,
  rdmapOpcodeOf,
} from './iwarp/opcodes.js';
export {
  DEFAULT_IWARP_PROFILE,
  IWARP_PROFILES,
  type IwarpProfile,
  isIwarpProfile,
} from './iwarp/profiles.js';
export {
  decodeRdmapMessage,
  encodeRdmapMessage,
  type RdmapCodecOptions,
  type RdmapEncodeOptions,
} from './iwarp/rdmap.js';
export {
  decodeMpaStream,
  type EncodedMpaStream,
  encodeMpaStream,
  type MpaStream,
  type MpaStreamEncodeOptions,
  type MpaStreamOptions,
  negotiateMpa,
  type StreamFpdu,
} from './iwarp/stream.js';
export {
  TERMINATE_CODES,
  TERMINATE_ERROR_TYPES,
  type TerminateCodeInfo,
  type TerminateErrorTypeInfo,
  TerminateLayer,
  terminateCodeById,
  terminateCodeInfo,
  terminateErrorTypeName,
} from './iwarp/terminate-codes.js';
export {
  formatIpv4,
  formatIpv6,
  formatMac,
  parseIpv4,
  parseIpv6,
  parseMac,
} from './net/address.js';
export { buildTcpFrame, buildUdpFrame, type FrameAddressing } from './net/build.js';
export { internetChecksum } from './net/checksum.js';
export {
  decodeEthernet,
  type EthernetFields,
  type EthernetFrame,
  type EthernetHeader,
  EtherType,
  encodeEthernet,
  type VlanTag,
} from './net/ethernet.js';
export {
  type DecodedFrame,
  decodeFrame,
  type LinkLayer,
  type NetworkLayer,
  type TransportLayer,
} from './net/frame.js';
export {
  decodeIpv4,
  encodeIpv4,
  IpProtocol,
  type Ipv4Fields,
  type Ipv4Header,
  type Ipv4Packet,
} from './net/ipv4.js';
export {
  decodeIpv6,
  encodeIpv6,
  type Ipv6Fields,
  type Ipv6Header,
  type Ipv6Packet,
} from './net/ipv6.js';
export {
  decodeSll,
  decodeSll2,
  encodeSll,
  encodeSll2,
  type SllFrame,
  type SllHeader,
} from './net/sll.js';
export {
  decodeTcp,
  encodeTcp,
  type TcpFields,
  TcpFlag,
  type TcpHeader,
  type TcpOption,
  type TcpSegment,
} from './net/tcp.js';
export {
  decodeUdp,
  encodeUdp,
  type UdpDatagram,
  type UdpFields,
  type UdpHeader,
} from './net/udp.js';
export { type CaptureFile, decodeCapture } from './pcap/capture.js';
export { type CaptureRecord, LinkType, type LinkTypeName } from './pcap/linktype.js';
export {
  decodePcap,
  encodePcap,
  isPcap,
  type PcapFile,
  type PcapWriteOptions,
  type PcapWriteRecord,
} from './pcap/pcap.js';
export {
  decodePcapng,
  encodePcapng,
  isPcapng,
  type PcapngFile,
  type PcapngInterface,
  type PcapngWriteOptions,
  type PcapngWriteRecord,
} from './pcap/pcapng.js';
export {
  AethNakCode,
  type AethNakCodeName,
  type AethSyndrome,
  AethSyndromeKind,
  type AethSyndromeKindName,
  aethNakCodeName,
  decodeAethSyndrome,
  describeAethSyndrome,
  encodeAethSyndrome,
  RNR_TIMER_MICROSECONDS,
} from './roce/aeth.js';
export {
  BTH_LENGTH,
  type Bth,
  type BthFields,
  decodeBth,
  encodeBth,
  makeBth,
  validateBth,
} from './roce/bth.js';
export { buildRoceFrame } from './roce/frame.js';
export {
  type Aeth,
  type AtomicAckEth,
  type AtomicEth,
  type Deth,
  decodeExtensionHeader,
  EXTENSION_HEADER_LAYOUT,
  type ExtensionHeaders,
  type ExtensionHeaderValue,
  type Feth,
  type FieldLayout,
  type Ieth,
  type ImmDt,
  type Rdeth,
  type Reth,
  type Xrceth,
} from './roce/headers.js';
export { checkRoceIcrc, computeRoceIcrc, type IcrcCheck } from './roce/icrc.js';
export { RoceView } from './roce/lazy.js';
export {
  BTH_OPCODES,
  BthOpcode,
  type BthOpcodeInfo,
  type BthOpcodeName,
  bthOpcodeByName,
  bthOpcodeInfo,
  type ExtensionHeader,
  type PacketPosition,
  type TransportService,
} from './roce/opcodes.js';
export {
  decodeRocePacket,
  encodeRocePacket,
  ICRC_LENGTH,
  ROCE_V2_UDP_PORT,
  type RocePacket,
  type RocePacketFields,
} from './roce/packet.js';
