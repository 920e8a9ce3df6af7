/**
 * Our own iWARP peer, in userspace: a plain TCP socket that speaks MPA (RFC 5044/6581)
 * and RDMAP with the codec, connected to a real siw QP accepted through rdma_cm. It sends
 * one probe message and records what siw sends back (e.g. a Terminate) and what siw
 * delivered to its receive queue. Only the codec stands between us and the kernel.
 */
import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import type { MpaNegotiated, RdmapMessage } from '../codec/iwarp/messages.js';
import { decodeMpaFrame, encodeMpaFrame, makeMpaFrame } from '../codec/iwarp/mpa-frames.js';
import { decodeMpaStream, encodeMpaStream, negotiateMpa } from '../codec/iwarp/stream.js';
import { type CmId, EventChannel } from '../verbs/cm.js';
import type { WorkCompletion } from '../verbs/completion.js';
import type { Context } from '../verbs/device.js';
import { VerbsError } from '../verbs/errors.js';
import { closeQuietly } from '../verbs/lifetime.js';
import type { Access as AccessFlag } from '../verbs/mr.js';

/**
 * The RFC 6581 enhanced MPA parameters this project's iWARP peers send (as siw's own
 * initiator does): IRD and ORD 4, not peer-to-peer, so siw needs no RTR message.
 */
export const PEER_ENHANCED_PARAMETERS = {
  ird: 4,
  ord: 4,
  peerToPeer: false,
  sendRtr: false,
  writeRtr: false,
  readRtr: false,
} as const;

/** siw0's address (scripts/rdma-devices.sh). */
export const SIW_ADDRESS = '198.51.100.1';
/** How long siw gets to answer (it runs under TCG in the guest). */
const ANSWER_WAIT_MS = 3000;

/** Size of the siw QP's one memory region (receive buffer and atomic target). */
export const SIW_BUFFER_BYTES = 64;

/**
 * Guard bytes on each side of the MR, in the same allocation but outside the
 * registration: a remote access that lands there is memory corruption (issue 21's fuzz).
 */
export const SIW_GUARD_BYTES = 64;
/** The guard bytes' pattern (a byte that no probe writes). */
const GUARD_FILL = 0xa5;

/** Where the probe messages may point: the siw MR, as registered. */
export interface SiwTarget {
  readonly stag: number;
  /** Address of the MR's first byte (siw is VA-based: this is its Tagged Offset). */
  readonly address: bigint;
}

/** How one probe connection is set up and what it sends. */
export interface SiwProbeSetup {
  /** The MR's access flags. */
  readonly access: readonly AccessFlag[];
  /** The MR's contents before the probe (SIW_BUFFER_BYTES long; zeros by default). */
  readonly initial?: Uint8Array;
  /** Whether the QP gets one receive (the whole MR) before the probe. */
  readonly postReceive: boolean;
  /** How many such receives (default 1; the guided fuzz posts 2). */
  readonly receives?: number;
  /** The IRD siw accepts with (responder resources; default 4). */
  readonly ird?: number;
  /** The messages, sent back to back in one TCP write after the MPA exchange. */
  readonly messages?: (target: SiwTarget) => readonly RdmapMessage[];
  /**
   * Instead of `messages`: the raw bytes sent after the MPA exchange (FPDUs built, or
   * broken, by the caller with the negotiated settings).
   */
  readonly stream?: (target: SiwTarget, negotiated: MpaNegotiated) => Uint8Array;
  /**
   * Stream offsets where the tester cuts the bytes into TCP segments of their own (each
   * write waits for the one before and a pause, with Nagle off): siw's receive actor is
   * called per skb (tcp_read_sock), so a header cut here reaches siw_get_hdr() in pieces.
   */
  readonly splits?: (target: SiwTarget, negotiated: MpaNegotiated) => readonly number[];
  /** Whether our MPA Request asks for CRCs (RFC 5044 §7.1: then both directions use them). */
  readonly mpaCrc?: boolean;
  /** How long siw gets to answer, in ms (default 3000; it runs under TCG in the guest). */
  readonly answerWaitMs?: number;
  /**
   * Ends the wait for siw's answer early once the QP's memory region holds what the
   * caller waits for (a Write that siw places without answering), so that the wait is for
   * an outcome, not a clock.
   */
  readonly doneWhen?: (memory: Uint8Array) => boolean;
  /**
   * The siw QP first posts an RDMA Read of this many bytes into the MR's start (from any
   * STag of ours), and the stream goes out once siw's Read Request has: Read Responses then
   * meet an ORQ entry (the guided fuzz, issue 32).
   */
  readonly postRead?: {
    readonly bytes: number;
    readonly stag: number;
    readonly offset: bigint;
    /** A fenced Send after the Read (siw holds it until the Read completes: orq_fence). */
    readonly fencedSend?: boolean;
    /**
     * Before the Read, an RDMA Write of the whole region to the same STag and, after the
     * fenced Send, a Send with Invalidate of it: siw's transmit path for more opcodes.
     */
    readonly writeAndInvalidate?: boolean;
  };
  /**
   * The QP receives from a shared receive queue (its receive, if any, posted there, and the
   * SRQ limit armed at 1): siw_qp_rx.c siw_rqe_get()'s SRQ branch (the guided fuzz).
   */
  readonly srq?: boolean;
}

