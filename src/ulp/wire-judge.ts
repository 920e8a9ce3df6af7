/**
 * The wire of a ULP workload, decoded by the codec and judged (issue 35): every frame
 * accounted for (decoded, carrying no RDMA bytes, or undecodable with the codec's reason),
 * message counts per opcode and size, the MPA CRC of every FPDU (iWARP) and the ICRC of
 * every RoCEv2 packet, Terminates listed, and the protocol rules a capture alone can judge:
 *  - `msn-order`: untagged messages of each queue carry MSNs 1, 2, 3 ... (RFC 5041 §5.1:
 *    the MSN starts at 1 and grows by one per message of the queue);
 *  - `read-beyond-ird`: no more RDMA Read Requests outstanding than the responder's IRD
 *    advertised in the MPA Request/Reply (RFC 6581 §5; RFC 5040 §6.6: a requester must not
 *    exceed the ORD it negotiated);
 *  - `invalidate-unused-stag`: a Send with Invalidate names an STag its sender used toward
 *    the receiver before (in a Read Request's source or a Write's sink): the wire's view of
 *    "an STag that was advertised" (the advertisement itself is inside the ULP's payload);
 *  - `stag-after-invalidate`: no Read Request or Write names an STag its sender invalidated
 *    earlier (RFC 5040 §6.8: an invalidated STag is not valid until re-registered; a fast
 *    registration changes the 8-bit key, so the same 32-bit value back means reuse unless the
 *    key wrapped, which the detail says).
 * On RoCEv2 (roce-rules.ts): the PSN order of every requester flow, Reads within the
 * responder resources of the CM exchange, and the same two STag rules on Send with
 * Invalidate (IETH) against the R_Keys of Read Requests and Writes (RETH).
 * The ordering checker (src/engine/ordering) needs the ULP's issue order of its work
 * requests, which no capture carries; `judgeCapture` therefore applies the wire's own
 * order rules above and says so in `notes`.
 */
import {
  type CaptureItem,
  decodeCaptureMessages,
  type FpduItem,
} from '../codec/capture/decode-capture.js';
import type { RdmapMessage } from '../codec/iwarp/messages.js';
import type { RocePacket } from '../codec/roce/packet.js';
import { type RoceRuleCounts, RoceRules } from './roce-rules.js';

/** One broken rule, at a frame (1-based, as tshark counts). */
export interface WireViolation {
  readonly rule:
    | 'msn-order'
    | 'psn-order'
    | 'read-beyond-ird'
    | 'invalidate-unused-stag'
    | 'stag-after-invalidate'
    | 'mpa-crc-invalid'
    | 'icrc-invalid';
  readonly frame: number;
  readonly detail: string;
}

/** A frame the codec could not decode, and why. */
export interface UndecodableFrame {
  readonly frame: number;
  readonly why: string;
}

/** A Terminate seen on the wire. */
export interface TerminateSeen {
  readonly frame: number;
  readonly layer: number;
  readonly errorType: number;
  readonly errorCode: number;
}

/** What a capture showed. */
export interface WireJudgement {
  readonly frames: number;
  /** Frames with no RDMA bytes: TCP handshake, pure ACKs, other traffic. */
  readonly otherFrames: number;
  readonly connections: number;
  /** iWARP FPDUs and RoCEv2 packets decoded. */
  readonly messages: number;
  readonly mpaFrames: number;
  readonly undecodable: readonly UndecodableFrame[];
  /** Decoded messages per opcode kind (RDMAP kind, or the BTH opcode name on RoCE). */
  readonly opcodes: Readonly<Record<string, number>>;
  /** Per opcode kind, messages per payload size class (see {@link sizeClass}). */
  readonly sizes: Readonly<Record<string, Readonly<Record<string, number>>>>;
  /** MPA CRC of every FPDU (iWARP). */
  readonly mpaCrc: { readonly valid: number; readonly invalid: number; readonly notInUse: number };
  /** ICRC of every RoCEv2 packet. */
  readonly icrc: { readonly valid: number; readonly invalid: number; readonly unchecked: number };
  readonly terminates: readonly TerminateSeen[];
  /** NAKs (RoCE AETH syndromes other than ACK): none are decodable on iWARP. */
  readonly naks: number;
  readonly violations: readonly WireViolation[];
  /** RoCEv2 only: retransmissions, relay gaps, the most Reads outstanding, CM messages read. */
  readonly roce?: RoceRuleCounts;
  readonly notes: readonly string[];
}

