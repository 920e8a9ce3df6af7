import { describe, expect, it } from 'vitest';
import type { NativeSrq } from '../../../src/native/bindings.js';
import { VerbsError } from '../../../src/verbs/errors.js';
import type { Pd } from '../../../src/verbs/pd.js';
import { withProviderCause } from '../../../src/verbs/provider-causes.js';
import { Srq } from '../../../src/verbs/srq.js';

// The message the addon gives a refused call (native/errors.cc ThrowVerbs).
function refusal(call: string, device: string, code = 'EOPNOTSUPP', errno = 95): VerbsError {
  return new VerbsError(
    code,
    errno,
    call,
    device,
    `${call} failed: ${code} (Operation not supported) on ${device}`,
  );
}

function caught(fn: () => unknown): unknown {
  try {
    fn();
  } catch (e) {
    return e;
  }
  return undefined;
}

describe('a provider refusal names its cause', () => {
  it('srq.query on siw: EOPNOTSUPP kept, the message gains libsiw has no query_srq', () => {
    const context = { name: 'siw0', trackSrq() {}, untrackSrq() {} };
    const native = {
      closed: false,
      key: 0x51e0n,
      attr: { maxWr: 16, maxSge: 1, srqLimit: 0 },
      close() {},
      query: () => {
        throw refusal('ibv_query_srq', 'siw0');
      },
    } as unknown as NativeSrq;
    const e = caught(() => new Srq(native, { context } as unknown as Pd).query());
    expect(e).toBeInstanceOf(VerbsError);
    expect(e).toMatchObject({
      code: 'EOPNOTSUPP',
      errno: 95,
      call: 'ibv_query_srq',
      device: 'siw0',
      message:
        'ibv_query_srq failed: EOPNOTSUPP (Operation not supported) on siw0: libsiw implements no ibv_query_srq (providers/siw/siw.c: siw_context_ops sets no query_srq)',
    });
  });

  it('ibv_alloc_mw on siw names the missing windows; other devices, calls and codes are left as they are', () => {
    expect((withProviderCause(refusal('ibv_alloc_mw', 'siw0'), 'siw0') as Error).message).toMatch(
      /^ibv_alloc_mw failed: EOPNOTSUPP .* on siw0: siw has no memory windows/,
    );
    for (const e of [
      refusal('ibv_query_srq', 'rxe0'),
      refusal('ibv_query_srq', 'siw0', 'EINVAL', 22),
      refusal('ibv_modify_srq', 'siw0'),
    ])
      expect(withProviderCause(e, e.device ?? '')).toBe(e);
    const plain = new Error('not a VerbsError');
    expect(withProviderCause(plain, 'siw0')).toBe(plain);
  });
});