export interface SiwAnswer {
  /** RDMAP messages siw sent after its MPA Reply, decoded by the codec. */
  readonly sent: readonly RdmapMessage[];
  /**
   * Every FPDU siw sent, in order: its message, or the ULPDU's bytes and why the codec
   * refused them (a malformed message must show, not vanish).
   */
  readonly fpdus: readonly (
    | { readonly message: RdmapMessage }
    | { readonly ulpdu: Uint8Array; readonly error: string }
  )[];
  /** What the siw QP's receive queue completed (a delivered Send), if anything. */
  readonly completion: WorkCompletion | undefined;
  /** The bytes in siw's receive buffer afterwards (first 8). */
  readonly received: Uint8Array;
  /** The whole MR afterwards (SIW_BUFFER_BYTES). */
  readonly memory: Uint8Array;
  /** The MR the messages pointed at. */
  readonly target: SiwTarget;
  /** Whether siw closed the TCP connection after answering. */
  readonly closedBySiw: boolean;
  /** The MPA settings both directions used. */
  readonly negotiated: MpaNegotiated;
  /** Whether the guard bytes around the MR are as they were. */
  readonly guardsIntact: boolean;
  /** Where siw's FPDUs stopped decoding, if they did (a message the codec refuses). */
  readonly decodeError: string | undefined;
}

function bytesOf(chunks: readonly Buffer[]): Uint8Array {
  const joined = Buffer.concat(chunks);
  return new Uint8Array(joined.buffer, joined.byteOffset, joined.byteLength);
}

/**
 * Polls `check` every 10 ms until it holds (true) or `ms` pass (false): the tester's peers
 * wait for socket events their own callbacks record.
 */
export async function waitUntil(check: () => boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 10));
  }
  return true;
}

/** Connects to a fresh siw QP, sends `probe` as the first FPDU, returns siw's answer. */
export function probeSiw(probe: RdmapMessage): Promise<SiwAnswer> {
  return probeSiwWith({ access: ['LOCAL_WRITE'], postReceive: true, messages: () => [probe] });
}

/**
 * A listening CM id on siw0's address. rdma_cm picks the port from its own port space
 * (cma_alloc_any_port) and siw_create_listen() then binds a kernel TCP socket to it; when
 * a TCP socket of ours still holds that number as its local port (a closed probe's
 * connection), the bind fails and rdma_listen() answers EADDRINUSE (seen once in 40 fuzz
 * packets on 6.12, 2026-11-28). Such an id is closed and another port tried.
 */
