import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DecodeError, EncodeError } from '../../../../src/codec/errors.js';
import { decodeCapture } from '../../../../src/codec/pcap/capture.js';
import { decodePcap, encodePcap, PCAP_MAGIC_MICRO } from '../../../../src/codec/pcap/pcap.js';
import { decodePcapng, encodePcapng } from '../../../../src/codec/pcap/pcapng.js';
import { makeTempDir } from '../../../helpers/pcap.js';
import { TSHARK_AVAILABLE, tsharkColumns } from '../../../helpers/tshark.js';

const recordArb = (micro: boolean) =>
  fc.record({
    timestampNs: fc
      .bigInt({ min: 0n, max: 0xffffffffn * 1_000_000_000n + 999_999_999n })
      .map((t) => (micro ? t - (t % 1000n) : t)),
    data: fc.uint8Array({ maxLength: 80 }),
  });

function hex(s: string): Uint8Array {
  return Uint8Array.from(s.replace(/\s+/g, '').match(/../g) ?? [], (b) => Number.parseInt(b, 16));
}

describe('classic pcap', () => {
  it('reads a hand-written big-endian microsecond file', () => {
    // Magic a1b2c3d4 big-endian, v2.4, snaplen 65535, LINKTYPE_ETHERNET; one record at
    // 0x5f5e1000 s + 123456 us carrying 3 of 60 bytes.
    const bytes = hex(`
      a1b2c3d4 0002 0004 00000000 00000000 0000ffff 00000001
      5f5e1000 0001e240 00000003 0000003c aabbcc`);
    const r = decodePcap(bytes);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.value.littleEndian).toBe(false);
    expect(r.value.precision).toBe('micro');
    expect(r.value.linkType).toBe(1);
    expect(r.value.records).toEqual([
      {
        timestampNs: 0x5f5e1000n * 1_000_000_000n + 123_456_000n,
        data: Uint8Array.of(0xaa, 0xbb, 0xcc),
        originalLength: 60,
        linkType: 1,
        interfaceId: 0,
      },
    ]);
  });

  it('round-trips in both byte orders and precisions', () => {
    fc.assert(
      fc.property(fc.boolean(), fc.boolean(), (le, micro) => {
        fc.assert(
          fc.property(fc.array(recordArb(micro), { maxLength: 6 }), (records) => {
            const bytes = encodePcap(
              { linkType: 113, precision: micro ? 'micro' : 'nano', littleEndian: le },
              records,
            );
            const r = decodePcap(bytes);
            if (!r.ok) throw r.error;
            expect(r.value.littleEndian).toBe(le);
            expect(
              r.value.records.map((x) => ({ timestampNs: x.timestampNs, data: x.data })),
            ).toEqual(records);
            expect(r.value.records.every((x) => x.linkType === 113)).toBe(true);
            expect(
              encodePcap(
                { linkType: 113, precision: micro ? 'micro' : 'nano', littleEndian: le },
                r.value.records,
              ),
            ).toEqual(bytes);
          }),
          { numRuns: 25 },
        );
      }),
      { numRuns: 8 },
    );
  });

  it('rejects bad input with typed errors, never reading past the end', () => {
    const good = encodePcap({ linkType: 1 }, [
      { timestampNs: 5n, data: Uint8Array.of(1, 2, 3, 4) },
    ]);
    const cut = decodePcap(good.subarray(0, good.length - 1));
    expect(!cut.ok && [cut.error.field, cut.error.offset, cut.error.reason]).toEqual([
      'record.includedLength',
      32,
      'truncated',
    ]);
    const huge = good.slice();
    new DataView(huge.buffer).setUint32(32, 0xfffffff0, true); // a 4 GiB included length
    const r = decodePcap(huge);
    expect(!r.ok && r.error.reason).toBe('truncated');
    expect(() =>
      encodePcap({ linkType: 1, precision: 'micro' }, [
        { timestampNs: 1n, data: new Uint8Array(0) },
      ]),
    ).toThrow(EncodeError);
    expect(() =>
      encodePcap({ linkType: 1 }, [{ timestampNs: -1n, data: new Uint8Array(0) }]),
    ).toThrow(EncodeError);
    expect(PCAP_MAGIC_MICRO).toBe(0xa1b2c3d4);
  });
});

