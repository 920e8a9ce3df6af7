/**
 * The MPA framer of both streaming capture decoders, over one TCP direction (TcpStream): a
 * direction moves from undecided (not enough bytes to tell), to MPA (it starts with an MPA
 * Request or Reply key, RFC 5044 §7.1) or not MPA, and once both frames are known (or the
 * peer will send none) to negotiated (CRC and markers, RFC 5044 §7.1), when its bytes are
 * FPDUs. What is found goes to the decoder's sink: typed objects (stream-decode.ts) or lazy
 * views (lazy-decode.ts); the sink frames the FPDUs itself, in its own way.
 */
import type { DecodeError } from '../errors.js';
import type { MpaNegotiated, MpaRequestReply } from '../iwarp/messages.js';
import { type DecodedFpdu, decodeFpdu } from '../iwarp/mpa.js';
import { decodeMpaFrame, MPA_KEY_LENGTH, mpaFrameKind } from '../iwarp/mpa-frames.js';
import { negotiateMpa } from '../iwarp/stream.js';
import { rebased, TcpStream } from './tcp-stream.js';

/** Where a direction stands (see the module comment). */
export type MpaDirectionState = 'undecided' | 'mpa' | 'not-mpa' | 'stopped';

/** What a decoder does with what the framer finds in its directions `D` (frames `F`). */
export interface MpaSink<F, D extends MpaDirection<F>> {
  /** The direction is not MPA: the frames its bytes came in are other frames. */
  notMpa(d: D): void;
  /** The direction starts with an MPA frame (its connection is an iWARP connection). */
  opened(d: D): void;
  /** The direction's Request or Reply, which starts at frame `from`. */
  mpaFrame(d: D, frame: MpaRequestReply, from: F): void;
  /** What stopped the direction's decoding (or, at the end, what was left undecoded). */
  problem(d: D, from: F, error: DecodeError): void;
  /**
   * Frames the complete FPDUs of the pending bytes (`d.negotiated` is set), consuming them;
   * `d.nextFpdu()` does it for a sink that wants the eager decoder's objects.
   */
  fpdus(d: D): void;
}

/** One TCP direction, reassembled and MPA-framed as it arrives. */
export class MpaDirection<F> extends TcpStream<F> {
  state: MpaDirectionState = 'undecided';
  /** Frames whose bytes went here while undecided (other frames if it is not MPA). */
  undecidedFrames = 0;
  /** The direction's Request or Reply (a copy: the pending bytes are reused). */
  frame: MpaRequestReply | undefined;
  negotiated: MpaNegotiated | undefined;
  /** Stream offset of the first FPDU (the marker grid's origin, RFC 5044 §5). */
  firstFpduOffset = 0;
  /** The other direction of the connection, once it has sent anything. */
  peer: this | undefined;

  /** Keeps nothing more: a direction that will not be decoded (further). */
  stop(state: 'not-mpa' | 'stopped'): void {
    this.state = state;
    this.release();
  }

  /** Frames what the pending bytes allow, reporting to `sink`. */
  advance<D extends MpaDirection<F>>(this: D, sink: MpaSink<F, D>): void {
    if (this.state === 'undecided') {
      if (this.pendingLength < MPA_KEY_LENGTH) return;
      if (mpaFrameKind(this.pending(), 0) === undefined) {
        sink.notMpa(this);
        this.stop('not-mpa');
        return;
      }
      this.state = 'mpa';
      sink.opened(this);
    }
    if (this.state !== 'mpa') return;
    if (this.frame === undefined) {
      const r = decodeMpaFrame(this.pending(), 0);
      if (!r.ok) {
        if (r.error.reason === 'truncated') return;
        sink.problem(this, this.frameAt(this.consumed), r.error);
        this.stop('stopped');
        return;
      }
      const at = this.frameAt(this.consumed);
      this.frame = { ...r.value.frame, privateData: r.value.frame.privateData.slice() };
      this.firstFpduOffset = this.consumed + r.value.length;
      this.consume(r.value.length);
      sink.mpaFrame(this, this.frame, at);
      // The peer may have been waiting for this frame to negotiate.
      const peer = this.peer;
      if (peer?.frame !== undefined && peer.negotiated === undefined) peer.advance(sink);
    }
    // A rejected connection carries no FPDUs (RFC 5044 §7.1.5).
    if (this.frame.reject) {
      this.stop('stopped');
      return;
    }
    if (this.negotiated === undefined) {
      // Wait for the peer's frame (RFC 5044 §7.1: FPDUs follow the Reply), unless the peer
      // will never send one.
      const peer = this.peer;
      if (peer?.frame === undefined && peer?.state !== 'not-mpa' && peer?.state !== 'stopped')
        return;
      this.negotiated = negotiateMpa(this.frame, peer?.frame);
    }
    sink.fpdus(this);
  }

  /**
   * The next complete FPDU of the pending bytes through the eager FPDU decoder (markers
   * taken out, CRC checked; views of the pending bytes, valid until the next append), or
   * undefined when it is incomplete or bad (then reported to `sink` and the direction
   * stopped). The caller consumes it.
   */
  nextFpdu<D extends MpaDirection<F>>(this: D, sink: MpaSink<F, D>): DecodedFpdu | undefined {
    if (this.pendingLength === 0) return undefined;
    const position = this.consumed - this.firstFpduOffset;
    const r = decodeFpdu(this.pending(), 0, { ...this.negotiated!, position });
    if (r.ok) return r.value;
    if (r.error.reason !== 'truncated') {
      sink.problem(this, this.frameAt(this.consumed), rebased(r.error, this.consumed));
      this.stop('stopped');
    }
    return undefined;
  }

  /** The end of the capture: what only the end completes or leaves undecoded. */
  finish<D extends MpaDirection<F>>(this: D, sink: MpaSink<F, D>): void {
    if (this.state === 'undecided') {
      sink.notMpa(this);
      return;
    }
    if (this.state !== 'mpa') return;
    if (this.frame !== undefined && this.negotiated === undefined && !this.frame.reject) {
      this.negotiated = negotiateMpa(this.frame, this.peer?.frame);
      this.advance(sink);
    }
    if (this.state !== 'mpa') return;
    const rest = this.pending();
    if (rest.length > 0 && this.negotiated !== undefined && !this.frame?.reject) {
      // The whole-capture decoder's "decoding stopped" error for a cut-off FPDU.
      const r = decodeFpdu(rest, 0, {
        ...this.negotiated,
        position: this.consumed - this.firstFpduOffset,
      });
      if (!r.ok) sink.problem(this, this.frameAt(this.consumed), rebased(r.error, this.consumed));
    } else if (rest.length > 0 && this.frame === undefined) {
      const r = decodeMpaFrame(rest, 0);
      if (!r.ok) sink.problem(this, this.frameAt(this.consumed), r.error);
    }
    const hole = this.holeError();
    if (hole !== undefined) sink.problem(this, this.lastFrom, hole);
    this.stop('stopped');
  }
}
