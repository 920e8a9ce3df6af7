/** Link-layer header types (tcpdump.org LINKTYPE_* registry) this codec reads. */
export const LinkType = {
  /** LINKTYPE_ETHERNET. */
  ETHERNET: 1,
  /** LINKTYPE_RAW: raw IPv4/IPv6, no link header. */
  RAW: 101,
  /** LINKTYPE_LINUX_SLL: Linux cooked capture v1 (`tcpdump -i any`). */
  LINUX_SLL: 113,
  /** LINKTYPE_LINUX_SLL2: Linux cooked capture v2. */
  LINUX_SLL2: 276,
} as const;

/** Name of a supported link type. */
export type LinkTypeName = keyof typeof LinkType;

/** One captured packet, the common shape of pcap records and pcapng packet blocks. */
export interface CaptureRecord {
  /** Nanoseconds since the Unix epoch. */
  readonly timestampNs: bigint;
  /** The captured bytes (possibly shorter than `originalLength`). */
  readonly data: Uint8Array;
  readonly originalLength: number;
  /** The link type of the interface the packet was captured on. */
  readonly linkType: number;
  /** pcapng interface index (0 for classic pcap). */
  readonly interfaceId: number;
}
