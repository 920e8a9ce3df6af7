/**
 * The iWARP layout tables against their origins: golden bytes laid out by hand from the
 * RFC figures (every field a distinct value, so a wrong offset, shift or width shows), the
 * tshark 4.0 field list (the iwarp_* names `tshark -G fields` prints, copied into
 * tshark-4.0-iwarp-fields.ts), and the tables' own consistency (no overlapping bits, each
 * header's fields inside its length).
 */
import { describe, expect, it } from 'vitest';
import { EncodeError } from '../../../../src/codec/errors.js';
import {
  ATOMIC_REQUEST_LAYOUT,
  ATOMIC_RESPONSE_LAYOUT,
  DDP_TAGGED_LAYOUT,
  DDP_UNTAGGED_LAYOUT,
  type HeaderLayout,
  IMMEDIATE_DATA_LAYOUT,
  IWARP_LAYOUTS,
  MPA_FRAME_LAYOUT,
  READ_REQUEST_LAYOUT,
  READ_V2_REQUEST_LAYOUT,
  readHeader,
  TERMINATE_LAYOUT,
  tsharkFieldName,
  writeHeader,
} from '../../../../src/codec/iwarp/layouts.js';
import { hex, toHex } from './hex.js';
import { TSHARK_40_IWARP_FIELDS } from './tshark-4.0-iwarp-fields.js';

/** One golden case: the header's bytes as the RFC figure lays them out, and its fields. */
interface Golden {
  readonly layout: HeaderLayout;
  readonly bytes: string;
  readonly fields: Record<string, number | bigint | boolean>;
}

const GOLDEN: readonly Golden[] = [
  {
    // RFC 5041 §4.2 Figure 3 + RFC 5040 §4.2: T=1 L=1 Rsvd=0101b DV=01b | RV=01b Rsv=10b Opcode=0010b | STag | TO.
    layout: DDP_TAGGED_LAYOUT,
    bytes: 'd5 62 1a2b3c4d 0123456789abcdef',
    fields: {
      tagged: true,
      last: true,
      ddpReserved: 5,
      ddpVersion: 1,
      rdmaVersion: 1,
      rdmapReserved: 2,
      opcode: 2,
      stag: 0x1a2b3c4d,
      taggedOffset: 0x0123456789abcdefn,
    },
  },
  {
    // RFC 5041 §4.3 Figure 4: T=0 L=0 Rsvd=1010b DV=01b | RV=01b Rsv=01b Opcode=0100b | Inval STag | QN | MSN | MO.
    layout: DDP_UNTAGGED_LAYOUT,
    bytes: '29 54 11223344 00000001 01020304 0a0b0c0d',
    fields: {
      tagged: false,
      last: false,
      ddpReserved: 10,
      ddpVersion: 1,
      rdmaVersion: 1,
      rdmapReserved: 1,
      opcode: 4,
      invalidateSTag: 0x11223344,
      queueNumber: 1,
      messageSequenceNumber: 0x01020304,
      messageOffset: 0x0a0b0c0d,
    },
  },
  {
    // RFC 5040 §4.4 Figure 8. STags that are not byte palindromes (issue 38).
    layout: READ_REQUEST_LAYOUT,
    bytes: '1a2b3c4d 0123456789abcdef 00001000 5e6f7081 fedcba9876543210',
    fields: {
      sinkSTag: 0x1a2b3c4d,
      sinkTaggedOffset: 0x0123456789abcdefn,
      readSize: 4096,
      sourceSTag: 0x5e6f7081,
      sourceTaggedOffset: 0xfedcba9876543210n,
    },
  },
  {
    // RFC 5040 §4.8 Figure 9: Layer=2 EType=1 ErrCode=0x05 M=1 D=0 R=1 Rsvd=0x0123.
    layout: TERMINATE_LAYOUT,
    bytes: '21 05 a1 23',
    fields: {
      layer: 2,
      errorType: 1,
      errorCode: 5,
      segmentLengthValid: true,
      ddpHeaderIncluded: false,
      rdmaHeaderIncluded: true,
      terminateReserved: 0x0123,
    },
  },
  {
    // RFC 7306 §5.2.1 Figure 4: Reserved (28 bits) = 0x1234567, AOpCode = 2 (CmpSwap).
    layout: ATOMIC_REQUEST_LAYOUT,
    bytes: `12345672 0a0b0c0d 1a2b3c4d 0123456789abcde8 1111111122222222 ffffffff00000000
            3333333344444444 00000000ffffffff`,
    fields: {
      atomicReserved: 0x1234567,
      aOpCode: 2,
      requestIdentifier: 0x0a0b0c0d,
      remoteSTag: 0x1a2b3c4d,
      remoteTaggedOffset: 0x0123456789abcde8n,
      addOrSwapData: 0x1111111122222222n,
      addOrSwapMask: 0xffffffff00000000n,
      compareData: 0x3333333344444444n,
      compareMask: 0x00000000ffffffffn,
    },
  },
  {
    // RFC 7306 §5.2.2 Figure 5.
    layout: ATOMIC_RESPONSE_LAYOUT,
    bytes: '0a0b0c0d fedcba9876543210',
    fields: { originalRequestIdentifier: 0x0a0b0c0d, originalRemoteDataValue: 0xfedcba9876543210n },
  },
  {
    // RFC 7306 §6.3.
    layout: IMMEDIATE_DATA_LAYOUT,
    bytes: '0123456789abcdef',
    fields: { immediateData: 0x0123456789abcdefn },
  },
  {
    // draft-wood-storm-rdmap-ext-v2-00 §6.1.
    layout: READ_V2_REQUEST_LAYOUT,
    bytes: '00002000 6b7c8d9e 0123456789abcdef',
    fields: { readSize: 0x2000, sourceSTag: 0x6b7c8d9e, sourceTaggedOffset: 0x0123456789abcdefn },
  },
  {
    // RFC 5044 §7.1 + RFC 6581 §5: key, M=1 C=0 R=1 enhanced=1 Res=0011b, Rev 2, PD_Length 260.
    layout: MPA_FRAME_LAYOUT,
    bytes: `${toHex(new TextEncoder().encode('MPA ID Req Frame'))} b3 02 0104`,
    fields: {
      markers: true,
      crc: false,
      reject: true,
      enhanced: true,
      reserved: 3,
      revision: 2,
      pdLength: 260,
    },
  },
];

