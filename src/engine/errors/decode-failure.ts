/**
 * What a Responder does with a segment the codec cannot decode: the DecodeError's field
 * names which RFC 7306 §8.2 validation failed ("The DDP layer MUST validate all DDP
 * Segment fields. The RDMA OpCode MUST be valid. The RDMA Version MUST be valid.").
 */
import type { DecodeError } from '../../codec/errors.js';
import type { EngineFailure } from './failure-table.js';

/** The engine failure a decode error stands for. */
export function failureOfDecodeError(error: DecodeError): EngineFailure {
  switch (error.field) {
    case 'dv':
      return 'invalid-ddp-version';
    case 'rv':
      return 'invalid-rdmap-version';
    case 'opcode':
    case 't':
      // An opcode the profile does not define (or on the wrong buffer model): RFC 7306
      // §1.1 / §8.2, Unexpected OpCode — what siw_get_hdr sends for opcodes above 7.
      return 'unexpected-opcode';
    case 'qn':
      return 'invalid-qn';
    case 'aOpCode':
      return 'unsupported-atomic-opcode';
    case 'immediateData':
      // RFC 7306 §6.3: Immediate Data (and the V2 draft's last Send with Immediate segment)
      // carries exactly 8 bytes; fewer or more is the same failure.
      return 'immediate-data-length';
    default:
      // Any other header of the wrong size (a Read Request or Atomic header with a byte
      // too many or too few, a DDP header cut off, ...): no more specific code.
      return 'malformed-segment';
  }
}
