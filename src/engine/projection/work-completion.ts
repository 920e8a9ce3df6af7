/** A work completion as a verbs consumer sees it (`struct ibv_wc`), in table names. */
import { requireInteger } from '../../arguments.js';
import type { QpState } from '../../ibverbs/qp-state.js';
import type { WcFlag, WcOpcode } from '../../ibverbs/wc-opcode.js';
import type { WcStatus } from '../../ibverbs/wc-status.js';

/** The 32-bit immediate in both forms a program meets. */
export interface ImmediateValue {
  /** `ntohl(wc.imm_data)`: the value the sender put in. */
  readonly host: number;
  /**
   * `wc.imm_data` as the raw field reads on a little-endian host (the field is __be32,
   * so this is the byte-swapped value).
   */
  readonly network: number;
}

/** One `ibv_wc`. */
export interface WorkCompletion {
  readonly wrId: bigint;
  readonly status: WcStatus;
  /**
   * `wc.opcode`; undefined for error completions, where libibverbs leaves it undefined
   * (ibv_poll_cq(3): only wr_id, status, qp_num and vendor_err are valid on error).
   */
  readonly opcode: WcOpcode | undefined;
  readonly byteLen: number;
  readonly immData: ImmediateValue | undefined;
  readonly flags: readonly WcFlag[];
  /** For atomics: the Original Remote Data Value placed in the local buffer. */
  readonly atomicOriginal?: bigint;
  /** For receives: the bytes placed. */
  readonly data?: Uint8Array;
  /**
   * For receives: the message asked for a Solicited Event (BTH SE, IBTA 9.2.3; RDMAP Send
   * with SE, RFC 5040 §5.3), so a CQ armed for solicited completions only signals it
   * (IBTA 1.5 §11.4.2.2). Not an ibv_wc field: what the CQ's event shows.
   */
  readonly solicited?: true;
  /**
   * For a receive of a Send with Invalidate (flag WITH_INV): the STag it invalidated
   * (ibv_wc.invalidated_rkey; IBTA 1.5 §11.4.2.1, RFC 5040 §5.3).
   */
  readonly invalidatedRkey?: number;
}

/** What one side sees after a scenario: its completions in poll order and its QP state. */
export interface SideOutcome {
  readonly completions: readonly WorkCompletion[];
  readonly qpState: QpState;
}

/** Both forms of a 32-bit immediate given its host value. */
export function immediateValue(host: number): ImmediateValue {
  requireInteger('engine', 'host', host, 0, 0xffff_ffff);
  const h = host >>> 0;
  const network =
    (((h & 0xff) << 24) | ((h & 0xff00) << 8) | ((h >>> 8) & 0xff00) | (h >>> 24)) >>> 0;
  return { host: h, network };
}

/** An error completion (opcode undefined, length 0). */
export function errorCompletion(wrId: bigint, status: WcStatus): WorkCompletion {
  return { wrId, status, opcode: undefined, byteLen: 0, immData: undefined, flags: [] };
}