describe('pcapng', () => {
  it('round-trips EPBs over several interfaces and SPBs', () => {
    fc.assert(
      fc.property(fc.array(recordArb(false), { maxLength: 6 }), fc.boolean(), (records, le) => {
        const withIface = records.map((r, i) => ({ ...r, interfaceId: i % 2 }));
        const bytes = encodePcapng(
          { interfaces: [{ linkType: 1 }, { linkType: 276 }], littleEndian: le },
          withIface,
        );
        const r = decodePcapng(bytes);
        if (!r.ok) throw r.error;
        expect(
          r.value.records.map((x) => ({
            timestampNs: x.timestampNs,
            data: x.data,
            interfaceId: x.interfaceId,
          })),
        ).toEqual(withIface);
        expect(r.value.records.map((x) => x.linkType)).toEqual(
          withIface.map((x) => (x.interfaceId === 0 ? 1 : 276)),
        );
        // encode(decode(b)) == b for files in the form this writer produces.
        const again = encodePcapng(
          {
            interfaces: r.value.interfaces.map((i) => ({
              linkType: i.linkType,
              snapLength: i.snapLength,
            })),
            littleEndian: le,
          },
          r.value.records,
        );
        expect(again).toEqual(bytes);
        const spb = encodePcapng({ interfaces: [{ linkType: 101 }], simplePackets: true }, records);
        const s = decodePcapng(spb);
        if (!s.ok) throw s.error;
        expect(s.value.records.map((x) => x.data)).toEqual(records.map((x) => x.data));
      }),
      { numRuns: 60 },
    );
  });

  it('skips unknown blocks by their length and honours if_tsresol', () => {
    const base = encodePcapng({ interfaces: [{ linkType: 1 }] }, [
      { timestampNs: 0x0123456789n, data: Uint8Array.of(9, 8, 7) },
    ]);
    // Insert a custom block (type 0x00000bad, 16 bytes) after the IDB (at 28 + 32).
    const custom = hex('ad0b0000 10000000 01020304 10000000');
    const bytes = new Uint8Array([...base.subarray(0, 60), ...custom, ...base.subarray(60)]);
    const r = decodePcapng(bytes);
    if (!r.ok) throw r.error;
    expect(r.value.skippedBlocks).toBe(1);
    expect(r.value.records[0]?.timestampNs).toBe(0x0123456789n);
    expect(r.value.interfaces[0]?.unitsPerSecond).toBe(1_000_000_000n);
    // An IDB without if_tsresol means microseconds: patch the option code to 0 (end of options).
    const micro = base.slice();
    new DataView(micro.buffer).setUint16(28 + 16, 0, true);
    const m = decodePcapng(micro);
    expect(m.ok && m.value.records[0]?.timestampNs).toBe(0x0123456789n * 1000n);
  });

  it('random and mutated files give values or DecodeErrors only', () => {
    const good = encodePcapng({ interfaces: [{ linkType: 1 }] }, [
      { timestampNs: 7n, data: Uint8Array.of(1, 2, 3, 4, 5) },
      { timestampNs: 8n, data: Uint8Array.of(6) },
    ]);
    const goodPcap = encodePcap({ linkType: 1 }, [
      { timestampNs: 7n, data: Uint8Array.of(1, 2, 3) },
    ]);
    fc.assert(
      fc.property(
        fc.nat(),
        fc.integer({ min: 0, max: 255 }),
        fc.nat(),
        fc.boolean(),
        (at, v, cut, ng) => {
          const bytes = (ng ? good : goodPcap).slice();
          bytes[at % bytes.length] = v;
          for (const b of [bytes, bytes.subarray(0, cut % (bytes.length + 1))]) {
            const r = decodeCapture(b);
            if (!r.ok) expect(r.error).toBeInstanceOf(DecodeError);
            else
              for (const rec of r.value.records)
                expect(rec.data.length).toBeLessThanOrEqual(b.length);
          }
        },
      ),
      { numRuns: 1000 },
    );
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 100 }), (b) => {
        const r = decodeCapture(b);
        if (!r.ok) expect(r.error).toBeInstanceOf(DecodeError);
      }),
    );
  });

  // Issue 8: pcapng accepted an EPB whose original length was below its captured length.
  it('both formats refuse a record whose original length is below its captured length, the same way', () => {
    const data = Uint8Array.of(1, 2, 3, 4, 5);
    const ng = encodePcapng({ interfaces: [{ linkType: 1 }] }, [{ timestampNs: 7n, data }]);
    const classic = encodePcap({ linkType: 1 }, [{ timestampNs: 7n, data }]);
    // EPB at 28 + 32: original length at block body + 16 = 60 + 8 + 16; pcap record at 24 + 12.
    const ngAt = 60 + 8 + 16;
    const pcapAt = 24 + 12;
    for (const original of [4, 0]) {
      const badNg = ng.slice();
      new DataView(badNg.buffer).setUint32(ngAt, original, true);
      const badPcap = classic.slice();
      new DataView(badPcap.buffer).setUint32(pcapAt, original, true);
      const results = [
        [decodePcapng(badNg), ngAt],
        [decodePcap(badPcap), pcapAt],
        [decodeCapture(badNg), ngAt],
        [decodeCapture(badPcap), pcapAt],
      ] as const;
      for (const [r, at] of results) {
        expect(
          r.ok ? 'ok' : [r.error.field.split('.').at(-1), r.error.reason, r.error.offset],
        ).toEqual(['originalLength', 'bad-length', at]);
        expect(
          r.ok ||
            r.error.message.endsWith(`original length ${original} is below the captured length 5`),
        ).toBe(true);
      }
    }
    // Equal lengths and a longer original (a snapped packet) are fine in both.
    for (const original of [5, 1514]) {
      const okNg = ng.slice();
      new DataView(okNg.buffer).setUint32(ngAt, original, true);
      const okPcap = classic.slice();
      new DataView(okPcap.buffer).setUint32(pcapAt, original, true);
      for (const r of [decodePcapng(okNg), decodePcap(okPcap)])
        expect(r.ok && r.value.records[0]?.originalLength).toBe(original);
    }
    // The encoders refuse to write such a record.
    expect(() =>
      encodePcapng({ interfaces: [{ linkType: 1 }] }, [
        { timestampNs: 7n, data, originalLength: 4 },
      ]),
    ).toThrow(EncodeError);
    expect(() =>
      encodePcap({ linkType: 1 }, [{ timestampNs: 7n, data, originalLength: 4 }]),
    ).toThrow(EncodeError);
  });

  it.skipIf(!TSHARK_AVAILABLE)(
    'tshark reads our pcapng with the same timestamps and lengths',
    () => {
      const file = join(makeTempDir(), 'x.pcapng');
      const records = [
        {
          timestampNs: 1_700_000_000_123_456_789n,
          data: new Uint8Array(60).fill(0x5a),
          originalLength: 1514,
        },
        { timestampNs: 1_700_000_001_000_000_001n, data: new Uint8Array(42).fill(0xa5) },
      ];
      writeFileSync(
        file,
        encodePcapng({ interfaces: [{ linkType: 1, snapLength: 65535 }] }, records),
      );
      const rows = tsharkColumns(file, ['frame.time_epoch', 'frame.len', 'frame.cap_len']);
      expect(
        rows.map((r) => [r['frame.time_epoch']?.[0], r['frame.len']?.[0], r['frame.cap_len']?.[0]]),
      ).toEqual([
        ['1700000000.123456789', '1514', '60'],
        ['1700000001.000000001', '42', '42'],
      ]);
    },
  );
});
