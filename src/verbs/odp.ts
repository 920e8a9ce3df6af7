/**
 * On-demand paging MRs (issue 34): `ibv_reg_mr` with IBV_ACCESS_ON_DEMAND, whose pages
 * the device faults in when it touches them instead of pinning them at registration.
 *
 * Where: rxe from Linux 7.3 (drivers/infiniband/sw/rxe/rxe.c rxe_init_device_param sets
 * IBK_ON_DEMAND_PAGING and odp_caps when CONFIG_INFINIBAND_ON_DEMAND_PAGING; rxe_verbs.c
 * rxe_reg_user_mr calls rxe_odp_mr_init_user); not on 6.1 and 6.12, whose core then
 * refuses the flag (EOPNOTSUPP, ib_check_mr_access), nor siw. {@link regOdpMr} asks
 * `ibv_query_device_ex` first and refuses with a typed {@link OdpUnsupportedError}
 * naming the capability that is missing.
 *
 * The write-permission rule: the device may write an ODP MR's pages only when the MR
 * grants a write right (ib_access_writable: LOCAL_WRITE, REMOTE_WRITE, REMOTE_ATOMIC,
 * MW_BIND); without one, rxe_odp.c faults the pages in read-only (no HMM_PFN_WRITE), and
 * a Receive or RDMA Write into it is refused as for any MR without that right. And, as
 * for every MR, REMOTE_WRITE or REMOTE_ATOMIC without LOCAL_WRITE is EINVAL
 * (ib_check_mr_access).
 *
 * A defect of Linux 7.3.4 (measured, kernel test missing-verbs.test.ts): rxe_odp.c
 * __rxe_odp_mr_copy copies to and from the base of the kmap'd page (lines 207-210) and
 * never adds the in-page offset it computed, so an RDMA Write at offset 100 of an ODP MR
 * lands at the start of that page, which for a Buffer that does not start on a page is
 * memory outside the MR. Register ODP memory page-aligned (`pd.allocMr(length, [...,
 * 'ON_DEMAND'])`) and expect misplaced bytes at in-page offsets on that line.
 */
import {
  flagNamesOf,
  ODP_GENERAL_CAPS,
  ODP_TRANSPORT_CAPS,
  type OdpTransportCap,
} from '../ibverbs/ext-constants.js';
import type { Context } from './device.js';
import { VerbsArgumentError, VerbsError } from './errors.js';
import { verbsExt, wrapperObject } from './ext-native.js';
import { type Access, accessMaskOf, type Mr } from './mr.js';
import type { Pd } from './pd.js';

/** What `ibv_query_device_ex` says of on-demand paging. */
export interface OdpCaps {
  /** IBV_ODP_SUPPORT: ODP MRs at all. */
  readonly supported: boolean;
  /** IBV_ODP_SUPPORT_IMPLICIT: an implicit MR over the whole address space. */
  readonly implicit: boolean;
  /** What ODP memory may take part in on RC, UC and UD QPs. */
  readonly rc: readonly OdpTransportCap[];
  readonly uc: readonly OdpTransportCap[];
  readonly ud: readonly OdpTransportCap[];
}

/** A device without on-demand paging was asked for an ODP MR. */
export class OdpUnsupportedError extends VerbsError {
  override readonly name: string = 'OdpUnsupportedError';
  constructor(device: string, detail: string) {
    super('EOPNOTSUPP', 95, 'ibv_reg_mr', device, `IBV_ACCESS_ON_DEMAND: ${detail}`);
  }
}

/** `ibv_query_device_ex`'s ODP capabilities (all false when the device has no query_device_ex). */
export function queryOdpCaps(context: Context): OdpCaps {
  const caps = verbsExt().queryOdpCaps(
    wrapperObject<Context>(context, 'context', 'a Context (openDevice)').native,
  );
  const general = Number(caps?.generalCaps ?? 0n);
  return {
    supported: (general & ODP_GENERAL_CAPS.SUPPORT) !== 0,
    implicit: (general & ODP_GENERAL_CAPS.SUPPORT_IMPLICIT) !== 0,
    rc: flagNamesOf(ODP_TRANSPORT_CAPS, caps?.rc ?? 0),
    uc: flagNamesOf(ODP_TRANSPORT_CAPS, caps?.uc ?? 0),
    ud: flagNamesOf(ODP_TRANSPORT_CAPS, caps?.ud ?? 0),
  };
}

/**
 * Registers `buffer` as an on-demand paging MR (`access` plus ON_DEMAND), after checking
 * that the device has ODP (OdpUnsupportedError, EOPNOTSUPP, otherwise).
 */
export function regOdpMr(pd: Pd, buffer: Buffer, access: readonly Access[]): Mr {
  wrapperObject<Pd>(pd, 'pd', 'a Pd (context.allocPd)');
  if (!Buffer.isBuffer(buffer)) throw new VerbsArgumentError('buffer', 'regOdpMr needs a Buffer');
  accessMaskOf(access); // unknown names first
  if (pd.closed)
    throw new VerbsError('EBADF', 9, 'ibv_reg_mr', pd.context.name, 'protection domain is closed');
  const caps = queryOdpCaps(pd.context);
  if (!caps.supported)
    throw new OdpUnsupportedError(
      pd.context.name,
      'the device reports no IBV_ODP_SUPPORT (ibv_query_device_ex odp_caps.general_caps)',
    );
  const all: Access[] = access.includes('ON_DEMAND') ? [...access] : [...access, 'ON_DEMAND'];
  return pd.regMr(buffer, all);
}
