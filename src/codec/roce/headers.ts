/**
 * Extension transport headers (IBTA Vol. 1 §9.3) described as field layouts. One table
 * gives every field's name, byte offset and width; the decoder, the encoder and the range
 * checks all read it. 8-byte fields are bigint, narrower ones number (all big-endian).
 */
import { requireBytes, requireInteger, requireName } from '../../arguments.js';
import { DecodeError, type DecodeResult, decoded, EncodeError, failed } from '../errors.js';
import { EXTENSION_HEADER_LENGTH, type ExtensionHeader } from './opcodes.js';

/** One field of an extension header. `width` is in bytes. */
export interface FieldLayout {
  readonly name: string;
  readonly offset: number;
  readonly width: 1 | 2 | 3 | 4 | 8;
}

/** Field layouts of every extension header, in wire order within the header. */
export const EXTENSION_HEADER_LAYOUT = {
  // §9.3.1 RDETH: 8 reserved bits, EE-Context.
  RDETH: [
    { name: 'reserved', offset: 0, width: 1 },
    { name: 'eeContext', offset: 1, width: 3 },
  ],
  // §9.3.2 DETH: Q_Key, 8 reserved bits, source QP.
  DETH: [
    { name: 'qKey', offset: 0, width: 4 },
    { name: 'reserved', offset: 4, width: 1 },
    { name: 'sourceQp', offset: 5, width: 3 },
  ],
  // Annex A14 XRCETH: 8 reserved bits, XRC SRQ number.
  XRCETH: [
    { name: 'reserved', offset: 0, width: 1 },
    { name: 'xrcSrq', offset: 1, width: 3 },
  ],
  // §9.3.3 RETH: virtual address, R_Key, DMA length.
  RETH: [
    { name: 'virtualAddress', offset: 0, width: 8 },
    { name: 'rKey', offset: 8, width: 4 },
    { name: 'dmaLength', offset: 12, width: 4 },
  ],
  // IBTA 1.5 FETH (FLUSH): kept as one 32-bit word (selectivity level and placement type
  // live in its low bits).
  FETH: [{ name: 'value', offset: 0, width: 4 }],
  // §9.3.4 AtomicETH: virtual address, R_Key, swap (or add) data, compare data.
  AtomicETH: [
    { name: 'virtualAddress', offset: 0, width: 8 },
    { name: 'rKey', offset: 8, width: 4 },
    { name: 'swapOrAddData', offset: 12, width: 8 },
    { name: 'compareData', offset: 20, width: 8 },
  ],
  // §9.3.5 AETH: syndrome, MSN (see aeth.ts for the syndrome's meaning).
  AETH: [
    { name: 'syndrome', offset: 0, width: 1 },
    { name: 'msn', offset: 1, width: 3 },
  ],
  // §9.3.6 AtomicAckETH: the original remote data.
  AtomicAckETH: [{ name: 'originalRemoteData', offset: 0, width: 8 }],
  // §9.3.7 ImmDt: 32 bits of immediate data, kept as the big-endian wire value.
  ImmDt: [{ name: 'immediateData', offset: 0, width: 4 }],
  // §9.3.8 IETH: the R_Key to invalidate.
  IETH: [{ name: 'rKey', offset: 0, width: 4 }],
} as const satisfies Record<ExtensionHeader, readonly FieldLayout[]>;

type Layouts = typeof EXTENSION_HEADER_LAYOUT;

/** The decoded value of extension header `H`: one property per layout field. */
export type ExtensionHeaderValue<H extends ExtensionHeader> = {
  readonly [F in Layouts[H][number] as F['name']]: F['width'] extends 8 ? bigint : number;
};

/** RETH (IBTA §9.3.3). */
export type Reth = ExtensionHeaderValue<'RETH'>;
/** AtomicETH (IBTA §9.3.4). */
export type AtomicEth = ExtensionHeaderValue<'AtomicETH'>;
/** AETH (IBTA §9.3.5). */
export type Aeth = ExtensionHeaderValue<'AETH'>;
/** AtomicAckETH (IBTA §9.3.6). */
export type AtomicAckEth = ExtensionHeaderValue<'AtomicAckETH'>;
/** ImmDt (IBTA §9.3.7). */
export type ImmDt = ExtensionHeaderValue<'ImmDt'>;
/** IETH (IBTA §9.3.8). */
export type Ieth = ExtensionHeaderValue<'IETH'>;
/** DETH (IBTA §9.3.2). */
export type Deth = ExtensionHeaderValue<'DETH'>;
/** RDETH (IBTA §9.3.1). */
export type Rdeth = ExtensionHeaderValue<'RDETH'>;
/** XRCETH (IBTA Annex A14). */
export type Xrceth = ExtensionHeaderValue<'XRCETH'>;
/** FETH (IBTA 1.5). */
export type Feth = ExtensionHeaderValue<'FETH'>;

