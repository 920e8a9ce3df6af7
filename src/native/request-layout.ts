/**
 * The one word layout of a work request between the TS layer and the addon (native/common.h
 * send_word, recv_word, sge_word, the source of truth there): every send request (postSend,
 * prepare, prepareRoundTrip) and every receive (Qp and Srq postRecv) is packed into u32 words
 * at these indices. The addon exports its tables (`sendLayout`, `recvLayout`) and
 * test/host/verbs/constants.test.ts checks these against them.
 */

/**
 * A send request's header: u32 word indices, 64-bit fields native-endian at even indices
 * (written through a BigUint64Array at index / 2), then `numSge` SGEs of SEND_SGE_WORDS
 * words each. The objects a request names travel beside the words in a handle list:
 * `handle` is the index of its first one plus 1 (0: none), a UD destination's AH, or a
 * BIND_MW's window then the MR it binds to.
 */
export const SEND_LAYOUT = {
  wrId: 0,
  remoteAddr: 2,
  compareAdd: 4,
  swap: 6,
  atomicValue: 8,
  flushLength: 10,
  opcode: 12,
  sendFlags: 13,
  numSge: 14,
  immData: 15,
  rkey: 16,
  flushType: 17,
  flushLevel: 18,
  invalidateRkey: 19,
  bindAddr: 20,
  bindLength: 22,
  bindAccess: 24,
  bindRkey: 25,
  remoteQpn: 26,
  remoteQkey: 27,
  handle: 28,
} as const;

/** u32 words of a packed request's header (even: the next one's u64 fields stay aligned). */
export const SEND_WORDS = 30;

/** An SGE of a packed request: word indices and size. */
export const SEND_SGE_LAYOUT = { sgeAddr: 0, sgeLength: 2, sgeLkey: 3 } as const;
export const SEND_SGE_WORDS = 4;

/**
 * A receive request: its wrId (u64, native-endian) and SGE count, then `numSge` SGEs laid
 * out as SEND_SGE_LAYOUT.
 */
export const RECV_LAYOUT = { wrId: 0, numSge: 2 } as const;
/** u32 words of a packed receive's header (even: u64 fields stay 8-byte aligned). */
export const RECV_WORDS = 4;
