/**
 * The provider key records hold for (judge/record.ts) of the soft providers as loaded
 * here: siw on the patched module is `siw+rfc7306` (its `rfc7306` parameter says so), rxe
 * and siw on the fixed build of issue 33 are `rxe+fixes` and `siw+fixes` (the guest was set
 * up by `vm --fixes` or `run --fixes`: runtime/fixes-env.ts), and the RFC 7306 series on
 * top of the fixes (`run --fixes --siw rfc7306`) is `siw+rfc7306+fixes`; else the provider
 * itself.
 */
import { fixedProvider, siwProvider } from '../judge/record.js';
import { onFixedBuild } from '../runtime/fixes-env.js';
import { loadedSiwVariant } from '../runtime/siw-module.js';

/** `provider`'s key for records here (`rxe`, `siw` and any other provider name). */
export function providerKey(provider: string): string {
  if (provider !== 'rxe' && provider !== 'siw') return provider;
  const key = provider === 'siw' ? siwProvider(loadedSiwVariant()) : provider;
  return onFixedBuild() ? fixedProvider(key) : key;
}
