/**
 * The ACK Extended Transport Header's 8-bit syndrome (IBTA Vol. 1 §9.3.5, Tables 42-45):
 * bit 7 reserved (0), bits 6-5 the kind (ACK / RNR NAK / reserved / NAK), bits 4-0 the
 * credit count, RNR timer or NAK code. Names and values are data; the encoder and the
 * decoder read the same tables.
 */

import { requireCode, requireInteger, requireObject } from '../../arguments.js';
import { requireFields } from '../encode-arguments.js';
import { DecodeError, type DecodeResult, decoded, EncodeError, failed } from '../errors.js';

/** The 2-bit syndrome kind (IBTA Table 42). Value 2 is reserved. */
export const AethSyndromeKind = {
  ACK: 0,
  RNR_NAK: 1,
  NAK: 3,
} as const;

/** Name of an AETH syndrome kind. */
export type AethSyndromeKindName = keyof typeof AethSyndromeKind;

/** NAK codes (IBTA Table 44). Values 5-31 are reserved. */
export const AethNakCode = {
  PSN_SEQUENCE_ERROR: 0,
  INVALID_REQUEST: 1,
  REMOTE_ACCESS_ERROR: 2,
  REMOTE_OPERATIONAL_ERROR: 3,
  INVALID_RD_REQUEST: 4,
} as const;

/** Name of an AETH NAK code. */
export type AethNakCodeName = keyof typeof AethNakCode;

/**
 * The end-to-end credit count an ACK's 5-bit field stands for (IBTA Table 43); index is the
 * encoded value. 31 means "invalid" (no credit information; the requester may send freely).
 */
export const AETH_CREDIT_TABLE: readonly number[] = [
  0, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048,
  3072, 4096, 6144, 8192, 12288, 16384, 24576, 32768,
];

/** Encoded credit count meaning "invalid / unlimited credits" (IBTA Table 43). */
export const AETH_CREDITS_INVALID = 31;

/**
 * Minimum RNR NAK timer in microseconds per encoded value (IBTA Table 45); index is the
 * 5-bit encoding. Value 0 is the longest (655.36 ms).
 */
export const RNR_TIMER_MICROSECONDS: readonly number[] = [
  655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960, 1280, 1920, 2560, 3840, 5120,
  7680, 10240, 15360, 20480, 30720, 40960, 61440, 81920, 122880, 163840, 245760, 327680, 491520,
];

/** A decoded AETH syndrome. */
export type AethSyndrome =
  | { readonly kind: 'ACK'; readonly creditCount: number }
  | { readonly kind: 'RNR_NAK'; readonly timer: number }
  | { readonly kind: 'NAK'; readonly code: AethNakCodeName };

/** Encodes a syndrome into its 8-bit wire value; throws `EncodeError` on range errors. */
export function encodeAethSyndrome(s: AethSyndrome): number {
  requireFields('roce', 'syndrome', s);
  switch (s.kind) {
    case 'ACK':
      if (!Number.isInteger(s.creditCount) || s.creditCount < 0 || s.creditCount > 31)
        throw new EncodeError('roce', 'aeth.syndrome.creditCount', `${s.creditCount} not in 0..31`);
      return (AethSyndromeKind.ACK << 5) | s.creditCount;
    case 'RNR_NAK':
      if (!Number.isInteger(s.timer) || s.timer < 0 || s.timer > 31)
        throw new EncodeError('roce', 'aeth.syndrome.timer', `${s.timer} not in 0..31`);
      return (AethSyndromeKind.RNR_NAK << 5) | s.timer;
    case 'NAK': {
      const code = AethNakCode[s.code];
      if (code === undefined)
        throw new EncodeError('roce', 'aeth.syndrome.code', `unknown NAK code ${String(s.code)}`);
      return (AethSyndromeKind.NAK << 5) | code;
    }
  }
}

/** Name of a NAK code value, or `undefined` when reserved. */
export function aethNakCodeName(code: number): AethNakCodeName | undefined {
  requireCode('codec', 'code', code);
  for (const [name, value] of Object.entries(AethNakCode))
    if (value === code) return name as AethNakCodeName;
  return undefined;
}

/**
 * Decodes an 8-bit syndrome. `offset` is where the syndrome byte sits in the caller's
 * buffer, reported in errors. Reserved bit 7, the reserved kind 2 and reserved NAK codes
 * are decode errors.
 */
export function decodeAethSyndrome(byte: number, offset = 0): DecodeResult<AethSyndrome> {
  requireInteger('codec', 'byte', byte, 0, 0xff);
  requireInteger('codec', 'offset', offset, 0);
  if ((byte & 0x80) !== 0)
    return failed(
      new DecodeError('roce', 'aeth.syndrome', offset, 'reserved-nonzero', 'bit 7 must be 0'),
    );
  const kind = (byte >> 5) & 0x3;
  const low = byte & 0x1f;
  if (kind === AethSyndromeKind.ACK) return decoded({ kind: 'ACK', creditCount: low });
  if (kind === AethSyndromeKind.RNR_NAK) return decoded({ kind: 'RNR_NAK', timer: low });
  if (kind === AethSyndromeKind.NAK) {
    const code = aethNakCodeName(low);
    if (code === undefined)
      return failed(
        new DecodeError('roce', 'aeth.syndrome.code', offset, 'bad-value', `reserved NAK ${low}`),
      );
    return decoded({ kind: 'NAK', code });
  }
  return failed(
    new DecodeError('roce', 'aeth.syndrome.kind', offset, 'bad-value', 'syndrome kind 2 reserved'),
  );
}

/** A human-readable description of a syndrome, e.g. `NAK REMOTE_ACCESS_ERROR`. */
export function describeAethSyndrome(s: AethSyndrome): string {
  requireObject('codec', 's', s);
  switch (s.kind) {
    case 'ACK':
      return s.creditCount === AETH_CREDITS_INVALID
        ? 'ACK (credits invalid)'
        : `ACK (credits ${AETH_CREDIT_TABLE[s.creditCount]})`;
    case 'RNR_NAK':
      return `RNR NAK (timer ${RNR_TIMER_MICROSECONDS[s.timer]} us)`;
    case 'NAK':
      return `NAK ${s.code}`;
  }
}
