import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { UnknownNameError } from '../../../src/errors.js';
import {
  DEVICE_CAP_FLAGS,
  flagMask,
  flagNames,
  nameOf,
  QP_ATTR_MASK,
  SEND_FLAGS,
} from '../../../src/ibverbs/constants.js';
import { WC_FLAGS, WC_STATUS } from '../../../src/ibverbs/index.js';
import { WC_LAYOUT as POLL_LAYOUT } from '../../../src/native/bindings.js';
import { toWorkCompletion } from '../../../src/verbs/completion.js';
import { formatGuid, gidText } from '../../../src/verbs/device.js';
import { accessMaskOf, VerbsArgumentError } from '../../../src/verbs/index.js';
import { QP_ATTR_FIELDS, toNativeQpAttr } from '../../../src/verbs/qp-attr.js';

describe('enum tables', () => {
  it('round-trips every flag mask through names', () => {
    const all = Object.values(DEVICE_CAP_FLAGS).reduce((a, b) => a | b, 0);
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 0x7fffffff }), (mask) => {
        const names = flagNames(DEVICE_CAP_FLAGS, mask);
        expect(flagMask(DEVICE_CAP_FLAGS, names)).toBe(mask & all);
      }),
    );
  });

  it('names values and reports unknown ones as undefined', () => {
    expect(nameOf(SEND_FLAGS, 8)).toBe('INLINE');
    expect(nameOf(SEND_FLAGS, 3)).toBeUndefined();
  });

  it('builds access masks from the engine table', () => {
    expect(accessMaskOf(['LOCAL_WRITE', 'REMOTE_ATOMIC'])).toBe(0b1001);
    expect(accessMaskOf(['REMOTE_READ', 'REMOTE_WRITE'])).toBe(0b0110);
    expect(() => accessMaskOf(['NOPE' as never])).toThrow(UnknownNameError);
    // Own keys only: an Object.prototype member is no flag (it used to OR in 0).
    expect(() => accessMaskOf(['toString' as never])).toThrow(UnknownNameError);
    expect(() => accessMaskOf('LOCAL_WRITE' as never)).toThrow(VerbsArgumentError);
  });
});

describe('GIDs and GUIDs', () => {
  it('prints an IPv4-mapped RoCE v2 GID and its address', () => {
    const gid = Buffer.from('00000000000000000000ffffc0000201', 'hex');
    expect(gidText(gid)).toEqual({ text: '::ffff:192.0.2.1', ipv4: '192.0.2.1' });
  });

  it('prints a link-local GID group by group', () => {
    const gid = Buffer.from('fe80000000000000ccd26bfffead9b2a', 'hex');
    expect(gidText(gid)).toEqual({ text: 'fe80:0:0:0:ccd2:6bff:fead:9b2a', ipv4: undefined });
  });

  it('formats a node GUID as ibv_devinfo does', () => {
    expect(formatGuid(0xccd26bfffead9b2an)).toBe('ccd2:6bff:fead:9b2a');
    expect(formatGuid(0x1n)).toBe('0000:0000:0000:0001');
  });
});

describe('QP attributes', () => {
  it('computes the mask from the fields present', () => {
    const { attr, mask } = toNativeQpAttr({ state: 'RTS', sqPsn: 0x123456, maxRdAtomic: 4 });
    expect(attr).toEqual({ qpState: 3, sqPsn: 0x123456, maxRdAtomic: 4 });
    expect(mask).toBe(QP_ATTR_MASK.STATE | QP_ATTR_MASK.SQ_PSN | QP_ATTR_MASK.MAX_QP_RD_ATOMIC);
  });

  it('maps access names, MTUs and the address vector', () => {
    const dgid = Buffer.from('00000000000000000000ffffc0000201', 'hex');
    const { attr, mask } = toNativeQpAttr({
      state: 'RTR',
      pathMtu: 1024,
      access: ['REMOTE_ATOMIC'],
      av: { port: 1, grh: { dgid, sgidIndex: 1 } },
    });
    expect(attr.qpState).toBe(2);
    expect(attr.pathMtu).toBe(3);
    expect(attr.qpAccessFlags).toBe(8);
    expect(attr.ahAttr?.grh?.dgid).toBe(dgid);
    expect(attr.ahAttr?.grh?.sgidIndex).toBe(1);
    expect(mask).toBe(
      QP_ATTR_MASK.STATE | QP_ATTR_MASK.PATH_MTU | QP_ATTR_MASK.ACCESS_FLAGS | QP_ATTR_MASK.AV,
    );
  });

  it('sets one mask bit per field given (property)', () => {
    const keys = Object.keys(QP_ATTR_FIELDS).filter(
      (k) => !['state', 'pathMtu', 'access', 'av'].includes(k),
    ) as (keyof typeof QP_ATTR_FIELDS)[];
    fc.assert(
      fc.property(fc.subarray(keys), (chosen) => {
        const attr = Object.fromEntries(chosen.map((k) => [k, 1]));
        const { mask } = toNativeQpAttr(attr);
        let bits = 0;
        for (let m = mask; m !== 0; m >>>= 1) bits += m & 1;
        expect(bits).toBe(chosen.length);
      }),
    );
  });

  it('refuses out-of-range and unknown values before any native call', () => {
    expect(() => toNativeQpAttr({ sqPsn: 0x1000000 })).toThrow(VerbsArgumentError);
    expect(() => toNativeQpAttr({ retryCnt: 8 })).toThrow(VerbsArgumentError);
    expect(() => toNativeQpAttr({ timeout: 1.5 })).toThrow(VerbsArgumentError);
    expect(() => toNativeQpAttr({ state: 'FLYING' as never })).toThrow(VerbsArgumentError);
    expect(() => toNativeQpAttr({ pathMtu: 1500 as never })).toThrow(VerbsArgumentError);
    expect(() => toNativeQpAttr({ bogus: 1 } as never)).toThrow(VerbsArgumentError);
    expect(() => toNativeQpAttr({ av: { grh: { dgid: Buffer.alloc(15), sgidIndex: 1 } } })).toThrow(
      VerbsArgumentError,
    );
  });
});

