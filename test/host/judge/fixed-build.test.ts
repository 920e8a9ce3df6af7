import { describe, expect, it } from 'vitest';
import { FIXED_RECORD_IDS } from '../../../src/findings/fixes.js';
import { providerKey } from '../../../src/interop/provider-key.js';
import { appliesIn, fixedProvider } from '../../../src/judge/record.js';
import { RECORDS } from '../../../src/judge/records/index.js';
import { FIXES_ENV, onFixedBuild } from '../../../src/runtime/fixes-env.js';

// The records on the fixed build (issue 33): on rxe+fixes and siw+fixes every record of the
// stock provider holds but those FIXED_RECORD_IDS lists (DEFECT_FIXES and their alsoFixes),
// so only the fixed defects' results change (to match) between a stock run and `run --fixes`.
const FIXED = FIXED_RECORD_IDS;
const KERNELS = ['6.1.0-57-amd64', '6.12.95+deb12-amd64', '7.3.4+deb13-amd64'];
const RDMA_CORES = ['44.0', '56.1'];

describe('the fixed build: rxe+fixes and siw+fixes', () => {
  it.each(['rxe', 'siw'])(
    '%s+fixes: every %s record holds as on stock but the fixed defects',
    (stock) => {
      const own = RECORDS.filter((k) => k.provider === stock);
      expect(own.length).toBeGreaterThan(5);
      let held = 0;
      for (const k of own)
        for (const kernel of KERNELS)
          for (const rdmaCore of RDMA_CORES) {
            const onStock = appliesIn(k, { provider: stock, kernel, rdmaCore });
            const onFixed = appliesIn(k, { provider: fixedProvider(stock), kernel, rdmaCore });
            expect(onFixed, `${k.id} on ${kernel}, rdma-core ${rdmaCore}`).toBe(
              onStock && !FIXED.has(k.id),
            );
            if (onFixed) held++;
          }
      expect(held).toBeGreaterThan(0);
    },
  );

  it('each fixed defect applies on stock somewhere and on the fixed build nowhere', () => {
    for (const id of FIXED) {
      const k = RECORDS.find((r) => r.id === id);
      expect(k, id).toBeDefined();
      if (k === undefined) continue;
      const somewhere = KERNELS.flatMap((kernel) =>
        RDMA_CORES.map((rdmaCore) => ({ provider: k.provider, kernel, rdmaCore })),
      );
      expect(somewhere.some((env) => appliesIn(k, env))).toBe(true);
      for (const env of somewhere)
        expect(appliesIn(k, { ...env, provider: fixedProvider(k.provider) })).toBe(false);
    }
  });

  it('a record of the patched siw only (siw+rfc7306) does not hold on siw+fixes', () => {
    const patchedOnly = RECORDS.filter((k) => k.provider === 'siw+rfc7306');
    for (const k of patchedOnly)
      for (const kernel of KERNELS)
        expect(appliesIn(k, { provider: 'siw+fixes', kernel, rdmaCore: '56.1' })).toBe(false);
  });

  it('siw+rfc7306+fixes: every record of the patched siw holds but the fixed defects', () => {
    // run --fixes --siw rfc7306: the RFC 7306 series with the fixes on top. Besides, only the
    // records of that key itself: what the fixed siw_query_qp shows before 6.8.
    const combined = fixedProvider('siw+rfc7306');
    expect(combined).toBe('siw+rfc7306+fixes');
    let held = 0;
    for (const k of RECORDS)
      for (const kernel of KERNELS)
        for (const rdmaCore of RDMA_CORES) {
          const onPatched = appliesIn(k, { provider: 'siw+rfc7306', kernel, rdmaCore });
          const onCombined = appliesIn(k, { provider: combined, kernel, rdmaCore });
          if (k.provider === combined) {
            // Before 6.8 only (siw_query_qp reports the state from there on, stock or not).
            if (onCombined) expect(kernel, k.id).toMatch(/^6\.1\./);
            continue;
          }
          expect(onCombined, `${k.id} on ${kernel}, rdma-core ${rdmaCore}`).toBe(
            onPatched && !FIXED.has(k.id),
          );
          if (onCombined) held++;
        }
    expect(held).toBeGreaterThan(20);
    // siw-post-on-error-qp-no-completion is the patched siw's record and a fixed defect.
    const postOnError = RECORDS.find((k) => k.id === 'siw-post-on-error-qp-no-completion');
    expect(postOnError?.provider).toBe('siw+rfc7306');
    expect(FIXED.has('siw-post-on-error-qp-no-completion')).toBe(true);
  });

  it('keys rxe and siw +fixes where the guest was set up on the fixed build, nothing else', () => {
    const before = process.env[FIXES_ENV];
    try {
      process.env[FIXES_ENV] = '1';
      expect(onFixedBuild()).toBe(true);
      expect([providerKey('rxe'), providerKey('siw'), providerKey('mlx5')]).toEqual([
        'rxe+fixes',
        'siw+fixes',
        'mlx5',
      ]);
      process.env[FIXES_ENV] = '0';
      expect(onFixedBuild()).toBe(false);
      expect(providerKey('rxe')).toBe('rxe');
    } finally {
      if (before === undefined) delete process.env[FIXES_ENV];
      else process.env[FIXES_ENV] = before;
    }
  });
});
