/**
 * UD multicast, as the reference engine models it (issue 34): the minimum the suite's
 * multicast programs (src/interop/scenarios/multicast.ts) exercise. Pure and
 * deterministic, no I/O.
 *
 * - Attach and detach (IBTA 1.5 Vol. 1 §11.3, Multicast: Attach QP to Multicast Group,
 *   Detach QP from Multicast Group): only a UD QP joins a group, and only a multicast GID
 *   names one; either refusal is EINVAL, the errno Linux's ib_attach_mcast gives for
 *   both (drivers/infiniband/core/verbs.c), and nothing is attached.
 * - Delivery (IBTA 1.5 Vol. 1 §10.5, multicast): a UD Send addressed to a group's GID
 *   with the multicast QPN 0xFFFFFF reaches every QP attached to the group at the time,
 *   each consuming one of its own receives, and none that is not (or no longer) attached.
 * - A UD receive (IBTA 1.5 Vol. 1 §11.4.1.1 and ibv_poll_cq(3)): the first 40 bytes of
 *   the receive buffer take the GRH (a RoCE v2 datagram always carries one: the IP header
 *   in its place), byte_len counts them with the payload, the completion has the GRH flag,
 *   src_qp the sender's QPN, and imm_data with WITH_IMM for a Send with Immediate. UD is
 *   unacknowledged (IBTA 1.5 Vol. 1 §9.8, unreliable datagram): a QP with no receive
 *   posted drops the message silently, and the sender's completion is SUCCESS either way.
 */

/** The 40-byte Global Route Header at the head of every UD receive buffer. */
export const GRH_BYTES = 40;

/** The QPN a UD Send to a multicast group is addressed to (IBTA 1.5 §10.5). */
export const MULTICAST_QPN = 0xffffff;

/** A QP's service type, as far as multicast cares. */
export type QpService = 'UD' | 'RC';

/** What an attach or detach returns: `ok` or the errno's name. */
export type McastResult = 'ok' | 'EINVAL';

/**
 * True for a multicast GID: an IB multicast GID starts with 0xFF (IBTA 1.5 §4.1.1), and
 * RoCE v2 maps an IPv4 multicast group (224.0.0.0/4) to ::ffff:a.b.c.d, which Linux's
 * rdma_is_multicast_addr accepts as well.
 */
export function isMulticastGid(gid: Uint8Array): boolean {
  if (gid.length !== 16) return false;
  if (gid[0] === 0xff) return true;
  const mapped = gid.subarray(0, 10).every((b) => b === 0) && gid[10] === 0xff && gid[11] === 0xff;
  return mapped && ((gid[12] ?? 0) & 0xf0) === 0xe0;
}

/**
 * §11.3: whether a QP of `service` may join or leave the group `gid` at all: only a UD
 * QP, only a multicast GID (EINVAL otherwise, nothing changed).
 */
export function membershipCheck(service: QpService, gid: Uint8Array): McastResult {
  return service === 'UD' && isMulticastGid(gid) ? 'ok' : 'EINVAL';
}

/** One scatter element of a UD receive, as offsets into the receiver's memory. */
export interface UdSge {
  /** Where the bytes go: `grh` (a scratch area) or `memory` (the observed buffer). */
  readonly into: 'grh' | 'memory';
  readonly at: number;
  readonly length: number;
}

/** A posted UD receive. */
export interface UdReceive {
  readonly wrId: bigint;
  readonly sgList: readonly UdSge[];
}

/** A UD receive completion (the fields the programs compare). */
export interface UdCompletion {
  readonly wrId: bigint;
  readonly status: 'SUCCESS' | 'LOC_LEN_ERR';
  readonly opcode: 'RECV' | undefined;
  readonly byteLen: number;
  readonly flags: readonly ('GRH' | 'WITH_IMM')[];
  /** The sender's QPN. */
  readonly srcQp: number;
  readonly imm: number | undefined;
}

interface UdQp {
  readonly service: QpService;
  readonly receives: UdReceive[];
  readonly completions: UdCompletion[];
}

