/**
 * How parents close (issue 9): `close()` on a context, PD or CQ closes its live children
 * first, in the order libibverbs needs (context -> PDs with their QPs, AHs and MRs ->
 * CQs; a QP before its CQs), children being tracked weakly as pyverbs does. The addon
 * does the same for children JavaScript forgot but has not finalized yet, so the result
 * never depends on the garbage collector. `{ cascade: false }` refuses instead (VerbsError
 * EBUSY, nothing released) while live children remain.
 */

/** Options of a parent's `close()`. */
export interface CloseOptions {
  /** Close live children first (default true); false: refuse with EBUSY while any live. */
  readonly cascade?: boolean;
}

/** Something a parent can close. */
export interface Closable {
  readonly closed: boolean;
  close(): void;
}

/** A weak set of children, closed in insertion order. */
export class Children<T extends Closable> {
  readonly #refs = new Set<WeakRef<T>>();

  add(child: T): void {
    for (const ref of this.#refs) if (ref.deref() === undefined) this.#refs.delete(ref);
    this.#refs.add(new WeakRef(child));
  }

  /** Closes every reachable, open child. */
  closeAll(): void {
    for (const ref of [...this.#refs]) {
      const child = ref.deref();
      if (child !== undefined && !child.closed) child.close();
      this.#refs.delete(ref);
    }
  }
}
