/**
 * Issue 34: the constants of the verbs added there (src/ibverbs/ext-constants.ts) against
 * the values the addon read from <infiniband/verbs.h> at compile time
 * (native/verbs_ext.cc `extConstants`), both ways: a wrong or missing value fails here.
 */
import { describe, expect, it } from 'vitest';
import {
  CREATE_CQ_WC_FLAGS,
  EXT_C_NAME_PREFIX,
  flagNamesOf,
  ODP_GENERAL_CAPS,
  ODP_TRANSPORT_CAPS,
  REREG_MR_ERR,
  REREG_MR_FLAGS,
} from '../../../src/ibverbs/ext-constants.js';
import { verbsExt } from '../../../src/verbs/ext-native.js';

const TABLES: Record<keyof typeof EXT_C_NAME_PREFIX, Readonly<Record<string, number>>> = {
  REREG_MR_FLAGS,
  REREG_MR_ERR,
  CREATE_CQ_WC_FLAGS,
  ODP_GENERAL_CAPS,
  ODP_TRANSPORT_CAPS,
};

describe('issue 34 constants against the headers the addon was built with', () => {
  const fromHeaders = verbsExt().extConstants;

  for (const [table, values] of Object.entries(TABLES)) {
    const prefix = EXT_C_NAME_PREFIX[table as keyof typeof EXT_C_NAME_PREFIX];
    it(`${table}: every name has the header's value, and the header has no other`, () => {
      const group = fromHeaders[table];
      expect(group, `the addon exports no ${table} group`).toBeDefined();
      const expected = Object.fromEntries(
        Object.entries(values).map(([name, value]) => [prefix + name, value]),
      );
      expect(group).toEqual(expected);
    });
  }

  it('a wrong value would be caught (the check is not vacuous)', () => {
    expect(fromHeaders.REREG_MR_FLAGS?.IBV_REREG_MR_CHANGE_ACCESS).toBe(4);
    expect(fromHeaders.CREATE_CQ_WC_FLAGS?.IBV_WC_EX_WITH_COMPLETION_TIMESTAMP).toBe(0x80);
    expect(fromHeaders.REREG_MR_ERR?.IBV_REREG_MR_ERR_CMD).toBe(-4);
  });

  it('flagNamesOf names the set bits and leaves out unknown ones', () => {
    expect(flagNamesOf(ODP_TRANSPORT_CAPS, 0b100101 | 0x4000)).toEqual([
      'SEND',
      'WRITE',
      'SRQ_RECV',
    ]);
    expect(flagNamesOf(ODP_TRANSPORT_CAPS, 0)).toEqual([]);
  });
});
