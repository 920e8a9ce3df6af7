/**
 * Checking the scatter/gather lists of work requests (QPs and SRQs, send and receive):
 * every SGE inside its MR, the MR open and kept alive while the request is in flight.
 */

import { VerbsArgumentError, VerbsError } from '../errors.js';
import type { Resource } from '../lifetime.js';
import type { Sge } from '../mr.js';
import type { RawSge } from './wr.js';

/** `struct ibv_sge`, checked (packed as SEND_SGE_LAYOUT). */
export interface NativeSge {
  addr: bigint;
  length: number;
  lkey: number;
}

const U64_MAX = (1n << 64n) - 1n;

/** @internal a u64 argument, checked. */
export function u64(name: string, v: unknown): bigint {
  if (typeof v !== 'bigint' || v < 0n || v > U64_MAX)
    throw new VerbsArgumentError(name, 'must be a bigint in [0, 2^64 - 1]');
  return v;
}

/** @internal a u32 argument, checked. */
export function u32(name: string, v: unknown): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > 0xffffffff)
    throw new VerbsArgumentError(name, 'must be an integer in [0, 2^32 - 1]');
  return v;
}

function isRawSge(s: Sge | RawSge): s is RawSge {
  return typeof (s as RawSge).addr === 'bigint';
}

/** @internal validates SGEs and collects the MRs to keep alive (QPs and SRQs). */
export function nativeSges(
  list: readonly (Sge | RawSge)[] | undefined,
  keep: KeepSink,
  inline = false,
): NativeSge[] {
  if (list === undefined) return [];
  if (!Array.isArray(list)) throw new VerbsArgumentError('sgList', 'must be an array');
  const out: NativeSge[] = new Array(list.length);
  for (let i = 0; i < list.length; i++) out[i] = nativeSge(list[i], i, keep, inline);
  return out;
}

/** @internal one SGE of {@link nativeSges}, checked; its MR goes to `keep`. */
export function nativeSge(
  s: Sge | RawSge | undefined,
  i: number,
  keep: KeepSink,
  inline: boolean,
): NativeSge {
  const out: MutableSge = { addr: 0n, length: 0, lkey: 0 };
  sgeInto(s, i, keep, inline, out);
  return out;
}

/** @internal a checked SGE as the packers write it (one reused per packer). */
export interface MutableSge {
  addr: bigint;
  length: number;
  lkey: number;
}

/**
 * @internal checks one SGE into `out` (the packers reuse one: no object per SGE); its MR
 * goes to `keep`.
 */
export function sgeInto(
  s: Sge | RawSge | undefined,
  i: number,
  keep: KeepSink,
  inline: boolean,
  out: MutableSge,
): void {
  if (typeof s !== 'object' || s === null)
    throw new VerbsArgumentError(`sgList[${i}]`, 'must be an object');
  if (isRawSge(s)) {
    if (inline)
      throw new VerbsArgumentError(
        `sgList[${i}]`,
        'inline data must come from an Mr (a raw address is refused with inline)',
      );
    out.addr = u64('sge.addr', s.addr);
    out.length = u32('sge.length', s.length);
    out.lkey = u32('sge.lkey', s.lkey);
    return;
  }
  const mr = s.mr;
  if (mr === undefined || typeof mr !== 'object' || !('native' in mr))
    throw new VerbsArgumentError(`sgList[${i}].mr`, 'must be an Mr (register the Buffer first)');
  if (mr.closed)
    throw new VerbsError('EBADF', 9, 'ibv_post_send', undefined, `sgList[${i}] uses a closed MR`);
  const offset = s.offset ?? 0;
  if (!Number.isInteger(offset) || offset < 0)
    throw new VerbsArgumentError(`sgList[${i}].offset`, 'must be a non-negative integer');
  const length = s.length ?? mr.length - offset;
  if (!Number.isInteger(length) || length < 0)
    throw new VerbsArgumentError(`sgList[${i}].length`, 'must be a non-negative integer');
  if (offset + length > mr.length)
    throw new VerbsArgumentError(
      `sgList[${i}]`,
      `[${offset}, ${offset + length}) runs past the end of the MR (length ${mr.length})`,
    );
  keep.push(mr);
  out.addr = offset === 0 ? mr.addr : mr.addr + BigInt(offset);
  out.length = length;
  out.lkey = mr.lkey;
}

/** @internal where a check collects what a request keeps alive while in flight. */
export interface KeepSink {
  push(resource: Resource): unknown;
}

const NO_KEEP: readonly Resource[] = Object.freeze([]);

/**
 * @internal a reused KeepSink: `take()` copies what was collected at its size (the shared
 * empty list when nothing was). A fresh `[]` per request reserves 17 slots on its first
 * push (about 150 bytes, per request and per SGE list), and an array emptied with
 * `length = 0` drops its store, so this one keeps a count instead.
 */
export class KeepList implements KeepSink {
  readonly #items: (Resource | undefined)[] = [];
  #n = 0;

  push(resource: Resource): void {
    this.#items[this.#n++] = resource;
  }

  take(): readonly Resource[] {
    const n = this.#n;
    if (n === 0) return NO_KEEP;
    if (n === 1) {
      // The everyday request keeps one MR: a literal, cheaper than a slice.
      const only = this.#items[0] as Resource;
      this.#items[0] = undefined;
      this.#n = 0;
      return [only];
    }
    const out = this.#items.slice(0, n) as Resource[];
    // Drop the references: the scratch must not keep the last request's MRs reachable.
    for (let i = 0; i < n; i++) this.#items[i] = undefined;
    this.#n = 0;
    return out;
  }
}

/**
 * @internal a reused SGE list for one request at a time ({@link nativeSges} without an
 * array and an object per SGE per post): `fill` checks `list` into it and returns it.
 */
export class SgeScratch {
  readonly #pool: MutableSge[] = [];
  #list: MutableSge[] = [];

  fill(list: readonly (Sge | RawSge)[] | undefined, keep: KeepSink, inline: boolean): NativeSge[] {
    if (list !== undefined && !Array.isArray(list))
      throw new VerbsArgumentError('sgList', 'must be an array');
    const n = list === undefined ? 0 : list.length;
    // Made at its size, and again only when a request has another SGE count.
    if (this.#list.length !== n) this.#list = new Array(n);
    for (let i = 0; i < n; i++) {
      let sge = this.#pool[i];
      if (sge === undefined) {
        sge = { addr: 0n, length: 0, lkey: 0 };
        this.#pool[i] = sge;
      }
      sgeInto((list as readonly (Sge | RawSge)[])[i], i, keep, inline, sge);
      this.#list[i] = sge;
    }
    return this.#list;
  }
}
