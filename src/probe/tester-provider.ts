/**
 * The provider key the tester's records are judged under (issue 33). On the fixed build
 * (`probe --fixes`: the guest set up as runtime/fixes-env.ts says, RDMA_INTEROP_FIXES=1)
 * rxe and the stock siw are `rxe+fixes` and `siw+fixes`, where every record of the stock
 * provider holds but the fixed defects' (judge/record.ts holdsForProvider); the patched
 * siw (`rfc7306`) keeps its own key: `--fixes` does not combine with it.
 */
import { fixedProvider, siwProvider } from '../judge/record.js';
import { onFixedBuild } from '../runtime/fixes-env.js';
import type { SiwVariant } from '../runtime/siw-variant-env.js';

/** rxe's key: `rxe`, or `rxe+fixes` on the fixed build. */
export function testerRxeProvider(): string {
  return onFixedBuild() ? fixedProvider('rxe') : 'rxe';
}

/** siw0's key for a variant: `siw`, `siw+rfc7306`, or `siw+fixes` (stock siw on the fixed build). */
export function testerSiwProvider(variant: SiwVariant | undefined): string {
  return variant !== 'rfc7306' && onFixedBuild() ? fixedProvider('siw') : siwProvider(variant);
}
