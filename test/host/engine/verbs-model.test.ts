import { describe, expect, it } from 'vitest';
import { immediateValue } from '../../../src/engine/projection/work-completion.js';
import {
  ACCESS_FLAGS,
  accessMask,
  hasAccess,
  QP_STATE,
  WC_FLAGS,
  WC_OPCODE,
  WC_STATUS,
  WR_OPCODE,
  wcFlagsValue,
} from '../../../src/ibverbs/index.js';

describe('verbs-model tables (rdma-core libibverbs/verbs.h)', () => {
  it('values are distinct within each table and match verbs.h anchors', () => {
    for (const table of [WC_STATUS, WC_OPCODE, WR_OPCODE, QP_STATE, ACCESS_FLAGS, WC_FLAGS]) {
      const values = Object.values(table);
      expect(new Set(values).size).toBe(values.length);
    }
    expect([WC_STATUS.REM_INV_REQ_ERR, WC_STATUS.REM_ACCESS_ERR, WC_STATUS.WR_FLUSH_ERR]).toEqual([
      9, 10, 5,
    ]);
    expect([WC_OPCODE.FETCH_ADD, WC_OPCODE.RECV_RDMA_WITH_IMM]).toEqual([4, 129]);
    expect([WR_OPCODE.ATOMIC_FETCH_AND_ADD, WR_OPCODE.ATOMIC_WRITE]).toEqual([6, 15]);
    expect(QP_STATE.ERR).toBe(6);
  });

  it('access masks and wc flags combine as bits', () => {
    const mask = accessMask(['REMOTE_ATOMIC', 'LOCAL_WRITE']);
    expect(mask).toBe(9);
    expect(hasAccess(mask, 'REMOTE_ATOMIC')).toBe(true);
    expect(hasAccess(mask, 'REMOTE_WRITE')).toBe(false);
    expect(wcFlagsValue(['GRH', 'WITH_IMM'])).toBe(3);
  });

  it('imm_data is given in host order and as the raw __be32 field read on a little-endian host', () => {
    expect(immediateValue(0x12345678)).toEqual({ host: 0x12345678, network: 0x78563412 });
    expect(immediateValue(0xfedcba98)).toEqual({ host: 0xfedcba98, network: 0x98badcfe });
  });
});
