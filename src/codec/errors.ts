/**
 * Typed errors of the codec. Decoders return `DecodeError` values (never throw them
 * past the public API); encoders throw `EncodeError` for out-of-range fields before
 * writing anything, so nothing is half-encoded.
 */

import { nameText } from '../arguments.js';
import { RdmaInteropError, UnknownNameError } from '../errors.js';

/** The protocol layer a field belongs to. */
export type CodecLayer =
  | 'pcap'
  | 'pcapng'
  | 'ethernet'
  | 'sll'
  | 'ipv4'
  | 'ipv6'
  | 'udp'
  | 'tcp'
  | 'mpa'
  | 'ddp'
  | 'rdmap'
  | 'rdmap-ext'
  | 'bth'
  | 'roce';

/** Why a decode failed. */
export type DecodeReason =
  | 'truncated'
  | 'bad-value'
  | 'reserved-nonzero'
  | 'unknown-opcode'
  | 'wrong-profile'
  | 'bad-crc'
  | 'bad-length';

/** Malformed wire bytes: which layer and field, at which byte offset, and why. */
export class DecodeError extends RdmaInteropError {
  override readonly name = 'DecodeError';
  readonly origin = 'codec';
  constructor(
    readonly layer: CodecLayer,
    readonly field: string,
    /** Byte offset of the field, relative to the buffer handed to the decoder. */
    readonly offset: number,
    readonly reason: DecodeReason,
    detail: string,
  ) {
    super(`${layer}.${field} at offset ${offset}: ${reason}: ${detail}`);
  }
}

/** A field value an encoder cannot put on the wire (out of range, wrong size, ...). */
export class EncodeError extends RdmaInteropError {
  override readonly name = 'EncodeError';
  readonly origin = 'codec';
  constructor(
    readonly layer: CodecLayer,
    readonly field: string,
    detail: string,
  ) {
    super(`${layer}.${field}: ${detail}`);
  }
}

/** The result of every decoder: a value or a typed error, never an exception. */
export type DecodeResult<T> = { ok: true; value: T } | { ok: false; error: DecodeError };

export function decoded<T>(value: T): DecodeResult<T> {
  return { ok: true, value };
}

export function failed<T>(error: DecodeError): DecodeResult<T> {
  return { ok: false, error };
}

/**
 * The row of `rows` whose key (`keyOf`) is `name`, or an UnknownNameError naming `kind`
 * and listing every key (the lookup convention of the codec's tables).
 */
export function rowNamed<T>(
  rows: readonly T[],
  keyOf: (row: T) => string,
  name: unknown,
  kind: string,
): T {
  const row = rows.find((r) => keyOf(r) === name);
  if (row === undefined) throw new UnknownNameError('codec', kind, nameText(name), rows.map(keyOf));
  return row;
}
