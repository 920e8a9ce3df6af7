/**
 * Memory regions over Node Buffers. The native MR holds its Buffer until deregistered;
 * a QP also keeps every MR a work request uses until that request completes, so
 * neither the registration nor the memory can disappear under the device.
 */
import { requireName } from '../arguments.js';
import { ACCESS_FLAGS, type AccessFlag } from '../ibverbs/index.js';
import type { NativeMr } from '../native/bindings.js';
import { VerbsArgumentError } from './errors.js';
import { Resource } from './lifetime.js';
import { type ReregChanges, reregMr } from './mr-rereg.js';
import type { Pd } from './pd.js';

/** An access flag name (the C name without `IBV_ACCESS_`), e.g. `'REMOTE_ATOMIC'`. */
export type Access = AccessFlag;

/**
 * The `ibv_access_flags` mask of a list of names (from the engine's table). A name the
 * table lacks throws UnknownNameError (the lookup convention of every layer), which is an
 * ArgumentError like VerbsArgumentError.
 */
export function accessMaskOf(access: readonly Access[]): number {
  if (!Array.isArray(access))
    throw new VerbsArgumentError('access', 'must be an array of flag names');
  let mask = 0;
  access.forEach((name, i) => {
    mask |= ACCESS_FLAGS[requireName('verbs', 'access flag', ACCESS_FLAGS, name, `access[${i}]`)];
  });
  return mask;
}

/** Where a remote peer's memory is: the address and rkey of (part of) an MR. */
export interface RemoteRef {
  readonly addr: bigint;
  readonly rkey: number;
}

/** A scatter/gather element over a registered MR (bounds checked before posting). */
export interface Sge {
  readonly mr: Mr;
  /** Byte offset into the MR; 0 by default. */
  readonly offset?: number;
  /** Byte count; the rest of the MR by default. */
  readonly length?: number;
}

/**
 * Which part of an allocation {@link Pd.allocMr} registers: `[offset, offset + length)`.
 * The bytes around it belong to the caller but not to the MR (e.g. guard words that a
 * test checks no remote access touched).
 */
export interface RegisteredRange {
  readonly offset: number;
  readonly length: number;
}

/**
 * A memory region (`ibv_mr`) over a Buffer. `close()` is `ibv_dereg_mr`; the Buffer is
 * released only after the deregistration.
 */
export class Mr extends Resource<NativeMr> {
  #buffer: Buffer;
  #allocation: Buffer;
  #allocationOffset: number;
  #access: readonly Access[];
  #pd: Pd;
  #closed = false;
  // Fixed at registration (and at each rereg): read once, since every SGE posted reads them
  // and each native getter is an N-API call (four per SGE cost a few microseconds per post
  // under TCG).
  #lkey: number;
  #rkey: number;
  #addr: bigint;
  #length: number;

  /** @internal use `Pd.regMr` or `Pd.allocMr` */
  constructor(
    native: NativeMr,
    allocation: Buffer,
    access: readonly Access[],
    pd: Pd,
    range?: RegisteredRange,
  ) {
    super(native, 'Mr', [pd]);
    this.#allocation = allocation;
    this.#allocationOffset = range?.offset ?? 0;
    this.#buffer =
      range === undefined
        ? allocation
        : allocation.subarray(range.offset, range.offset + range.length);
    this.#access = access;
    this.#pd = pd;
    this.#lkey = native.lkey;
    this.#rkey = native.rkey;
    this.#addr = native.addr;
    this.#length = native.length;
  }

  /** The registered memory (`length` bytes at `addr`). */
  get buffer(): Buffer {
    return this.#buffer;
  }
  /**
   * The whole memory the registration lies in: the Buffer given to `regMr` (or to
   * {@link rereg}), or everything `allocMr` allocated (`buffer` starts at
   * {@link allocationOffset} in it).
   */
  get allocation(): Buffer {
    return this.#allocation;
  }
  /** Where {@link buffer} starts in {@link allocation} (0 unless `allocMr` got a range). */
  get allocationOffset(): number {
    return this.#allocationOffset;
  }
  /** The access flags it was registered (or last re-registered) with. */
  get access(): readonly Access[] {
    return this.#access;
  }
  /** The protection domain (kept reachable, and with it the device, while this MR lives). */
  get pd(): Pd {
    return this.#pd;
  }

  /**
   * `ibv_rereg_mr`: changes this MR's memory (`buffer`), its protection domain (`pd`)
   * and its access flags (`access`) in place, whichever are given (at least one). Its
   * keys may change: read `lkey` and `rkey` again. On failure (VerbsError; EOPNOTSUPP
   * from a provider without it, librxe and libsiw among them) nothing changed. After a PD
   * change, the new PD's close closes this MR, the old one's no longer.
   */
  rereg(changes: ReregChanges): void {
    const done = reregMr(this, changes, accessMaskOf);
    if (done.pd !== undefined) {
      this.reparent(this.#pd, done.pd, 'Mr');
      this.#pd = done.pd;
    }
    if (done.buffer !== undefined) {
      this.#buffer = done.buffer;
      this.#allocation = done.buffer;
      this.#allocationOffset = 0;
    }
    if (done.access !== undefined) this.#access = done.access;
    this.#lkey = done.native.lkey;
    this.#rkey = done.native.rkey;
    this.#addr = done.native.addr;
    this.#length = done.native.length;
  }

  /** Local key. */
  get lkey(): number {
    return this.#lkey;
  }
  /** Remote key (0 on some providers when no remote access was asked for). */
  get rkey(): number {
    return this.#rkey;
  }
  /** The registered start address (the Buffer's address). */
  get addr(): bigint {
    return this.#addr;
  }
  /** The registered length in bytes. */
  get length(): number {
    return this.#length;
  }
  /** True once deregistered. */
  override get closed(): boolean {
    // Tracked here too: posting checks it for every SGE, and a native getter costs more.
    return this.#closed; // only close() releases a reachable MR (finalizers run on unreachable ones)
  }

  /** An SGE over `[offset, offset + length)` of this MR. */
  sge(offset = 0, length?: number): Sge {
    return length === undefined ? { mr: this, offset } : { mr: this, offset, length };
  }

  /** What a peer needs to target this MR at `offset`. */
  remote(offset = 0): RemoteRef {
    if (!Number.isInteger(offset) || offset < 0 || offset > this.length)
      throw new VerbsArgumentError('offset', `${offset} is outside the MR (length ${this.length})`);
    return { addr: this.addr + BigInt(offset), rkey: this.rkey };
  }

  protected override onClose(): void {
    this.#closed = true;
  }
}
