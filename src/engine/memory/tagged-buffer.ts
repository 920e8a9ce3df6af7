/**
 * The Responder's Tagged Buffers (RFC 5040 §2.1, §5.1; RFC 5041 §3, §7.1): an STag names
 * a region with a base Tagged Offset, a length, access rights, a protection domain and
 * optionally the one RDMAP Stream it is bound to. Lookups return a typed failure, never
 * throw, so a protocol outcome is never an exception.
 */

import { describeValue } from '../../arguments.js';
import { RdmaInteropError } from '../../errors.js';
import { type AccessFlag, hasAccess } from '../../ibverbs/access-flags.js';
import type { MemoryByteOrder } from './byte-order.js';

/** 2^64: Tagged Offsets are 64-bit and must not wrap (RFC 5041 §7.1, RFC 5040 §4.8). */
const TWO_POW_64 = 1n << 64n;

/** What a caller supplies to register a Tagged Buffer. */
export interface TaggedBufferRegistration {
  /** 32-bit Steering Tag. */
  readonly stag: number;
  /** Tagged Offset of the first byte (64-bit). */
  readonly baseTaggedOffset: bigint;
  /** Length in bytes; the memory is this long. */
  readonly length: number;
  /** libibverbs access mask (`ACCESS_FLAGS`). */
  readonly access: number;
  /** Protection domain handle; the STag is usable only by streams of the same PD. */
  readonly protectionDomain: number;
  /**
   * When set, the STag is associated with this one RDMAP Stream only (a memory window
   * bound to a QP); otherwise with every stream of the protection domain.
   */
  readonly streamId?: number;
  /**
   * Address of the first byte in the Responder's address space, used for the 64-bit
   * alignment rule of RFC 7306 §5.1 ("ULP Buffer address"). Defaults to the base
   * Tagged Offset (a VA-based registration, as libibverbs does without ZERO_BASED).
   */
  readonly baseAddress?: bigint;
  /** Byte order of this memory (RFC 7306 §5.1.1); little-endian by default. */
  readonly byteOrder?: MemoryByteOrder;
  /** Initial contents; copied. Zero-filled when absent. */
  readonly contents?: Uint8Array;
}

/** A memory window over a registered region ({@link TaggedBufferTable.bindWindow}). */
export interface TaggedWindowBinding {
  /** The window's 32-bit STag (its rkey). */
  readonly stag: number;
  /** Tagged Offset of the window's first byte (inside the region). */
  readonly baseTaggedOffset: bigint;
  readonly length: number;
  /** libibverbs access mask of the window (`ACCESS_FLAGS`). */
  readonly access: number;
  /** Type 2: the stream (QP) it is bound on; type 1: undefined (every stream of the PD). */
  readonly streamId?: number;
}

/** A registered Tagged Buffer. `memory` is the live target memory. */
export interface TaggedBuffer {
  readonly stag: number;
  readonly baseTaggedOffset: bigint;
  readonly length: number;
  readonly access: number;
  readonly protectionDomain: number;
  readonly streamId: number | undefined;
  readonly baseAddress: bigint;
  readonly byteOrder: MemoryByteOrder;
  readonly memory: Uint8Array;
  /** A view of `memory`, kept so atomics do not create one per operation. */
  readonly view: DataView;
  /** False after invalidation (RFC 5040 §5.2 Send with Invalidate, local invalidate). */
  valid: boolean;
}

/**
 * Why a tagged access was refused. Each maps to one RFC 5040 §4.8 Remote Protection
 * Error code (see `../errors/failure-table.ts`).
 */
export type TaggedAccessFailure =
  | 'invalid-stag'
  | 'stag-not-associated'
  | 'access-rights'
  | 'to-wrap'
  | 'base-bounds';

/** The accessing side: which stream, in which protection domain. */
export interface StreamIdentity {
  readonly streamId: number;
  readonly protectionDomain: number;
}

/** A granted access: the buffer and the byte offset into its memory. */
export interface TaggedAccess {
  readonly buffer: TaggedBuffer;
  readonly offset: number;
  /** Address of the first accessed byte (for alignment checks). */
  readonly address: bigint;
}

/** Result of a tagged access check. */
export type TaggedAccessResult =
  | { readonly ok: true; readonly access: TaggedAccess }
  | { readonly ok: false; readonly failure: TaggedAccessFailure };

