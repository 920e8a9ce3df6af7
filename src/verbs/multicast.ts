/**
 * UD multicast (issue 34): `ibv_attach_mcast` / `ibv_detach_mcast` (native/verbs_ext.cc).
 * A UD QP attached to a multicast GID receives the UD Sends addressed to that GID with
 * the multicast QPN 0xFFFFFF (IBTA 1.5 section 10.5). The kernel refuses a QP that is not
 * UD (EINVAL, ib_attach_mcast in drivers/infiniband/core/verbs.c) and a GID that is not
 * multicast (EINVAL, rdma_is_multicast_addr); destroying the QP detaches it, so nothing
 * of an attachment needs closing of its own. siw (iWARP) has no UD QP to attach
 * (drivers/infiniband/sw/siw/siw_verbs.c siw_create_qp accepts IB_QPT_RC only) and no
 * attach_mcast.
 */
import { isIPv4 } from 'node:net';
import { VerbsArgumentError } from './errors.js';
import { verbsExt, wrapperObject } from './ext-native.js';
import type { Qp } from './qp.js';

/** The QPN a UD Send to a multicast group is addressed to (IBTA 1.5 section 10.5). */
export const MULTICAST_QPN = 0xffffff;

/** A multicast group: its GID (16 bytes, or an IPv4 group address as RoCE v2 maps it). */
export type McastGid = Buffer | string;

/** The 16 GID bytes of `gid`: a Buffer as it is, an IPv4 text address mapped (::ffff:a.b.c.d). */
export function mcastGidBytes(gid: McastGid): Buffer {
  if (Buffer.isBuffer(gid)) {
    if (gid.length !== 16) throw new VerbsArgumentError('gid', 'must be 16 bytes');
    return gid;
  }
  if (typeof gid !== 'string' || !isIPv4(gid))
    throw new VerbsArgumentError('gid', 'must be a 16-byte Buffer or an IPv4 address');
  const bytes = Buffer.alloc(16);
  bytes[10] = 0xff;
  bytes[11] = 0xff;
  gid.split('.').forEach((part, i) => {
    bytes[12 + i] = Number(part);
  });
  return bytes;
}

function checkLid(lid: number): number {
  if (!Number.isInteger(lid) || lid < 0 || lid > 0xffff)
    throw new VerbsArgumentError('lid', 'must be an integer in [0, 65535]');
  return lid;
}

/** `ibv_attach_mcast`: `qp` (UD) receives what is sent to group `gid` (`lid` 0 on RoCE). */
export function attachMcast(qp: Qp, gid: McastGid, lid = 0): void {
  const q = wrapperObject<Qp>(qp, 'qp', 'a UD Qp (pd.createQp)');
  verbsExt().attachMcast(q.native, mcastGidBytes(gid), checkLid(lid));
}

/** `ibv_detach_mcast`: `qp` no longer receives group `gid`'s Sends. */
export function detachMcast(qp: Qp, gid: McastGid, lid = 0): void {
  const q = wrapperObject<Qp>(qp, 'qp', 'a UD Qp (pd.createQp)');
  verbsExt().detachMcast(q.native, mcastGidBytes(gid), checkLid(lid));
}