export function listenOnSomePort(channel: EventChannel): CmId {
  for (let attempt = 1; ; attempt++) {
    const id = channel.createId();
    try {
      id.bindAddr(SIW_ADDRESS, 0);
      id.listen();
      return id;
    } catch (error) {
      id.close();
      if (!(error instanceof VerbsError && error.code === 'EADDRINUSE') || attempt === 8)
        throw error;
    }
  }
}

/** The pause between two segments of a split stream (siw reads each in softirq at once). */
const SEGMENT_PAUSE_MS = 5;

/** Writes `wire` cut at `splits` (stream offsets), one TCP segment per piece. */
async function writeInSegments(
  socket: Socket,
  wire: Uint8Array,
  splits: readonly number[],
): Promise<void> {
  if (splits.length === 0) {
    socket.write(wire);
    return;
  }
  socket.setNoDelay(true);
  const cuts = [...new Set(splits.filter((o) => o > 0 && o < wire.length))].sort((a, b) => a - b);
  let from = 0;
  for (const to of [...cuts, wire.length]) {
    const piece = wire.subarray(from, to);
    await new Promise<void>((resolve) => socket.write(piece, () => resolve()));
    await new Promise((resolve) => setTimeout(resolve, SEGMENT_PAUSE_MS));
    from = to;
  }
}

