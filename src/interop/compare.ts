/** Field-by-field comparison of the engine's and the kernel's outcome of a scenario. */
import type { Outcome } from './scenario.js';

/** The fields compared, in report order (everything but the note). */
export const COMPARED_FIELDS = [
  'post',
  'requesterStatus',
  'requesterOpcode',
  'requesterByteLen',
  'fetched',
  'responderStatus',
  'responderOpcode',
  'responderByteLen',
  'responderImm',
  'memoryAfter',
  'requesterQpState',
  'wire',
] as const satisfies readonly (keyof Outcome)[];

export type ComparedField = (typeof COMPARED_FIELDS)[number];

/** One field where the two sides differ, values formatted for people. */
export interface FieldDifference {
  readonly field: ComparedField;
  readonly engine: string;
  readonly kernel: string;
}

/** Formats a field value: 64-bit values as 16-digit hex, absent as an em dash. */
export function formatValue(value: unknown): string {
  if (value === undefined) return '—';
  if (typeof value === 'bigint') return `0x${value.toString(16).padStart(16, '0')}`;
  if (typeof value === 'number' && value > 0xffff) return `0x${value.toString(16)}`;
  return String(value);
}

export function compareOutcomes(engine: Outcome, kernel: Outcome): FieldDifference[] {
  const differences: FieldDifference[] = [];
  for (const field of COMPARED_FIELDS) {
    const e = formatValue(engine[field]);
    const k = formatValue(kernel[field]);
    if (e !== k) differences.push({ field, engine: e, kernel: k });
  }
  return differences;
}
