/**
 * How the two guests of the link mode agree on each scenario: one TCP connection across
 * the RoCE link (guest B listens), one JSON object per line. Guest A (requester) drives:
 * `setup` (its QP number and GID), B answers `ready` (its QP, or its rdma_cm port, and its
 * MR's address and rkey) once its receives are posted (siw: and `accepted` once its
 * rdma_cm accept returned); A posts and waits, then `done`;
 * B answers `finished` (its completions, its memory) and both tear down; B answers a
 * setup it has no device for with `refused`. bigints travel as decimal strings. The same
 * protocol runs between two hosts (`run --peer`, `peer serve`: src/interop/peer/).
 */
import type { RunEnvironment } from '../environment.js';
import type { StreamRequesterObservation, StreamResponderObservation } from './write-stream.js';

/** Guest B's control port on the link (any unprivileged port does). */
export const CONTROL_PORT = 18515;

export interface SetupMessage {
  readonly type: 'setup';
  readonly id: string;
  /** rxe: the requester QP's number, first PSN and GID (hex). */
  readonly qpNum?: number;
  readonly psn?: number;
  readonly gid?: string;
  /** rxe, a hammer program: the further requester QPs' numbers (their PSNs: hammerPsn). */
  readonly extraQpNums?: readonly number[];
}

export interface ReadyMessage {
  readonly type: 'ready';
  readonly id: string;
  readonly qpNum?: number;
  readonly psn?: number;
  readonly gid?: string;
  /** siw: the rdma_cm listener's port on B's iWARP address. */
  readonly port?: number;
  /** siw: B's iWARP address (across two hosts the requester knows only the control host's). */
  readonly ip?: string;
  readonly addr: string;
  readonly rkey: number;
  /** rxe, a hammer program: the responder QPs for the requester's further QPs, in order. */
  readonly extraQpNums?: readonly number[];
  /**
   * Across two hosts (`peer serve`): the responder's environment (kernel, rdma-core, its
   * device's facts), which the requester's judge keys the responder's records on.
   */
  readonly environment?: RunEnvironment;
}

/**
 * siw: B's rdma_cm accept returned (ESTABLISHED on B's side, every connection of the
 * scenario). A posts nothing before it: siw_accept (drivers/infiniband/sw/siw/siw_cm.c)
 * sends the MPA Reply before it hands the socket's data_ready to the QP
 * (siw_qp_socket_assoc), and an FPDU that lands in between wakes siw_cm_llp_data_ready,
 * which ignores data in RDMA mode: it stays unread until more data comes (docs/interop.md).
 */
export interface AcceptedMessage {
  readonly type: 'accepted';
  readonly id: string;
}

export interface DoneMessage {
  readonly type: 'done';
  readonly id: string;
  /** Requests that completed successfully and consumed a receive: the responder waits for as many. */
  readonly consumed?: number;
}

/** A completion as the link observation keeps it. */
export interface LinkCompletion {
  readonly wrId: string;
  readonly status: string;
  readonly opcode?: string;
  readonly byteLen: number;
  readonly imm?: number;
  /** Atomics and Reads: the 8 bytes that came back into the local slot (decimal). */
  readonly fetched?: string;
  /** The requester's completions: milliseconds from the last post. */
  readonly elapsedMs?: number;
}

export interface FinishedMessage {
  readonly type: 'finished';
  readonly id: string;
  readonly completions: readonly LinkCompletion[];
  /** The responder buffer after the program (guards included), hex; '' for a stream. */
  readonly memory: string;
  /** A write stream (write-stream.ts): B's receives and its buffer against the pattern. */
  readonly stream?: StreamResponderObservation;
}

/**
 * The responder cannot serve this scenario (`peer serve` has one device: a RoCE one
 * refuses the iWARP scenarios and the other way round); the requester stops there.
 */
export interface RefusedMessage {
  readonly type: 'refused';
  readonly id: string;
  readonly reason: string;
}

export interface ByeMessage {
  readonly type: 'bye';
}

