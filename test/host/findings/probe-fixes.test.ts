import { afterEach, describe, expect, it } from 'vitest';
import { RECORDS } from '../../../src/judge/records/index.js';
import { roceEnvironment, roceRecordFor } from '../../../src/probe/roce-responder-run.js';
import { testerRxeProvider, testerSiwProvider } from '../../../src/probe/tester-provider.js';
import { FIXES_ENV } from '../../../src/runtime/fixes-env.js';

// `probe --fixes` (issue 33): in a guest set up on the fixed build (RDMA_INTEROP_FIXES=1)
// the tester judges rxe as rxe+fixes and the stock siw as siw+fixes, so a defect the
// patches fix (rxe-read-response-too-long-is-loc-prot-err: patches/rxe-fixes/0003) no longer
// explains rxe's answer, while a record the fixes leave alone still does.

const before = process.env[FIXES_ENV];
const TOO_LONG = 'roce-requester-read-response-too-long';
const KERNEL = '6.1.0-57-amd64';
const expected = { status: 'LOC_LEN_ERR', qpState: 'ERR' };
const observed = { status: 'LOC_PROT_ERR', qpState: 'ERR' };

afterEach(() => {
  if (before === undefined) delete process.env[FIXES_ENV];
  else process.env[FIXES_ENV] = before;
});

describe('probe --fixes: the tester keys the fixed build', () => {
  it('keys rxe and the stock siw +fixes only on the fixed build; the patched siw keeps its key', () => {
    delete process.env[FIXES_ENV];
    expect([testerRxeProvider(), testerSiwProvider('stock'), testerSiwProvider('rfc7306')]).toEqual(
      ['rxe', 'siw', 'siw+rfc7306'],
    );
    process.env[FIXES_ENV] = '1';
    expect([testerRxeProvider(), testerSiwProvider('stock'), testerSiwProvider('rfc7306')]).toEqual(
      ['rxe+fixes', 'siw+fixes', 'siw+rfc7306'],
    );
    expect(roceEnvironment(KERNEL).provider).toBe('rxe+fixes');
  });

  it('a Read response too long: explained by its record on stock, by none on the fixed build', () => {
    expect(RECORDS.some((k) => k.id === 'rxe-read-response-too-long-is-loc-prot-err')).toBe(true);
    delete process.env[FIXES_ENV];
    expect(roceRecordFor(TOO_LONG, KERNEL, expected, observed)?.id).toBe(
      'rxe-read-response-too-long-is-loc-prot-err',
    );
    process.env[FIXES_ENV] = '1';
    expect(roceRecordFor(TOO_LONG, KERNEL, expected, observed)).toBeUndefined();
  });
});
