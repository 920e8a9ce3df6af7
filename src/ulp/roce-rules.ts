/**
 * The protocol rules a RoCEv2 capture of a ULP can judge (issue 35), beside the ICRC:
 *  - `psn-order`: each requester flow (source, destination, destination QP) sends request
 *    packets with PSNs one after another (IBTA §9.7.1: the PSN grows by one per request
 *    packet; an RDMA Read Request reserves one PSN per response packet, so the next request
 *    may jump by up to its response count, bounded here by the smallest path MTU, 256).
 *    A PSN behind the expected one is a retransmission or a duplicate (counted, legal); one
 *    ahead is a gap. A gap the sender fills later (a packet with the skipped PSN comes
 *    after it: go-back-N, IBTA §9.7.5.1) was lost on the link before the capture point
 *    (the emulated link drops datagrams under load; the capture is guest A's NIC) and is
 *    counted as such; a gap never filled is a violation, unless the packet crossed the
 *    fault relay before the capture (its drops make gaps): then it is counted apart.
 *  - `read-beyond-ird`: no more RDMA Read Requests outstanding on a QP than the responder
 *    resources its peer gave in the CM REQ or REP (IBTA §12.7.29-30, Tables 106 and 110;
 *    offsets as include/rdma/ibta_vol1_c12.h: REQ local QPN at 32, responder resources at
 *    35; REP local QPN at 12, responder resources at 24, after the 24-byte MAD header).
 *    A Read stays outstanding until a READ_RESPONSE_LAST or _ONLY comes back with a PSN in
 *    its range.
 *  - Send with Invalidate: the IETH's R_Key is judged like iWARP's invalidations
 *    (wire-judge.ts `invalidate-unused-stag`, `stag-after-invalidate`), with the RETH R_Keys
 *    of Read Requests and Write first/only packets as the STags "used"; retransmitted
 *    packets are not judged twice.
 */
import type { RocePacket } from '../codec/roce/packet.js';

const PSN_MOD = 0x1000000;
/** The smallest IB path MTU: a Read of n bytes takes at most ceil(n / 256) responses. */
const MIN_PMTU = 256;
const MAD_HEADER = 24;
const CM_CLASS = 0x07;
const CM_REQ = 0x0010;
const CM_REP = 0x0013;

/** How far `psn` is ahead of `from` (negative: behind), in the 24-bit PSN space. */
export function psnDistance(psn: number, from: number): number {
  const d = (psn - from + PSN_MOD) % PSN_MOD;
  return d >= PSN_MOD / 2 ? d - PSN_MOD : d;
}

/** A CM REQ or REP in a QP1 MAD: the sender's QPN and responder resources. */
export function cmResources(
  payload: Uint8Array,
):
  | { readonly kind: 'REQ' | 'REP'; readonly qpn: number; readonly responderResources: number }
  | undefined {
  if (payload.length < MAD_HEADER + 40 || payload[1] !== CM_CLASS) return undefined;
  const attribute = ((payload[16] ?? 0) << 8) | (payload[17] ?? 0);
  const u24 = (at: number) =>
    ((payload[at] ?? 0) << 16) | ((payload[at + 1] ?? 0) << 8) | (payload[at + 2] ?? 0);
  if (attribute === CM_REQ)
    return {
      kind: 'REQ',
      qpn: u24(MAD_HEADER + 32),
      responderResources: payload[MAD_HEADER + 35] ?? 0,
    };
  if (attribute === CM_REP)
    return {
      kind: 'REP',
      qpn: u24(MAD_HEADER + 12),
      responderResources: payload[MAD_HEADER + 24] ?? 0,
    };
  return undefined;
}

interface Flow {
  /** The furthest PSN the next new request may carry, and how far before it it may be (after a Read). */
  next: number;
  slack: number;
  readonly reads: { readonly start: number; readonly span: number }[];
}

/** What the RoCE rules saw, beside the violations they report. */
export interface RoceRuleCounts {
  /** Request packets whose PSN was behind the flow's: retransmissions and duplicates. */
  repeats: number;
  /** PSN gaps in packets that crossed the fault relay before the capture (its drops). */
  gapsAfterRelay: number;
  /** PSN gaps the sender filled later: packets lost on the link before the capture. */
  gapsFilled: number;
  /** The most Reads outstanding on one QP. */
  maxOutstandingReads: number;
  /** CM REQ/REP messages read (their responder resources bound the Reads). */
  cmMessages: number;
}

/** A request packet's verdict for the STag rules: judge it (new) or not (a repeat). */
export type PacketNovelty = 'new' | 'repeat';