/**
 * The largest buffer the reference engine models (1 GiB): it allocates the bytes it
 * models, and a scenario needs a few KiB.
 */
const MAX_TAGGED_BUFFER_LENGTH = 2 ** 30;

/** Thrown only for programming errors of the caller (bad registration arguments). */
export class TaggedBufferRegistrationError extends RdmaInteropError {
  override readonly name = 'TaggedBufferRegistrationError';
  readonly origin = 'engine';
}

/** The STag table of one Responder. */
export class TaggedBufferTable {
  readonly #buffers = new Map<number, TaggedBuffer>();

  /** Registers a buffer; throws `TaggedBufferRegistrationError` on invalid arguments. */
  register(registration: TaggedBufferRegistration): TaggedBuffer {
    if (typeof registration !== 'object' || registration === null)
      throw new TaggedBufferRegistrationError(
        `${describeValue(registration)} is not a registration`,
      );
    const { stag, baseTaggedOffset, length } = registration;
    if (!Number.isInteger(stag) || stag < 0 || stag > 0xffff_ffff)
      throw new TaggedBufferRegistrationError(`STag ${describeValue(stag)} is not a 32-bit value`);
    if (
      typeof baseTaggedOffset !== 'bigint' ||
      baseTaggedOffset < 0n ||
      baseTaggedOffset >= TWO_POW_64
    )
      throw new TaggedBufferRegistrationError(
        'base Tagged Offset is not a 64-bit value (a bigint)',
      );
    if (!Number.isSafeInteger(length) || length < 0 || length > MAX_TAGGED_BUFFER_LENGTH)
      throw new TaggedBufferRegistrationError(
        `length ${describeValue(length)} is not a byte count in [0, ${MAX_TAGGED_BUFFER_LENGTH}]`,
      );
    for (const field of ['access', 'protectionDomain'] as const) {
      const v = registration[field];
      if (!Number.isInteger(v) || v < 0 || v > 0xffff_ffff)
        throw new TaggedBufferRegistrationError(
          `${field} ${describeValue(v)} is not a 32-bit value`,
        );
    }
    const { streamId, baseAddress, byteOrder, contents } = registration;
    if (streamId !== undefined && (!Number.isInteger(streamId) || streamId < 0))
      throw new TaggedBufferRegistrationError(
        `streamId ${describeValue(streamId)} is not a stream number`,
      );
    if (
      baseAddress !== undefined &&
      (typeof baseAddress !== 'bigint' || baseAddress < 0n || baseAddress >= TWO_POW_64)
    )
      throw new TaggedBufferRegistrationError('baseAddress is not a 64-bit value (a bigint)');
    if (byteOrder !== undefined && byteOrder !== 'little-endian' && byteOrder !== 'big-endian')
      throw new TaggedBufferRegistrationError(`unknown byte order ${describeValue(byteOrder)}`);
    if (contents !== undefined && !(contents instanceof Uint8Array))
      throw new TaggedBufferRegistrationError('contents is not a Uint8Array');
    if (this.#buffers.has(stag))
      throw new TaggedBufferRegistrationError(`STag 0x${stag.toString(16)} already registered`);
    if (registration.contents !== undefined && registration.contents.length !== length)
      throw new TaggedBufferRegistrationError('contents length differs from length');
    const memory = new Uint8Array(length);
    if (registration.contents !== undefined) memory.set(registration.contents);
    const buffer: TaggedBuffer = {
      stag,
      baseTaggedOffset,
      length,
      access: registration.access,
      protectionDomain: registration.protectionDomain,
      streamId: registration.streamId,
      baseAddress: registration.baseAddress ?? baseTaggedOffset,
      byteOrder: registration.byteOrder ?? 'little-endian',
      memory,
      view: new DataView(memory.buffer, memory.byteOffset, memory.byteLength),
      valid: true,
    };
    this.#buffers.set(stag, buffer);
    return buffer;
  }

  /**
   * Binds a memory window (IBTA 1.5 §10.6.7; RFC 5040 §2.1 "STag" names windows too):
   * a further STag over `[baseTaggedOffset, +length)` of the registered region `parent`,
   * sharing its memory, with its own rights (at most what the region grants remotely)
   * and, for a type 2 window, the one stream (QP) it was bound on (§10.6.7.2.1: a type 2
   * window is associated with a QP; an access through another QP fails, as
   * `stag-not-associated`). Throws `TaggedBufferRegistrationError` on a window outside
   * the region or an STag already in use.
   */
  bindWindow(parent: number, window: TaggedWindowBinding): TaggedBuffer {
    const region = this.#buffers.get(parent);
    if (region === undefined)
      throw new TaggedBufferRegistrationError(`no region under STag 0x${parent.toString(16)}`);
    const { stag, baseTaggedOffset, length, access, streamId } = window;
    if (!Number.isInteger(stag) || stag < 0 || stag > 0xffff_ffff)
      throw new TaggedBufferRegistrationError(`STag ${describeValue(stag)} is not a 32-bit value`);
    if (this.#buffers.has(stag))
      throw new TaggedBufferRegistrationError(`STag 0x${stag.toString(16)} already registered`);
    const start =
      typeof baseTaggedOffset === 'bigint' ? baseTaggedOffset - region.baseTaggedOffset : -1n;
    if (
      start < 0n ||
      !Number.isSafeInteger(length) ||
      length < 0 ||
      start + BigInt(length) > BigInt(region.length)
    )
      throw new TaggedBufferRegistrationError('the window is not inside its region');
    if (!Number.isInteger(access) || access < 0 || access > 0xffff_ffff)
      throw new TaggedBufferRegistrationError(
        `access ${describeValue(access)} is not a 32-bit value`,
      );
    if (streamId !== undefined && (!Number.isInteger(streamId) || streamId < 0))
      throw new TaggedBufferRegistrationError(
        `streamId ${describeValue(streamId)} is not a stream number`,
      );
    const offset = Number(start);
    const memory = region.memory.subarray(offset, offset + length);
    const buffer: TaggedBuffer = {
      stag,
      baseTaggedOffset,
      length,
      access,
      protectionDomain: region.protectionDomain,
      streamId,
      baseAddress: region.baseAddress + start,
      byteOrder: region.byteOrder,
      memory,
      view: new DataView(memory.buffer, memory.byteOffset, memory.byteLength),
      valid: true,
    };
    this.#buffers.set(stag, buffer);
    return buffer;
  }

  /** The buffer registered under `stag`, valid or not. */
  get(stag: number): TaggedBuffer | undefined {
    return this.#buffers.get(stag);
  }

  /** Invalidates `stag` (RFC 5040 §6.3 Send with Invalidate). False when unknown. */
  invalidate(stag: number): boolean {
    const buffer = this.#buffers.get(stag);
    if (buffer === undefined || !buffer.valid) return false;
    buffer.valid = false;
    return true;
  }

  /**
   * Checks a remote access of `length` bytes at Tagged Offset `taggedOffset`. The order
   * of checks follows RFC 5041 §7.1 / RFC 5040 §4.8 (STag valid, associated with the
   * stream, access rights, TO wrap, base and bounds); the first failing check is reported.
   */
  check(
    stream: StreamIdentity,
    stag: number,
    taggedOffset: bigint,
    length: number,
    right: AccessFlag,
  ): TaggedAccessResult {
    const buffer = this.#buffers.get(stag);
    if (buffer === undefined || !buffer.valid) return { ok: false, failure: 'invalid-stag' };
    if (
      buffer.protectionDomain !== stream.protectionDomain ||
      (buffer.streamId !== undefined && buffer.streamId !== stream.streamId)
    )
      return { ok: false, failure: 'stag-not-associated' };
    if (!hasAccess(buffer.access, right)) return { ok: false, failure: 'access-rights' };
    // RFC 5041 §7.1 / RFC 5040 §4.8 code 0x04: the access would run past 2^64 - 1.
    if (taggedOffset + BigInt(length) > TWO_POW_64) return { ok: false, failure: 'to-wrap' };
    const start = taggedOffset - buffer.baseTaggedOffset;
    if (start < 0n || start + BigInt(length) > BigInt(buffer.length))
      return { ok: false, failure: 'base-bounds' };
    const offset = Number(start);
    return { ok: true, access: { buffer, offset, address: buffer.baseAddress + start } };
  }
}
