/** Writing Lua source text: literals only (the generator's one concern with Lua syntax). */

/** A Lua string literal (double-quoted, escaped; UTF-8 passes through as bytes). */
export function luaString(s: string): string {
  return `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`;
}

/** A Lua number literal: hexadecimal for masks and codes, so the source reads as the spec. */
export function luaHex(n: number): string {
  return `0x${n.toString(16)}`;
}

/** A Lua value from plain data: strings, numbers, booleans, arrays and records. */
export function luaValue(v: unknown, indent = ''): string {
  if (typeof v === 'string') return luaString(v);
  if (typeof v === 'number') return Number.isInteger(v) && v > 9 ? luaHex(v) : String(v);
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (v === undefined || v === null) return 'nil';
  const inner = `${indent}  `;
  if (Array.isArray(v)) {
    if (v.length === 0) return '{}';
    return `{\n${v.map((x) => `${inner}${luaValue(x, inner)},`).join('\n')}\n${indent}}`;
  }
  const entries = Object.entries(v as Record<string, unknown>).filter(([, x]) => x !== undefined);
  if (entries.length === 0) return '{}';
  const key = (k: string): string =>
    /^-?\d+$/.test(k) ? `[${k}]` : /^[A-Za-z_][A-Za-z0-9_]*$/.test(k) ? k : `[${luaString(k)}]`;
  return `{\n${entries.map(([k, x]) => `${inner}${key(k)} = ${luaValue(x, inner)},`).join('\n')}\n${indent}}`;
}