export class RoceRules {
  readonly counts: RoceRuleCounts = {
    repeats: 0,
    gapsAfterRelay: 0,
    gapsFilled: 0,
    maxOutstandingReads: 0,
    cmMessages: 0,
  };
  readonly #flows = new Map<string, Flow>();
  /** Gaps not yet filled: flow -> skipped PSN -> the gap's frame and detail. */
  readonly #gaps = new Map<string, Map<number, { frame: number; detail: string }>>();
  /** `<address>/<qpn>` -> responder resources that QP's owner advertised. */
  readonly #resources = new Map<string, number>();

  constructor(
    private readonly report: (
      rule: 'psn-order' | 'read-beyond-ird',
      detail: string,
      frame?: number,
    ) => void,
    /** Source addresses whose packets crossed the fault relay before this capture. */
    private readonly afterRelay: ReadonlySet<string> = new Set(),
  ) {}

  /** Judges one packet; says whether a request packet is new (for the STag rules). */
  onPacket(source: string, destination: string, p: RocePacket, frame = 0): PacketNovelty {
    const op = p.opcode;
    if (op.transport === 'UD') {
      const cm = p.bth.destinationQp === 1 ? cmResources(p.payload) : undefined;
      if (cm !== undefined) {
        this.counts.cmMessages++;
        this.#resources.set(`${source}/${cm.qpn}`, cm.responderResources);
      }
      return 'new';
    }
    if (op.transport !== 'RC') return 'new';
    if (op.operation.startsWith('RDMA_READ_RESPONSE') || op.operation.includes('ACKNOWLEDGE')) {
      if (op.position === 'last' || op.position === 'only')
        this.#completeRead(source, destination, p.bth.psn);
      return 'new';
    }
    const key = `${source}>${destination}/${p.bth.destinationQp}`;
    const flow = this.#flows.get(key);
    const psn = p.bth.psn;
    const isRead = op.operation === 'RDMA_READ_REQUEST';
    const span = isRead ? Math.max(1, Math.ceil((p.headers.RETH?.dmaLength ?? 0) / MIN_PMTU)) : 1;
    if (flow === undefined) {
      this.#flows.set(key, {
        next: (psn + span) % PSN_MOD,
        slack: isRead ? span - 1 : 0,
        reads: [],
      });
      if (isRead) this.#read(key, destination, p.bth.destinationQp, psn, span);
      return 'new';
    }
    const d = psnDistance(psn, flow.next);
    // New packets land in [next - slack, next]; behind that is a repeat, beyond it a gap.
    if (d < -flow.slack) {
      this.counts.repeats++;
      const gaps = this.#gaps.get(key);
      if (gaps?.delete(psn) === true) this.counts.gapsFilled++;
      return 'repeat';
    }
    if (d > 0) {
      if (this.afterRelay.has(source)) this.counts.gapsAfterRelay++;
      else {
        const gaps = this.#gaps.get(key) ?? new Map<number, { frame: number; detail: string }>();
        this.#gaps.set(key, gaps);
        gaps.set(flow.next, {
          frame,
          detail: `${key}: PSN ${psn}, expected ${flow.next}${flow.slack > 0 ? ` (or up to ${flow.slack} before, after a Read)` : ''} (a gap never filled)`,
        });
      }
    }
    flow.next = (psn + span) % PSN_MOD;
    flow.slack = isRead ? span - 1 : 0;
    if (isRead) this.#read(key, destination, p.bth.destinationQp, psn, span);
    return 'new';
  }

  /** Reports the gaps no later packet filled; call once, after the last packet. */
  finish(): void {
    for (const gaps of this.#gaps.values())
      for (const g of gaps.values()) this.report('psn-order', g.detail, g.frame);
    this.#gaps.clear();
  }

  #read(key: string, destination: string, qpn: number, start: number, span: number): void {
    const flow = this.#flows.get(key);
    if (flow === undefined) return;
    flow.reads.push({ start, span });
    this.counts.maxOutstandingReads = Math.max(this.counts.maxOutstandingReads, flow.reads.length);
    const ird = this.#resources.get(`${destination}/${qpn}`);
    if (ird !== undefined && flow.reads.length > ird)
      this.report(
        'read-beyond-ird',
        `${key}: ${flow.reads.length} Reads outstanding, the responder's resources in its CM message are ${ird}`,
      );
  }

  /** A Read response's last packet from `source` to `destination`: its Read is done. */
  #completeRead(source: string, destination: string, psn: number): void {
    const prefix = `${destination}>${source}/`;
    for (const [key, flow] of this.#flows) {
      if (!key.startsWith(prefix)) continue;
      const i = flow.reads.findIndex((r) => {
        const d = psnDistance(psn, r.start);
        return d >= 0 && d < r.span;
      });
      if (i >= 0) {
        flow.reads.splice(0, i + 1);
        return;
      }
    }
  }
}
