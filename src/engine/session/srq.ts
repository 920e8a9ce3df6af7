/**
 * A shared receive queue's count and its limit (IBTA 1.5 §10.2.9): receives are taken in
 * the order they were posted, by whichever QP a request that consumes one arrives on. The
 * limit, once armed (ibv_modify_srq IBV_SRQ_LIMIT, §10.2.9.2 / §11.6.3.3), raises
 * SRQ_LIMIT_REACHED once, when the receives left fall below it, and is then disarmed: a
 * query reads 0 (rxe_resp.c get_srq_wqe and siw_qp_rx.c siw_rqe_get test it as each
 * receive is taken, and set the limit to 0).
 */
export class SrqCount {
  #posted = 0;
  #consumed = 0;
  #limit = 0;
  #reached = false;

  /** One more receive posted. */
  posted(): void {
    this.#posted += 1;
  }

  /** The receives consumed so far are `total`: takes the new ones one by one. */
  consumedUpTo(total: number): void {
    while (this.#consumed < total) {
      this.#consumed += 1;
      if (this.#limit > 0 && this.#posted - this.#consumed < this.#limit) {
        this.#limit = 0;
        this.#reached = true;
      }
    }
  }

  /** Arms the limit (0 disarms it). */
  arm(limit: number): void {
    this.#limit = limit;
  }

  /** The armed limit (0: not armed). */
  get limit(): number {
    return this.#limit;
  }

  /** Whether SRQ_LIMIT_REACHED was raised since the last call (the event is read once). */
  takeEvent(): boolean {
    const reached = this.#reached;
    this.#reached = false;
    return reached;
  }
}
