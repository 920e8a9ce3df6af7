/**
 * How verbs objects close (issue 9, issue 20): every one is a {@link Resource} over one
 * native handle. `close()` on a parent closes its live children first, in the order
 * libibverbs needs (context -> PDs with their QPs, AHs and MRs -> CQs; a QP before its
 * CQs; event channel -> cm_ids with their QP), children being tracked weakly as pyverbs
 * does. The addon does the same for children JavaScript forgot but has not finalized
 * yet (native/resource.h), so the result never depends on the garbage collector.
 * `{ cascade: false }` refuses instead (VerbsError EBUSY, nothing released) while live
 * children remain.
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

/**
 * Closes each root with its live children (the cascade of {@link Resource.close}), in the
 * order given, skipping undefined ones and ignoring each one's error: the teardown after an
 * earlier error, which is the one worth reporting, or of a run whose outcome is already
 * known. Roots are the tops of the trees a program made (a device context, an rdma_cm
 * event channel); their children need no list of their own.
 */
export function closeQuietly(...roots: readonly (Closable | undefined)[]): void {
  for (const root of roots) {
    try {
      root?.close();
    } catch {
      // best effort (see above)
    }
  }
}

/**
 * The close order among the children of one parent, first to last (the addon's `Rank`
 * in native/common.h): memory windows first, before the QPs a type 2 window is bound
 * through (rxe_mw.c rxe_do_bind_mw takes a reference on the QP that only the window's
 * invalidation or deallocation drops, and destroying the QP first waited about 50 s per
 * window on 6.1) and before the MRs they are bound to (rxe refuses to deregister an MR
 * with bound windows); a QP before the SRQ it receives through (ibv_destroy_srq refuses
 * while a QP uses it) and before the AHs and MRs of its PD; PDs before CQs.
 */
export const CLOSE_ORDER = ['Mw', 'Qp', 'Srq', 'Ah', 'Mr', 'Pd', 'Cq', 'CmId'] as const;

/** The kind of a verbs object that has a parent. */
export type ChildKind = (typeof CLOSE_ORDER)[number];

/** A weak list of children, closed by kind in {@link CLOSE_ORDER}, then in creation order. */
export class Children<T extends Closable> {
  readonly #refs: { readonly rank: number; readonly ref: WeakRef<T> }[] = [];

  add(child: T, kind: ChildKind): void {
    for (let i = this.#refs.length - 1; i >= 0; i--)
      if (this.#refs[i]?.ref.deref() === undefined) this.#refs.splice(i, 1);
    const rank = CLOSE_ORDER.indexOf(kind);
    const at = this.#refs.findIndex((e) => e.rank > rank);
    const entry = { rank, ref: new WeakRef(child) };
    if (at < 0) this.#refs.push(entry);
    else this.#refs.splice(at, 0, entry);
  }

  /** Forgets `child` (one that moved to another parent). */
  remove(child: T): void {
    const at = this.#refs.findIndex((e) => e.ref.deref() === child);
    if (at >= 0) this.#refs.splice(at, 1);
  }

  /** Closes every reachable, open child, in order. */
  closeAll(): void {
    for (const entry of [...this.#refs]) {
      const child = entry.ref.deref();
      if (child !== undefined && !child.closed) child.close();
      const at = this.#refs.indexOf(entry);
      if (at >= 0) this.#refs.splice(at, 1);
    }
  }
}

/** What the addon gives every native verbs object. */
export interface NativeResource {
  readonly closed: boolean;
  close(cascade?: boolean): void;
}

/**
 * The base of every verbs object: its native handle, `closed`, an idempotent
 * `close(options)` that closes the live children first (or refuses with EBUSY), and
 * `[Symbol.dispose]`. A subclass says what else its close does in {@link onClosing}
 * (before the native close) and {@link onClose} (once closed), and when it may not close
 * at all in {@link assertClosable}.
 */
export abstract class Resource<N extends NativeResource = NativeResource> implements Closable {
  /** @internal */
  readonly native: N;
  readonly #children = new Children<Resource>();

  /** `kind` and `parents`: the parents that close this one first (none for a root). */
  protected constructor(native: N, kind?: ChildKind, parents: readonly Resource[] = []) {
    this.native = native;
    if (kind === undefined) return;
    // (A host test's stand-in parent is no Resource: it has no children to close.)
    for (const parent of new Set(parents))
      if (#children in parent) parent.#children.add(this, kind);
  }

  /** True once closed. */
  get closed(): boolean {
    return this.native.closed;
  }

  /**
   * Closes this object after its live children (see the class's own documentation for
   * which). `{ cascade: false }`: refuses with VerbsError EBUSY while any is open.
   * Idempotent.
   */
  close(options: CloseOptions = {}): void {
    if (this.closed) return;
    const cascade = options.cascade ?? true;
    this.assertClosable();
    if (cascade) this.#children.closeAll();
    this.onClosing();
    this.native.close(cascade);
    this.onClose();
  }

  /** Same as {@link close}. */
  [Symbol.dispose](): void {
    this.close();
  }

  /**
   * This object moves from parent `from` to parent `to` (an MR that `ibv_rereg_mr` moved to
   * another PD): `to`'s close closes it from now on, `from`'s no longer.
   */
  protected reparent(from: Resource, to: Resource, kind: ChildKind): void {
    if (#children in from) from.#children.remove(this);
    if (#children in to) to.#children.add(this, kind);
  }

  /** Throws when this object may not close now, children or not (before any closes). */
  protected assertClosable(): void {}

  /** Runs after the children closed, before the native close (which may refuse). */
  protected onClosing(): void {}

  /** Runs once the native object is closed. */
  protected onClose(): void {}
}
