/** A send list parsed once by the addon (`Qp.prepare`) and posted again and again. */

import { VerbsError } from '../errors.js';
import type { Qp } from '../qp.js';
import type { InFlight } from './wr.js';

/** A send list parsed once by {@link Qp.prepare}; `post()` rings one doorbell for it. */
export class PreparedSend {
  readonly #qp: Qp;
  readonly #id: number;
  readonly #entries: readonly InFlight[];
  readonly #track: (entries: readonly InFlight[]) => void;
  #released = false;

  /** @internal */
  constructor(
    qp: Qp,
    id: number,
    entries: readonly InFlight[],
    track: (e: readonly InFlight[]) => void,
  ) {
    this.#qp = qp;
    this.#id = id;
    this.#entries = entries;
    this.#track = track;
  }

  /** The wrIds of the list. */
  get wrIds(): bigint[] {
    return this.#entries.map((e) => e.wrId);
  }

  /** `ibv_post_send` of the whole list. EBADF if released or if one of its MRs was closed. */
  post(): void {
    if (this.#released)
      throw new VerbsError(
        'EBADF',
        9,
        'ibv_post_send',
        this.#qp.device,
        'the prepared list was released',
      );
    for (const e of this.#entries)
      for (const mr of e.keep)
        if (mr.closed)
          throw new VerbsError(
            'EBADF',
            9,
            'ibv_post_send',
            this.#qp.device,
            'a prepared request uses a closed MR',
          );
    this.#qp.checkUnsignaled(this.#entries);
    this.#qp.native.postPrepared(this.#id);
    this.#track(this.#entries);
  }

  /** Frees the parsed list; idempotent. */
  release(): void {
    if (this.#released) return;
    this.#released = true;
    if (!this.#qp.closed) this.#qp.native.unprepare(this.#id);
  }

  /** Same as {@link release}. */
  [Symbol.dispose](): void {
    this.release();
  }
}