describe('work completions', () => {
  const raw = {
    wrId: 0x0123456789abcdefn,
    status: 0,
    opcode: 129,
    vendorErr: 0,
    byteLen: 24,
    immDataRaw: 0x78563412,
    immData: 0x12345678,
    qpNum: 17,
    srcQp: 0,
    wcFlags: WC_FLAGS.WITH_IMM | WC_FLAGS.GRH,
    pkeyIndex: 0,
    slid: 0,
    sl: 0,
    dlidPathBits: 0,
  };

  it('names status, opcode and flags, and keeps both byte orders of imm_data', () => {
    const wc = toWorkCompletion(raw);
    expect(wc.status).toBe('SUCCESS');
    expect(wc.ok).toBe(true);
    expect(wc.opcode).toBe('RECV_RDMA_WITH_IMM');
    expect(wc.flags).toEqual(['GRH', 'WITH_IMM']);
    expect(wc.immData).toBe(0x12345678);
    expect(wc.immDataRaw).toBe(0x78563412);
    expect(wc.wrId).toBe(0x0123456789abcdefn);
  });

  it('reports no immediate value without WITH_IMM, and names error statuses', () => {
    const wc = toWorkCompletion({ ...raw, wcFlags: 0, status: WC_STATUS.REM_ACCESS_ERR });
    expect(wc.immData).toBeUndefined();
    expect(wc.status).toBe('REM_ACCESS_ERR');
    expect(wc.ok).toBe(false);
  });
});

describe('perftest output parsing (bench verbs)', () => {
  it('reads t_typical and MsgRate by column name', async () => {
    const { perftestColumns } = await import('../../../src/bench/verbs.js');
    const lat = perftestColumns(
      [
        '---------------------------------------------------------------------------------------',
        ' #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec] ',
        ' 8       1000          30.12          210.55       34.87              36.20          8.11             70.02                  190.40',
      ].join('\n'),
    );
    expect(lat.get('t_typical[usec]')).toBe(34.87);
    expect(lat.get('99% percentile[usec]')).toBe(70.02);
    const bw = perftestColumns(
      [
        ' #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]',
        ' 8          3200             0.21               0.21                0.027001',
      ].join('\n'),
    );
    expect(bw.get('MsgRate[Mpps]')).toBe(0.027001);
    expect(bw.get('BW peak[MB/sec]')).toBe(0.21);
  });
});

describe('the addon poll layout', () => {
  it('decodes wr_id halves and converts imm_data from network order', async () => {
    const { decodeWorkCompletion, ntohl } = await import('../../../src/verbs/completion.js');
    const { WC_LAYOUT, WC_WORDS } = await import('../../../src/native/bindings.js');
    const words = new Uint32Array(2 * WC_WORDS);
    const second = WC_WORDS;
    words[second + WC_LAYOUT.wrIdLow] = 0x89abcdef;
    words[second + WC_LAYOUT.wrIdHigh] = 0x01234567;
    words[second + WC_LAYOUT.opcode] = 129;
    words[second + WC_LAYOUT.byteLen] = 4096;
    words[second + WC_LAYOUT.immDataRaw] = 0x78563412;
    words[second + WC_LAYOUT.qpNum] = 0x11;
    const wc = decodeWorkCompletion(words, 1);
    expect(wc.wrId).toBe(0x0123456789abcdefn);
    expect(wc.opcode).toBe(129);
    expect(wc.byteLen).toBe(4096);
    expect(wc.qpNum).toBe(0x11);
    expect(wc.immData).toBe(0x12345678); // x86: little-endian host
    expect(ntohl(0xd4c3b2a1)).toBe(0xa1b2c3d4);
    fc.assert(
      fc.property(fc.nat({ max: 0xffffffff }), (x) => {
        expect(ntohl(ntohl(x))).toBe(x);
      }),
    );
  });

  it('completionAt names a completion as toWorkCompletion(decodeWorkCompletion(...)) does', async () => {
    const { completionAt, decodeWorkCompletion, toWorkCompletion } = await import(
      '../../../src/verbs/completion.js'
    );
    const { WC_WORDS } = await import('../../../src/native/bindings.js');
    fc.assert(
      fc.property(
        fc.array(fc.nat({ max: 0xffffffff }), { minLength: WC_WORDS, maxLength: WC_WORDS }),
        fc.constantFrom(0, 1, 3, 0x40, 0x83, 0xffffffff),
        fc.constantFrom(0, 1, 5, 10, 21, 0xffffffff),
        (fields, opcode, status) => {
          const words = Uint32Array.from(fields);
          words[POLL_LAYOUT.opcode] = opcode;
          words[POLL_LAYOUT.status] = status;
          expect(completionAt(words, 0)).toEqual(toWorkCompletion(decodeWorkCompletion(words, 0)));
        },
      ),
    );
  });
});
