/**
 * @internal The addon's functions for the verbs added in issue 34 (native/mr_rereg.cc,
 * cq_ext.cc, verbs_ext.cc), typed here beside the main bindings (src/native/bindings.ts).
 */
import type { NativeContext, NativeCq, NativeMr, NativePd, NativeQp } from '../native/bindings.js';
import { VerbsArgumentError } from './errors.js';
import { addon } from './native.js';

/** What `NativeMr.rereg` answers: the MR's keys and range after the change. */
export interface NativeReregResult {
  readonly lkey: number;
  readonly rkey: number;
  readonly addr: bigint;
  readonly length: number;
}

/** `NativeMr` with `rereg` (native/mr.cc). */
export interface NativeMrRereg extends NativeMr {
  rereg(
    flags: number,
    pd: NativePd | undefined,
    buffer: Buffer | undefined,
    access: number,
  ): NativeReregResult;
}

/** `ibv_query_device_ex`'s `odp_caps`. */
export interface NativeOdpCaps {
  readonly generalCaps: bigint;
  readonly rc: number;
  readonly uc: number;
  readonly ud: number;
}

/** The free functions of native/cq_ext.cc and native/verbs_ext.cc. */
export interface NativeVerbsExt {
  resizeCq(cq: NativeCq, cqe: number): number;
  createCqEx(context: NativeContext, cqe: number, withChannel: boolean, wcFlags: number): NativeCq;
  pollCqEx(cq: NativeCq, words: Uint32Array, timestamps: BigUint64Array, max: number): number;
  attachMcast(qp: NativeQp, gid: Buffer, lid: number): void;
  detachMcast(qp: NativeQp, gid: Buffer, lid: number): void;
  queryOdpCaps(context: NativeContext): NativeOdpCaps | undefined;
  readonly extConstants: Readonly<Record<string, Readonly<Record<string, number>>>>;
}

/** @internal the addon, with the functions above. */
export function verbsExt(): NativeVerbsExt {
  return addon() as unknown as NativeVerbsExt;
}

/**
 * `value` when it is one of the wrapper's objects (it carries a native handle), else a
 * typed error naming `argument` and what it must be: the new verbs' entry points take their
 * objects from plain JavaScript too (test/host/package/misuse.test.ts).
 */
export function wrapperObject<T extends object>(value: unknown, argument: string, what: string): T {
  if (typeof value !== 'object' || value === null || !('native' in value))
    throw new VerbsArgumentError(argument, `must be ${what}`);
  return value as T;
}
