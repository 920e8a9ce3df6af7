/**
 * Memory region reregistration (ibv_rereg_mr, IBTA 1.5 §11.2.8.3 Reregister Memory
 * Region): the responder's MR reregistered, then used by the peer.
 */
import { ATOMIC_MR, type Row, single, type Target } from './family.js';

/**
 * Both devices through ibv_post_send: the verb is the library's and the kernel's, the post
 * API plays no part in it.
 */
export const REREG_TARGETS: readonly Target[] = [
  { device: 'rxe0', postPath: 'legacy' },
  { device: 'siw0', postPath: 'legacy' },
];

export const REREG: readonly Row[] = [
  {
    // §11.2.8.3: reregistering with IBV_REREG_MR_CHANGE_ACCESS to the rights the MR has
    // keeps the region serving remote access; the engine's verb succeeds. The access is
    // unchanged so that the request after it needs no new rkey (a successful
    // reregistration may hand out new keys: ibv_rereg_mr(3)). rxe and siw refuse the verb
    // in their libraries (src/judge/records/rereg.ts), the MR staying as it was: the Write
    // lands either way.
    suffix: 'rereg-access',
    title: 'ibv_rereg_mr of the responder MR (same access), then an RDMA Write into it',
    program: [{ do: 'rereg-mr', access: ATOMIC_MR }, ...single({ kind: 'RDMA_WRITE' })],
  },
];