/** Options of {@link judgeCapture}. */
export interface JudgeOptions {
  /**
   * Source addresses whose packets crossed the fault relay before this capture: their PSN
   * gaps are the relay's drops, counted apart (roce-rules.ts).
   */
  readonly afterRelay?: ReadonlySet<string>;
}

const SIZE_CLASSES = [0, 64, 512, 4096, 65536] as const;

/** `0`, `1-64`, `65-512`, `513-4096`, `4097-65536` or `>65536` bytes. */
export function sizeClass(bytes: number): string {
  if (bytes === 0) return '0';
  for (let i = 1; i < SIZE_CLASSES.length; i++) {
    const upper = SIZE_CLASSES[i] as number;
    if (bytes <= upper) return `${(SIZE_CLASSES[i - 1] as number) + 1}-${upper}`;
  }
  return `>${SIZE_CLASSES.at(-1)}`;
}

function payloadBytes(m: RdmapMessage): number {
  if ('payload' in m) return m.payload.length;
  if (m.kind === 'rdma-read-request') return m.readSize;
  return 0;
}

interface DirectionState {
  /** Next expected MSN per untagged queue. */
  readonly nextMsn: Map<number, number>;
  /** Whether the queue's current message is open (a non-last segment seen). */
  readonly open: Map<number, boolean>;
  /** STags this side used toward the other (Read Request source, Write sink). */
  readonly used: Set<number>;
  /**
   * STags this side invalidated on the other side, each with its index's key epoch at the
   * time (see `keyEpoch`).
   */
  readonly invalidated: Map<number, number>;
  /**
   * Per STag index (the upper 24 bits), how often the key (the low 8 bits) changed in this
   * side's uses: a fast registration of the same MR must change the key (ib_inc_rkey), so
   * an invalidated STag back after its index moved to another key is a re-registration
   * that wrapped the key, legal; back with no other key between, it is a use after
   * invalidation.
   */
  readonly keyEpoch: Map<number, { key: number; epoch: number }>;
  outstandingReads: number;
  /** The other side's IRD, from the MPA exchange (undefined: not advertised). */
  peerIrd: number | undefined;
}

function newDirection(): DirectionState {
  return {
    nextMsn: new Map(),
    open: new Map(),
    used: new Set(),
    invalidated: new Map(),
    keyEpoch: new Map(),
    outstandingReads: 0,
    peerIrd: undefined,
  };
}

const hex = (v: number): string => `0x${v.toString(16).padStart(8, '0')}`;

/**
 * The items with each iWARP direction's FPDUs in TCP sequence order. The codec lists an
 * FPDU at the frame that completed it, so a segment lost before the capture point and
 * retransmitted later puts its FPDUs after later ones of the same stream; the receiver
 * reads the stream in order, and the MSN and STag rules judge that order. Each direction's
 * FPDUs keep the slots they had in capture order (the interleaving of the two directions).
 */
export function inStreamOrder(items: readonly CaptureItem[]): CaptureItem[] {
  const byDirection = new Map<string, FpduItem[]>();
  for (const item of items)
    if (item.kind === 'fpdu') {
      const key = `${item.connection}/${item.direction}`;
      const list = byDirection.get(key) ?? [];
      byDirection.set(key, list);
      list.push(item);
    }
  const sorted = new Map<string, FpduItem[]>();
  for (const [key, list] of byDirection) {
    const first = list[0]?.fpdu.sequence ?? 0;
    sorted.set(
      key,
      [...list].sort(
        (a, b) => ((a.fpdu.sequence - first) >>> 0) - ((b.fpdu.sequence - first) >>> 0),
      ),
    );
  }
  const next = new Map<string, number>();
  return items.map((item) => {
    if (item.kind !== 'fpdu') return item;
    const key = `${item.connection}/${item.direction}`;
    const i = next.get(key) ?? 0;
    next.set(key, i + 1);
    return sorted.get(key)?.[i] ?? item;
  });
}

