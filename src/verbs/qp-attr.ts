/**
 * The typed attribute object of `ibv_modify_qp` and the one table that maps each field
 * to its native name and its `ibv_qp_attr_mask` bit: the mask is computed from the
 * fields present, never written by hand.
 */

import { MTU, type Mtu, QP_ATTR_MASK, type QpAttrMaskBit } from '../ibverbs/constants.js';
import { QP_STATE, type QpState } from '../ibverbs/index.js';
import type { NativeAhAttr, NativeQpAttr } from '../native/bindings.js';
import { VerbsArgumentError } from './errors.js';
import { type Access, accessMaskOf } from './mr.js';

/** A QP state name (the C name without `IBV_QPS_`), e.g. `'RTS'`. */
export type QpStateName = QpState;

/** The global routing header of an address vector (required for RoCE). */
export interface Grh {
  /** The destination GID, 16 bytes. */
  readonly dgid: Buffer;
  readonly sgidIndex: number;
  readonly hopLimit?: number;
  readonly flowLabel?: number;
  readonly trafficClass?: number;
}

/** An address vector (`struct ibv_ah_attr`). */
export interface AddressVector {
  readonly dlid?: number;
  readonly sl?: number;
  readonly srcPathBits?: number;
  readonly staticRate?: number;
  readonly port?: number;
  readonly grh?: Grh;
}

/** Attributes for `Qp.modify`; only the fields present are applied. */
export interface QpAttr {
  readonly state?: QpStateName;
  readonly pathMtu?: Mtu;
  readonly qkey?: number;
  readonly rqPsn?: number;
  readonly sqPsn?: number;
  readonly destQpNum?: number;
  readonly access?: readonly Access[];
  readonly pkeyIndex?: number;
  readonly port?: number;
  readonly maxRdAtomic?: number;
  readonly maxDestRdAtomic?: number;
  readonly minRnrTimer?: number;
  readonly timeout?: number;
  readonly retryCnt?: number;
  readonly rnrRetry?: number;
  readonly av?: AddressVector;
}

/** Each typed field: its native field name, mask bit and range (inclusive maximum). */
export const QP_ATTR_FIELDS = {
  state: { native: 'qpState', mask: 'STATE', max: 7 },
  pathMtu: { native: 'pathMtu', mask: 'PATH_MTU', max: 5 },
  qkey: { native: 'qkey', mask: 'QKEY', max: 0xffffffff },
  rqPsn: { native: 'rqPsn', mask: 'RQ_PSN', max: 0xffffff },
  sqPsn: { native: 'sqPsn', mask: 'SQ_PSN', max: 0xffffff },
  destQpNum: { native: 'destQpNum', mask: 'DEST_QPN', max: 0xffffff },
  access: { native: 'qpAccessFlags', mask: 'ACCESS_FLAGS', max: 0xffffffff },
  pkeyIndex: { native: 'pkeyIndex', mask: 'PKEY_INDEX', max: 0xffff },
  port: { native: 'portNum', mask: 'PORT', max: 255 },
  maxRdAtomic: { native: 'maxRdAtomic', mask: 'MAX_QP_RD_ATOMIC', max: 255 },
  maxDestRdAtomic: { native: 'maxDestRdAtomic', mask: 'MAX_DEST_RD_ATOMIC', max: 255 },
  minRnrTimer: { native: 'minRnrTimer', mask: 'MIN_RNR_TIMER', max: 31 },
  timeout: { native: 'timeout', mask: 'TIMEOUT', max: 31 },
  retryCnt: { native: 'retryCnt', mask: 'RETRY_CNT', max: 7 },
  rnrRetry: { native: 'rnrRetry', mask: 'RNR_RETRY', max: 7 },
  av: { native: 'ahAttr', mask: 'AV', max: 0 },
} as const satisfies Record<
  keyof QpAttr,
  { native: keyof NativeQpAttr; mask: QpAttrMaskBit; max: number }
>;

function checkInt(name: string, v: unknown, max: number): number {
  if (typeof v !== 'number' || !Number.isInteger(v))
    throw new VerbsArgumentError(name, 'must be an integer');
  if (v < 0 || v > max) throw new VerbsArgumentError(name, `must be in [0, ${max}]`);
  return v;
}

/** Validates an address vector and gives its native form (also used for UD AHs). */
export function nativeAv(av: AddressVector): NativeAhAttr {
  const out: NativeAhAttr = {
    dlid: checkInt('av.dlid', av.dlid ?? 0, 0xffff),
    sl: checkInt('av.sl', av.sl ?? 0, 15),
    srcPathBits: checkInt('av.srcPathBits', av.srcPathBits ?? 0, 127),
    staticRate: checkInt('av.staticRate', av.staticRate ?? 0, 255),
    portNum: checkInt('av.port', av.port ?? 1, 255),
  };
  if (av.grh !== undefined) {
    const g = av.grh;
    if (!Buffer.isBuffer(g.dgid) || g.dgid.length !== 16)
      throw new VerbsArgumentError('av.grh.dgid', 'must be a 16-byte Buffer');
    out.grh = {
      dgid: g.dgid,
      sgidIndex: checkInt('av.grh.sgidIndex', g.sgidIndex, 255),
      hopLimit: checkInt('av.grh.hopLimit', g.hopLimit ?? 64, 255),
      flowLabel: checkInt('av.grh.flowLabel', g.flowLabel ?? 0, 0xfffff),
      trafficClass: checkInt('av.grh.trafficClass', g.trafficClass ?? 0, 255),
    };
  }
  return out;
}

/** The native attribute object and its mask, validated; throws before any native call. */
export function toNativeQpAttr(attr: QpAttr): { attr: NativeQpAttr; mask: number } {
  const out: Record<string, unknown> = {};
  let mask = 0;
  for (const [key, value] of Object.entries(attr)) {
    if (value === undefined) continue;
    const field = (QP_ATTR_FIELDS as Record<string, (typeof QP_ATTR_FIELDS)[keyof QpAttr]>)[key];
    if (field === undefined) throw new VerbsArgumentError(key, 'unknown QP attribute');
    mask |= QP_ATTR_MASK[field.mask];
    if (key === 'state') {
      const v = (QP_STATE as Record<string, number>)[String(value)];
      if (v === undefined)
        throw new VerbsArgumentError('state', `unknown QP state '${String(value)}'`);
      out[field.native] = v;
    } else if (key === 'pathMtu') {
      const v = (MTU as Record<string, number>)[String(value)];
      if (v === undefined)
        throw new VerbsArgumentError('pathMtu', `must be one of ${Object.keys(MTU).join(', ')}`);
      out[field.native] = v;
    } else if (key === 'access') {
      if (!Array.isArray(value))
        throw new VerbsArgumentError('access', 'must be an array of flag names');
      out[field.native] = accessMaskOf(value as Access[]);
    } else if (key === 'av') {
      out[field.native] = nativeAv(value as AddressVector);
    } else {
      out[field.native] = checkInt(key, value, field.max);
    }
  }
  return { attr: out as NativeQpAttr, mask };
}