/**
 * A fabric of QPs and multicast groups: QPs by name, groups by GID (hex), each group's
 * members in the order they attached. `memory` is what receives of `into: 'memory'`
 * scatter into (the scenario's responder buffer).
 */
export class MulticastFabric {
  readonly #qps = new Map<string, UdQp>();
  readonly #groups = new Map<string, string[]>();
  readonly #grh: Uint8Array;

  constructor(
    readonly memory: Uint8Array,
    grhBytes = GRH_BYTES,
  ) {
    this.#grh = new Uint8Array(grhBytes);
  }

  /** Creates QP `name` of `service`. */
  createQp(name: string, service: QpService): void {
    this.#qps.set(name, { service, receives: [], completions: [] });
  }

  #qp(name: string): UdQp {
    const qp = this.#qps.get(name);
    if (qp === undefined) throw new RangeError(`no QP ${name}`);
    return qp;
  }

  /** §11.3: attaches `qp` to the group `gid` (EINVAL: not UD, or not a multicast GID). */
  attach(qp: string, gid: Uint8Array): McastResult {
    if (membershipCheck(this.#qp(qp).service, gid) !== 'ok') return 'EINVAL';
    const members = this.#groups.get(hex(gid)) ?? [];
    // Attaching twice is one membership (Linux's uverbs keeps one entry per group).
    if (!members.includes(qp)) members.push(qp);
    this.#groups.set(hex(gid), members);
    return 'ok';
  }

  /** §11.3: detaches `qp` from the group `gid` (EINVAL as attach, or not attached). */
  detach(qp: string, gid: Uint8Array): McastResult {
    if (membershipCheck(this.#qp(qp).service, gid) !== 'ok') return 'EINVAL';
    const members = this.#groups.get(hex(gid)) ?? [];
    if (!members.includes(qp)) return 'EINVAL';
    this.#groups.set(
      hex(gid),
      members.filter((m) => m !== qp),
    );
    return 'ok';
  }

  postRecv(qp: string, receive: UdReceive): void {
    this.#qp(qp).receives.push(receive);
  }

  /**
   * §10.5: a UD Send from the QP numbered `srcQp` to the group `gid` (QPN 0xFFFFFF): one
   * receive completion on every member with a receive posted, in attachment order.
   */
  sendToGroup(srcQp: number, gid: Uint8Array, payload: Uint8Array, imm?: number): void {
    for (const name of this.#groups.get(hex(gid)) ?? []) {
      const qp = this.#qp(name);
      const receive = qp.receives.shift();
      if (receive === undefined) continue; // UD: dropped silently
      qp.completions.push(this.#scatter(receive, srcQp, payload, imm));
    }
  }

  #scatter(receive: UdReceive, srcQp: number, payload: Uint8Array, imm?: number): UdCompletion {
    const bytes = new Uint8Array(GRH_BYTES + payload.length);
    bytes.set(payload, GRH_BYTES);
    const room = receive.sgList.reduce((n, s) => n + s.length, 0);
    if (room < bytes.length)
      return {
        wrId: receive.wrId,
        status: 'LOC_LEN_ERR',
        opcode: undefined,
        byteLen: 0,
        flags: [],
        srcQp,
        imm: undefined,
      };
    let from = 0;
    for (const sge of receive.sgList) {
      const part = bytes.subarray(from, from + sge.length);
      (sge.into === 'grh' ? this.#grh : this.memory).set(part, sge.at);
      from += part.length;
    }
    return {
      wrId: receive.wrId,
      status: 'SUCCESS',
      opcode: 'RECV',
      byteLen: bytes.length,
      flags: imm === undefined ? ['GRH'] : ['GRH', 'WITH_IMM'],
      srcQp,
      imm,
    };
  }

  /** The oldest completion of `qp`'s receives, or undefined. */
  poll(qp: string): UdCompletion | undefined {
    return this.#qp(qp).completions.shift();
  }
}

function hex(gid: Uint8Array): string {
  return Array.from(gid, (b) => b.toString(16).padStart(2, '0')).join('');
}