describe('iWARP layout tables against the RFC byte layouts', () => {
  for (const g of GOLDEN) {
    it(`${g.layout.name}: reads the golden bytes field by field`, () => {
      const bytes = hex(g.bytes);
      expect(bytes.length).toBe(g.layout.length);
      expect(readHeader(g.layout, bytes)).toEqual(g.fields);
    });

    it(`${g.layout.name}: writes the golden bytes from the fields`, () => {
      const out = new Uint8Array(g.layout.length);
      const prefix = hex(g.bytes).subarray(0, g.layout.fields[0]!.offset);
      out.set(prefix, 0); // bytes no field covers (the MPA key)
      writeHeader(g.layout, g.fields, out);
      expect(toHex(out)).toBe(toHex(hex(g.bytes)));
    });
  }

  it('range checks come from the table: one past a field limit is an EncodeError naming it', () => {
    const fields = { ...GOLDEN[3]!.fields, errorType: 16 };
    expect(() => writeHeader(TERMINATE_LAYOUT, fields, new Uint8Array(4))).toThrow(EncodeError);
    expect(() => writeHeader(TERMINATE_LAYOUT, fields, new Uint8Array(4))).toThrow(/errorType/);
    const wide = { ...GOLDEN[2]!.fields, sinkTaggedOffset: 1n << 64n };
    expect(() => writeHeader(READ_REQUEST_LAYOUT, wide, new Uint8Array(28))).toThrow(
      /sinkTaggedOffset/,
    );
  });
});

describe('iWARP layout tables are consistent', () => {
  for (const layout of IWARP_LAYOUTS) {
    it(`${layout.name}: fields lie inside the header and no two share a bit`, () => {
      const used = new Set<number>();
      for (const f of layout.fields) {
        expect(f.offset + f.unit).toBeLessThanOrEqual(layout.length);
        expect(f.shift + f.bits).toBeLessThanOrEqual(f.unit * 8);
        if (f.flag === true) expect(f.bits).toBe(1);
        for (let bit = 0; bit < f.bits; bit++) {
          const absolute = f.offset * 8 + (f.unit * 8 - 1 - f.shift - bit);
          expect(used.has(absolute), `${f.name} bit ${bit}`).toBe(false);
          used.add(absolute);
        }
      }
    });
  }
});

describe('iWARP layout tables against tshark 4.0 field names', () => {
  it('every tshark name in the tables is a field tshark 4.0 has', () => {
    const names = IWARP_LAYOUTS.flatMap((l) => l.fields.flatMap((f) => f.tshark ?? []));
    expect(names.length).toBeGreaterThan(30);
    for (const n of names) expect(TSHARK_40_IWARP_FIELDS, n).toContain(n);
  });

  it("the Atomic Request's first pair is add_* for FetchAdd and swap_* otherwise (as tshark names it)", () => {
    const data = ATOMIC_REQUEST_LAYOUT.fields.find((f) => f.name === 'addOrSwapData')!;
    expect(tsharkFieldName(data, 0)).toBe('iwarp_rdma.atomic.add_data');
    expect(tsharkFieldName(data, 2)).toBe('iwarp_rdma.atomic.swap_data');
    expect(TSHARK_40_IWARP_FIELDS).toContain('iwarp_rdma.atomic.swap_data');
  });
});
