/** The argument checks both transport encoders and decoders (TCP, UDP) begin with. */
import { requireBytes } from '../../arguments.js';
import { requireFields, requirePayload } from '../encode-arguments.js';
import { DecodeError, type DecodeResult, EncodeError, failed } from '../errors.js';
import { inRange } from './bytes.js';

/**
 * `h` is a fields object with 16-bit source and destination ports, `payload` bytes and
 * `pseudoHeader` bytes when given; EncodeError naming `layer` otherwise (in that order).
 */
export function requireTransportArguments(
  layer: 'tcp' | 'udp',
  h: { readonly sourcePort: number; readonly destinationPort: number },
  payload: Uint8Array,
  pseudoHeader: Uint8Array | undefined,
): void {
  requireFields(layer, 'fields', h);
  requirePayload(layer, 'payload', payload);
  requirePayload(layer, 'pseudoHeader', pseudoHeader, true);
  if (!inRange(h.sourcePort, 0xffff)) throw new EncodeError(layer, 'sourcePort', 'not 16-bit');
  if (!inRange(h.destinationPort, 0xffff))
    throw new EncodeError(layer, 'destinationPort', 'not 16-bit');
}

/**
 * The checks both transport decoders begin with: `bytes` and `pseudoHeader` (when given)
 * are bytes (ArgumentError otherwise), and a header of `length` bytes is there; the
 * failed result when it is not.
 */
export function transportHeaderMissing(
  layer: 'tcp' | 'udp',
  bytes: Uint8Array,
  pseudoHeader: Uint8Array | undefined,
  length: number,
): DecodeResult<never> | undefined {
  requireBytes('codec', 'bytes', bytes);
  if (pseudoHeader !== undefined) requireBytes('codec', 'pseudoHeader', pseudoHeader);
  if (bytes.length >= length) return undefined;
  return failed(new DecodeError(layer, 'header', 0, 'truncated', `${bytes.length} < ${length}`));
}
