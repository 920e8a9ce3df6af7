/** How observed values are written in fields and reports. */

/** Formats a value: 64-bit values as 16-digit hex, numbers above 0xffff as hex, absent as —. */
export function formatValue(value: unknown): string {
  if (value === undefined) return '—';
  if (typeof value === 'bigint') return `0x${value.toString(16).padStart(16, '0')}`;
  if (typeof value === 'number' && value > 0xffff) return `0x${value.toString(16)}`;
  return String(value);
}