/** Decodes and judges one capture file's bytes. */
export function judgeCapture(pcap: Uint8Array, options: JudgeOptions = {}): WireJudgement {
  const decoded = decodeCaptureMessages(pcap);
  if (!decoded.ok)
    return {
      frames: 0,
      otherFrames: 0,
      connections: 0,
      messages: 0,
      mpaFrames: 0,
      undecodable: [{ frame: 0, why: `the capture file: ${decoded.error.message}` }],
      opcodes: {},
      sizes: {},
      mpaCrc: { valid: 0, invalid: 0, notInUse: 0 },
      icrc: { valid: 0, invalid: 0, unchecked: 0 },
      terminates: [],
      naks: 0,
      violations: [],
      notes: [],
    };
  const capture = decoded.value;
  const opcodes: Record<string, number> = {};
  const sizes: Record<string, Record<string, number>> = {};
  const mpaCrc = { valid: 0, invalid: 0, notInUse: 0 };
  const icrc = { valid: 0, invalid: 0, unchecked: 0 };
  const undecodable: UndecodableFrame[] = [];
  const terminates: TerminateSeen[] = [];
  const violations: WireViolation[] = [];
  let messages = 0;
  let mpaFrames = 0;
  let naks = 0;
  const count = (kind: string, bytes: number): void => {
    opcodes[kind] = (opcodes[kind] ?? 0) + 1;
    const perKind = sizes[kind] ?? {};
    sizes[kind] = perKind;
    const c = sizeClass(bytes);
    perKind[c] = (perKind[c] ?? 0) + 1;
  };
  // Per connection, per direction (client-to-server = c2s).
  const sides = new Map<string, DirectionState>();
  const side = (connection: number, direction: string): DirectionState => {
    const key = `${connection}/${direction}`;
    let s = sides.get(key);
    if (s === undefined) {
      s = newDirection();
      sides.set(key, s);
    }
    return s;
  };
  let sawRoce = false;
  let ruleFrame = 0;
  const roceRules = new RoceRules(
    (rule, detail, at) => violations.push({ rule, frame: at ?? ruleFrame, detail }),
    options.afterRelay,
  );
  /** RoCE flows (source>destination/QP) for the STag rules. */
  const flows = new Map<string, DirectionState>();
  const flowSide = (key: string): DirectionState => {
    let s = flows.get(key);
    if (s === undefined) {
      s = newDirection();
      flows.set(key, s);
    }
    return s;
  };
  const other = (d: string): string =>
    d === 'client-to-server' ? 'server-to-client' : 'client-to-server';

  for (const item of inStreamOrder(capture.items)) {
    const frame = item.frameIndex + 1;
    switch (item.kind) {
      case 'problem':
        undecodable.push({ frame, why: item.error.message });
        break;
      case 'mpa-frame': {
        mpaFrames++;
        // The sender's IRD bounds the Reads the other side may have outstanding to it.
        const ird = item.frame.enhancedParameters?.ird;
        side(item.connection, other(item.direction)).peerIrd = ird;
        break;
      }
      case 'roce': {
        if (!item.packet.ok) {
          undecodable.push({ frame, why: item.packet.error.message });
          break;
        }
        messages++;
        const p = item.packet.value;
        count(p.opcode.name, item.frame.payload.length);
        if (item.icrc === undefined) icrc.unchecked++;
        else if (item.icrc.valid) icrc.valid++;
        else {
          icrc.invalid++;
          violations.push({ rule: 'icrc-invalid', frame, detail: `${p.opcode.name}` });
        }
        if (p.aethSyndrome !== undefined && p.aethSyndrome.kind !== 'ACK') naks++;
        sawRoce = true;
        const ip = item.frame.network?.header;
        if (ip !== undefined) {
          ruleFrame = frame;
          // Packets that crossed the fault relay before this capture come in the relay's
          // order, some first copies lost: their STag uses and invalidations are not judged.
          if (
            roceRules.onPacket(ip.source, ip.destination, p, frame) === 'new' &&
            options.afterRelay?.has(ip.source) !== true
          )
            judgeRoceStags(
              p,
              frame,
              flowSide(`${ip.source}>${ip.destination}/${p.bth.destinationQp}`),
            );
        }
        break;
      }
      case 'fpdu': {
        const f = item.fpdu;
        if (f.crcState === 'valid') mpaCrc.valid++;
        else if (f.crcState === 'invalid') {
          mpaCrc.invalid++;
          violations.push({ rule: 'mpa-crc-invalid', frame, detail: 'MPA CRC does not match' });
        } else mpaCrc.notInUse++;
        if (!f.message.ok) {
          undecodable.push({ frame, why: f.message.error.message });
          break;
        }
        messages++;
        const m = f.message.value;
        count(m.kind, payloadBytes(m));
        judgeMessage(m, frame, side(item.connection, item.direction), () =>
          side(item.connection, other(item.direction)),
        );
        if (m.kind === 'terminate')
          terminates.push({
            frame,
            layer: m.layer,
            errorType: m.errorType,
            errorCode: m.errorCode,
          });
        break;
      }
      default: {
        const never: never = item;
        throw new Error(`unknown capture item ${String(never)}`);
      }
    }
  }

  function judgeMessage(
    m: RdmapMessage,
    frame: number,
    me: DirectionState,
    peer: () => DirectionState,
  ): void {
    if (!m.ddp.tagged) {
      const q = m.ddp.queueNumber;
      const expected = me.nextMsn.get(q) ?? 1;
      if (m.ddp.messageSequenceNumber !== expected)
        violations.push({
          rule: 'msn-order',
          frame,
          detail: `queue ${q}: MSN ${m.ddp.messageSequenceNumber}, expected ${expected}`,
        });
      me.open.set(q, !m.ddp.last);
      if (m.ddp.last) me.nextMsn.set(q, m.ddp.messageSequenceNumber + 1);
      else me.nextMsn.set(q, m.ddp.messageSequenceNumber);
    }
    switch (m.kind) {
      case 'rdma-read-request': {
        me.outstandingReads++;
        if (me.peerIrd !== undefined && me.outstandingReads > me.peerIrd)
          violations.push({
            rule: 'read-beyond-ird',
            frame,
            detail: `${me.outstandingReads} Reads outstanding, the responder's IRD is ${me.peerIrd}`,
          });
        useStag(me, m.sourceSTag, frame, 'Read Request source');
        break;
      }
      case 'rdma-read-response': {
        if (m.ddp.last) {
          const p = peer();
          p.outstandingReads = Math.max(0, p.outstandingReads - 1);
        }
        break;
      }
      case 'rdma-write':
        useStag(me, m.ddp.stag, frame, 'RDMA Write sink');
        break;
      default:
        break;
    }
    if ('invalidateSTag' in m && (m.kind === 'send-invalidate' || m.kind === 'send-se-invalidate'))
      invalidate(me, m.invalidateSTag, frame);
  }

  /** A Send with Invalidate naming `s`, from the side `me`. */
  function invalidate(me: DirectionState, s: number, frame: number): void {
    if (!me.used.has(s))
      violations.push({
        rule: 'invalidate-unused-stag',
        frame,
        detail: `Send with Invalidate names STag ${hex(s)}, never used by its sender on this connection`,
      });
    me.invalidated.set(s, noteKey(me, s));
    me.used.delete(s);
  }

  /** RoCE: RETH R_Keys of Reads and Writes are used STags; IETH R_Keys are invalidations. */
  function judgeRoceStags(p: RocePacket, frame: number, me: DirectionState): void {
    const op = p.opcode.operation;
    const reth = p.headers.RETH;
    if (reth !== undefined && op === 'RDMA_READ_REQUEST')
      useStag(me, reth.rKey, frame, 'Read Request R_Key');
    else if (reth !== undefined && op.startsWith('RDMA_WRITE'))
      useStag(me, reth.rKey, frame, 'RDMA Write R_Key');
    const ieth = p.headers.IETH;
    if (ieth !== undefined) invalidate(me, ieth.rKey, frame);
  }

  /** Records `stag`'s key for its index; returns the index's key epoch. */
  function noteKey(me: DirectionState, stag: number): number {
    const index = stag >>> 8;
    const key = stag & 0xff;
    const seen = me.keyEpoch.get(index);
    if (seen === undefined) {
      me.keyEpoch.set(index, { key, epoch: 0 });
      return 0;
    }
    if (seen.key !== key) {
      seen.key = key;
      seen.epoch++;
    }
    return seen.epoch;
  }

  function useStag(me: DirectionState, stag: number, frame: number, what: string): void {
    const at = me.invalidated.get(stag);
    const epoch = noteKey(me, stag);
    if (at !== undefined) {
      if (epoch === at)
        violations.push({
          rule: 'stag-after-invalidate',
          frame,
          detail: `${what} STag ${hex(stag)} after its sender invalidated it, with no re-registration (another key of the index) seen between`,
        });
      me.invalidated.delete(stag);
    }
    me.used.add(stag);
  }

  roceRules.finish();
  violations.sort((a, b) => a.frame - b.frame);
  return {
    frames: capture.frameCount,
    otherFrames: capture.otherFrames,
    connections: capture.connections.length,
    messages,
    mpaFrames,
    undecodable,
    opcodes,
    sizes,
    mpaCrc,
    icrc,
    terminates,
    naks,
    violations,
    ...(sawRoce ? { roce: { ...roceRules.counts } } : {}),
    notes: [
      'ordering checker: not applied to a capture (it judges a ULP issue order, which the wire does not carry); the MSN order of every queue is judged instead',
    ],
  };
}