/** Decoded extension headers of one packet, keyed by header name. */
export type ExtensionHeaders = { readonly [H in ExtensionHeader]?: ExtensionHeaderValue<H> };

/** Decodes extension header `h` at `offset` of `bytes`; `base` shifts reported offsets. */
export function decodeExtensionHeader<H extends ExtensionHeader>(
  h: H,
  bytes: Uint8Array,
  offset: number,
  base = 0,
): DecodeResult<ExtensionHeaderValue<H>> {
  requireName('codec', 'RoCE extension header', EXTENSION_HEADER_LAYOUT, h, 'header');
  requireBytes('codec', 'bytes', bytes);
  requireInteger('codec', 'offset', offset, 0);
  requireInteger('codec', 'base', base, 0);
  const length = EXTENSION_HEADER_LENGTH[h];
  if (offset + length > bytes.length)
    return failed(
      new DecodeError('roce', h, base + offset, 'truncated', `${h} needs ${length} bytes`),
    );
  const v = new DataView(bytes.buffer, bytes.byteOffset + offset, length);
  const out: Record<string, number | bigint> = {};
  for (const f of EXTENSION_HEADER_LAYOUT[h] as readonly FieldLayout[]) {
    switch (f.width) {
      case 1:
        out[f.name] = v.getUint8(f.offset);
        break;
      case 2:
        out[f.name] = v.getUint16(f.offset);
        break;
      case 3:
        out[f.name] = (v.getUint8(f.offset) << 16) | v.getUint16(f.offset + 1);
        break;
      case 4:
        out[f.name] = v.getUint32(f.offset);
        break;
      case 8:
        out[f.name] = v.getBigUint64(f.offset);
        break;
    }
  }
  return decoded(out as ExtensionHeaderValue<H>);
}

/** Throws `EncodeError` unless every field of `value` fits its layout width. */
export function validateExtensionHeader<H extends ExtensionHeader>(
  h: H,
  value: ExtensionHeaderValue<H>,
): void {
  const record = value as unknown as Record<string, unknown>;
  for (const f of EXTENSION_HEADER_LAYOUT[h] as readonly FieldLayout[]) {
    const x = record[f.name];
    if (f.width === 8) {
      if (typeof x !== 'bigint' || x < 0n || x > 0xffffffffffffffffn)
        throw new EncodeError('roce', `${h}.${f.name}`, `${String(x)} is not a u64 bigint`);
    } else {
      const max = 2 ** (8 * f.width) - 1;
      if (typeof x !== 'number' || !Number.isInteger(x) || x < 0 || x > max)
        throw new EncodeError('roce', `${h}.${f.name}`, `${String(x)} not in 0..${max}`);
    }
  }
}

/** Writes extension header `h` at `offset` of `out`; validate first. */
export function writeExtensionHeader<H extends ExtensionHeader>(
  h: H,
  value: ExtensionHeaderValue<H>,
  out: Uint8Array,
  offset: number,
): void {
  validateExtensionHeader(h, value);
  const record = value as unknown as Record<string, number | bigint>;
  const v = new DataView(out.buffer, out.byteOffset + offset, EXTENSION_HEADER_LENGTH[h]);
  for (const f of EXTENSION_HEADER_LAYOUT[h] as readonly FieldLayout[]) {
    const x = record[f.name]!;
    switch (f.width) {
      case 1:
        v.setUint8(f.offset, x as number);
        break;
      case 2:
        v.setUint16(f.offset, x as number);
        break;
      case 3:
        v.setUint8(f.offset, (x as number) >> 16);
        v.setUint16(f.offset + 1, (x as number) & 0xffff);
        break;
      case 4:
        v.setUint32(f.offset, x as number);
        break;
      case 8:
        v.setBigUint64(f.offset, x as bigint);
        break;
    }
  }
}