/** Connects to a fresh siw QP set up as `setup` says, sends its messages, returns siw's answer. */
export async function probeSiwWith(setup: SiwProbeSetup): Promise<SiwAnswer> {
  // The roots: the channel (its CM ids, the accepted one with its QP) and the CM's context
  // (the PD with the MR, the CQ); the verbs cascade closes the rest, the QP before the MR
  // (which it may still hold as a posted receive).
  const channel = new EventChannel();
  let context: Context | undefined;
  let socket: Socket | undefined;
  try {
    const listener = listenOnSomePort(channel);
    socket = connect({ host: SIW_ADDRESS, port: listener.localPort });
    await once(socket, 'connect');
    const chunks: Buffer[] = [];
    let closedBySiw = false;
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('end', () => {
      closedBySiw = true;
    });
    socket.on('error', () => {
      closedBySiw = true;
    });
    // RFC 6581 enhanced MPA (revision 2), as siw's own initiator sends it; no CRC, no
    // markers, not peer-to-peer: siw then needs no RTR message.
    const request = makeMpaFrame('mpa-request', {
      crc: setup.mpaCrc ?? false,
      enhancedParameters: PEER_ENHANCED_PARAMETERS,
    });
    socket.write(encodeMpaFrame(request));

    const connectRequest = await listener.nextConnectRequest({ timeoutMs: 20_000 });
    const id = connectRequest.id;
    context = id.context();
    const pd = context.allocPd();
    const cq = context.createCq({ cqe: 8 });
    const srq = setup.srq === true ? pd.createSrq({ maxWr: 4, maxSge: 1 }) : undefined;
    const qp = id.createQp(pd, { sendCq: cq, ...(srq === undefined ? {} : { srq }) });
    const mr = pd.allocMr(SIW_BUFFER_BYTES + 2 * SIW_GUARD_BYTES, [...setup.access], {
      offset: SIW_GUARD_BYTES,
      length: SIW_BUFFER_BYTES,
    });
    mr.allocation.fill(GUARD_FILL);
    const buffer = mr.buffer;
    buffer.fill(0);
    if (setup.initial !== undefined) buffer.set(setup.initial);
    if (setup.postReceive) {
      const receive = { sgList: [mr.sge(0, SIW_BUFFER_BYTES)] };
      for (let i = 0; i < (setup.receives ?? 1); i++)
        if (srq === undefined) qp.postRecv(receive);
        else srq.postRecv(receive);
    }
    srq?.modify({ limit: 1 });
    await id.accept({ responderResources: setup.ird ?? 4, initiatorDepth: 4 });

    // The MPA Reply: decode it as soon as it is whole, then speak RDMAP.
    let reply: ReturnType<typeof decodeMpaFrame> | undefined;
    const gotReply = await waitUntil(() => {
      reply = decodeMpaFrame(bytesOf(chunks));
      return reply.ok;
    }, 10_000);
    if (!gotReply || reply === undefined || !reply.ok) throw new Error('siw sent no MPA Reply');
    const replyFrame = reply.value.frame;
    const target: SiwTarget = { stag: mr.rkey, address: mr.addr };
    const negotiated = negotiateMpa(request, replyFrame);
    if (setup.postRead !== undefined) {
      const { bytes, stag, offset, fencedSend, writeAndInvalidate } = setup.postRead;
      const before = bytesOf(chunks).length;
      const remote = { addr: offset, rkey: stag };
      if (writeAndInvalidate === true)
        qp.postSend({ opcode: 'RDMA_WRITE', sgList: [mr.sge(0, SIW_BUFFER_BYTES)], remote });
      qp.postSend({
        opcode: 'RDMA_READ',
        sgList: [mr.sge(0, bytes)],
        remote: { addr: offset, rkey: stag },
      });
      if (fencedSend === true)
        qp.postSend({ opcode: 'SEND', sgList: [mr.sge(0, SIW_BUFFER_BYTES)], fence: true });
      if (writeAndInvalidate === true)
        qp.postSend({ opcode: 'SEND_WITH_INV', sgList: [mr.sge(0, 8)], invalidateRkey: stag });
      // siw's Read Request (an FPDU after its MPA Reply) is out: its ORQ entry is in place.
      // FPDUs (RFC 5044 §4): 2 + 46 + 4 for the Read Request; 2 + 14 + 64 + 4 for the Write.
      const expected = 52 + (writeAndInvalidate === true ? 84 : 0);
      await waitUntil(() => bytesOf(chunks).length >= before + expected, 2000);
    }
    let wire: Uint8Array;
    if (setup.stream !== undefined) wire = setup.stream(target, negotiated);
    else {
      const { fpdus } = encodeMpaStream(request, setup.messages?.(target) ?? [], {
        peerFrame: replyFrame,
      });
      if (fpdus.length === 0) throw new Error('the probe did not encode');
      wire = Buffer.concat(fpdus);
    }
    await writeInSegments(socket, wire, setup.splits?.(target, negotiated) ?? []);

    const doneWhen = setup.doneWhen;
    await waitUntil(
      () => closedBySiw || doneWhen?.(buffer) === true,
      setup.answerWaitMs ?? ANSWER_WAIT_MS,
    );
    const completion = cq.poll(1)[0];
    const stream = decodeMpaStream(bytesOf(chunks));
    if (!stream.ok) throw stream.error;
    // The wire probes expect well-formed answers; the tester records what it got instead.
    if (setup.stream === undefined && stream.value.error !== undefined) throw stream.value.error;
    const sent = stream.value.fpdus.flatMap((f) => (f.message.ok ? [f.message.value] : []));
    const fpdus = stream.value.fpdus.map((f) =>
      f.message.ok
        ? { message: f.message.value }
        : { ulpdu: new Uint8Array(f.fpdu.ulpdu), error: f.message.error.message },
    );
    const guards = [
      mr.allocation.subarray(0, SIW_GUARD_BYTES),
      mr.allocation.subarray(SIW_GUARD_BYTES + SIW_BUFFER_BYTES),
    ];
    return {
      fpdus,
      negotiated,
      guardsIntact: guards.every((g) => g.every((b) => b === GUARD_FILL)),
      decodeError: stream.value.error?.message,
      sent,
      completion,
      received: new Uint8Array(buffer.subarray(0, 8)),
      memory: new Uint8Array(buffer),
      target,
      closedBySiw,
    };
  } finally {
    socket?.destroy();
    closeQuietly(channel, context);
  }
}
