/** Test helpers: hex strings (spaces ignored) to bytes and back. */
export function hex(s: string): Uint8Array {
  const clean = s.replace(/\s+/g, '');
  if (clean.length % 2 !== 0) throw new Error(`odd hex length: ${s}`);
  return Uint8Array.from({ length: clean.length / 2 }, (_, i) =>
    Number.parseInt(clean.slice(i * 2, i * 2 + 2), 16),
  );
}

export function toHex(b: Uint8Array): string {
  return Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
}
