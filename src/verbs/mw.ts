/**
 * Memory windows (`ibv_mw`, IBTA 1.5 section 10.6.7): an rkey over part of an MR that
 * was registered with `MW_BIND` access, bound and invalidated without re-registering.
 * Type 1 is bound by {@link Qp.bindMw} (`ibv_bind_mw`), type 2 by a `BIND_MW` work
 * request on one QP (section 10.6.7.2.1: the window then belongs to that QP); either is
 * invalidated by `LOCAL_INV` or remotely by a peer's `SEND_WITH_INV` (type 2 only,
 * section 10.6.7.2.4). rxe has windows since Linux 5.13; siw has none (its driver and
 * libsiw provide no alloc_mw: `ibv_alloc_mw` fails with EOPNOTSUPP, which
 * {@link Pd.allocMw} reports with that cause: provider-causes.ts).
 */

import { MW_TYPE, type MwType } from '../ibverbs/constants.js';
import type { NativeMw, NativeMwBindInfo } from '../native/bindings.js';
import { VerbsArgumentError, VerbsError } from './errors.js';
import { Resource } from './lifetime.js';
import { type Access, accessMaskOf, type Mr } from './mr.js';
import type { Pd } from './pd.js';
import type { KeepSink } from './requests/sge.js';

/** Where a window goes: a range of an MR registered with `MW_BIND`, and its access. */
export interface MwBind {
  /** The MR (registered with `'MW_BIND'` access). */
  readonly mr: Mr;
  /** Start of the window (default: the MR's start). */
  readonly addr?: bigint;
  /** Bytes (default: the rest of the MR from `addr`; 0 unbinds). */
  readonly length?: number;
  /** The window's access (`REMOTE_READ`, `REMOTE_WRITE`, `REMOTE_ATOMIC`, `ZERO_BASED`). */
  readonly access: readonly Access[];
}

/** The `bind` of a `BIND_MW` work request (type 2 windows). */
export interface MwBindRequest extends MwBind {
  readonly mw: Mw;
  /** The rkey the window gets (default: {@link incRkey} of its current one). */
  readonly rkey?: number;
}

/**
 * `ibv_inc_rkey`: the same key with its low 8 bits (the consumer-owned key, IBTA
 * 10.6.3.4) advanced by one, as a new binding of a type 2 window needs.
 */
export function incRkey(rkey: number): number {
  if (!Number.isInteger(rkey) || rkey < 0 || rkey > 0xffffffff)
    throw new VerbsArgumentError('rkey', 'must be a u32');
  return ((rkey & 0xffffff00) | ((rkey + 1) & 0xff)) >>> 0;
}

/** @internal validated `ibv_mw_bind_info` of a bind. */
export function nativeBindInfo(bind: MwBind, keep: KeepSink, field: string): NativeMwBindInfo {
  if (typeof bind !== 'object' || bind === null)
    throw new VerbsArgumentError(field, 'must be { mr, addr?, length?, access }');
  const mr = bind.mr;
  if (typeof mr !== 'object' || mr === null || !('native' in mr))
    throw new VerbsArgumentError(`${field}.mr`, 'must be an Mr');
  if (mr.closed)
    throw new VerbsError('EBADF', 9, 'ibv_bind_mw', undefined, `${field}.mr is closed`);
  if (!mr.access.includes('MW_BIND'))
    throw new VerbsArgumentError(`${field}.mr`, "the MR was not registered with 'MW_BIND' access");
  const addr = bind.addr ?? mr.addr;
  if (typeof addr !== 'bigint' || addr < mr.addr || addr > mr.addr + BigInt(mr.length))
    throw new VerbsArgumentError(`${field}.addr`, 'must be a bigint inside the MR');
  const rest = Number(mr.addr + BigInt(mr.length) - addr);
  const length = bind.length ?? rest;
  if (!Number.isInteger(length) || length < 0 || length > rest)
    throw new VerbsArgumentError(`${field}.length`, `must be an integer in [0, ${rest}]`);
  keep.push(mr);
  return { mr: mr.native, addr, length: BigInt(length), access: accessMaskOf(bind.access) };
}

/**
 * A memory window (`ibv_mw`). `close()` is `ibv_dealloc_mw` (before the MRs of its PD in
 * a cascade). {@link rkey} is its current key: the one the last bind gave it.
 */
export class Mw extends Resource<NativeMw> {
  /** The PD (kept reachable while this window lives). */
  readonly pd: Pd;
  /** 1 or 2. */
  readonly type: MwType;
  #rkey: number;

  /** @internal use `Pd.allocMw` */
  constructor(native: NativeMw, pd: Pd) {
    super(native, 'Mw', [pd]);
    this.pd = pd;
    this.type = native.type === MW_TYPE[2] ? 2 : 1;
    this.#rkey = native.rkey;
  }

  /** The window's current rkey (set by the last bind this wrapper made). */
  get rkey(): number {
    return this.#rkey;
  }

  /** @internal a bind gave the window `rkey`. */
  setRkey(rkey: number): void {
    this.#rkey = rkey;
  }
}
