/**
 * Executing one Atomic Operation on target memory (RFC 7306 §5.1): read the 64-bit value
 * in the memory's byte order, compute, write back. The caller has already checked the
 * STag, bounds and alignment, so this cannot fail; memory is written only when the value
 * changes (a failed CmpSwap leaves it untouched, RFC 7306 §5.1.2).
 */

import { requireInteger, requireName, requireObject } from '../../arguments.js';
import type { AtomicOperationKind } from '../../codec/iwarp/opcodes.js';
import { ATOMIC_OPCODES } from '../../codec/iwarp/opcodes.js';
import { maskedCompareSwap, maskedFetchAdd, swap } from '../atomic/masked-arith.js';
import { readU64, writeU64 } from '../memory/byte-order.js';
import type { TaggedAccess } from '../memory/tagged-buffer.js';

/** The operand fields of an Atomic Request, in host numeric form (wire is big-endian). */
export interface AtomicOperands {
  readonly addOrSwapData: bigint;
  readonly addOrSwapMask: bigint;
  readonly compareData: bigint;
  readonly compareMask: bigint;
}

/** Result of an executed atomic: the Original Remote Data Value and the value stored. */
export interface AtomicExecution {
  readonly original: bigint;
  readonly stored: bigint;
}

/** The atomic operation kinds, from the codec's AOpCode table (one source). */
const ATOMIC_KINDS: Readonly<Record<string, number>> = Object.fromEntries(
  ATOMIC_OPCODES.map((row) => [row.kind, row.aOpCode]),
);

/** Runs `kind` at `access` and returns the original and the stored value. */
export function executeAtomic(
  kind: AtomicOperationKind,
  access: TaggedAccess,
  operands: AtomicOperands,
): AtomicExecution {
  requireName('engine', 'atomic operation kind', ATOMIC_KINDS, kind, 'kind');
  const a = requireObject('engine', 'access', access) as { buffer?: unknown; offset?: unknown };
  requireObject('engine', 'access.buffer', a.buffer);
  requireInteger('engine', 'access.offset', a.offset, 0);
  requireObject('engine', 'operands', operands);
  const { view, byteOrder } = access.buffer;
  const original = readU64(view, access.offset, byteOrder);
  let stored: bigint;
  switch (kind) {
    case 'fetch-add':
      stored = maskedFetchAdd(original, operands.addOrSwapData, operands.addOrSwapMask);
      break;
    case 'cmp-swap':
      stored = maskedCompareSwap(
        original,
        operands.compareData,
        operands.compareMask,
        operands.addOrSwapData,
        operands.addOrSwapMask,
      ).value;
      break;
    case 'swap':
      stored = swap(original, operands.addOrSwapData);
      break;
  }
  if (stored !== original) writeU64(view, access.offset, stored, byteOrder);
  return { original, stored };
}