export type ControlMessage =
  | SetupMessage
  | ReadyMessage
  | AcceptedMessage
  | DoneMessage
  | FinishedMessage
  | RefusedMessage
  | ByeMessage;

/** What guest A records of one scenario (share dir, `link-observations.json`). */
export interface LinkObservation {
  readonly id: string;
  readonly requesterQpn?: number;
  readonly responderQpn?: number;
  /** siw: B's listening TCP port (the connection's server port). */
  readonly serverPort?: number;
  readonly remote: { readonly addr: string; readonly rkey: number };
  readonly local: { readonly addr: string; readonly lkey: number };
  readonly post: string;
  /** The index of the request ibv_post_send's bad_wr named, when it refused the post. */
  readonly badWr?: number;
  readonly requester: readonly LinkCompletion[];
  readonly responder: readonly LinkCompletion[];
  readonly memory: string;
  /** A hammer program: what the concurrency step observed (fetched values in decimal). */
  readonly hammer?: {
    readonly post: string;
    readonly succeeded: number;
    readonly fetched: readonly string[];
    readonly before: string;
  };
  /** A write stream (write-stream.ts): what each side saw. */
  readonly stream?: {
    readonly requester: StreamRequesterObservation;
    readonly responder?: StreamResponderObservation;
  };
  /** rxe, a hammer program: every QP pair of the scenario beyond the first (requester, responder). */
  readonly extraQpns?: readonly (readonly [number, number])[];
  readonly error?: string;
}

/** The other end sent a line that is no control message (not an rdma-interop peer?). */
export class ControlProtocolError extends Error {
  override readonly name = 'ControlProtocolError';
}

/** Splits a byte stream into JSON messages, one per line. */
export class MessageLines {
  #pending = '';
  #failure: ControlProtocolError | undefined;
  readonly #rejecters: ((error: Error) => void)[] = [];
  readonly #queue: ControlMessage[] = [];
  readonly #waiters: ((m: ControlMessage) => void)[] = [];

  push(chunk: Buffer): void {
    this.#pending += chunk.toString('utf8');
    for (;;) {
      const end = this.#pending.indexOf('\n');
      if (end < 0) break;
      const line = this.#pending.slice(0, end);
      this.#pending = this.#pending.slice(end + 1);
      if (line.trim() === '') continue;
      let message: ControlMessage;
      try {
        message = JSON.parse(line) as ControlMessage;
        if (typeof message !== 'object' || message === null || typeof message.type !== 'string')
          throw new Error('no message type');
      } catch {
        this.#failure = new ControlProtocolError(
          `the control connection sent ${JSON.stringify(line.slice(0, 60))}, no rdma-interop control message`,
        );
        for (const reject of this.#rejecters.splice(0)) reject(this.#failure);
        this.#waiters.splice(0);
        return;
      }
      const waiter = this.#waiters.shift();
      if (waiter) waiter(message);
      else this.#queue.push(message);
    }
  }

  /** The next message (rejects after `timeoutMs`). */
  next(timeoutMs: number): Promise<ControlMessage> {
    const queued = this.#queue.shift();
    if (queued) return Promise.resolve(queued);
    if (this.#failure !== undefined) return Promise.reject(this.#failure);
    return new Promise((resolve, reject) => {
      const forget = () => {
        const at = this.#waiters.indexOf(waiter);
        if (at >= 0) this.#waiters.splice(at, 1);
        const r = this.#rejecters.indexOf(rejecter);
        if (r >= 0) this.#rejecters.splice(r, 1);
      };
      const timer = setTimeout(() => {
        forget();
        reject(new Error(`no control message within ${timeoutMs} ms`));
      }, timeoutMs);
      const waiter = (m: ControlMessage) => {
        clearTimeout(timer);
        forget();
        resolve(m);
      };
      const rejecter = (error: Error) => {
        clearTimeout(timer);
        reject(error);
      };
      this.#waiters.push(waiter);
      this.#rejecters.push(rejecter);
    });
  }
}

export function encodeMessage(message: ControlMessage): string {
  return `${JSON.stringify(message)}\n`;
}
