/**
 * The `kernel-memory` oracle (issue 32): an answer or a region that carries bytes the
 * test never put anywhere. The 2026 ATOMIC WRITE leak (CVE-2026-46114) showed as 8 bytes
 * of kernel memory in the MR; such bytes appear in none of the engine's answers or
 * memory, which hold only what the region held and what the tester sent. Only a name for
 * a difference the engine comparison already fails: it never fails an answer by itself.
 */
import type { JsonValue } from '../assertion.js';

const HEX_RUN = /[0-9a-f]{16,}/g;

function hexRuns(v: JsonValue, out: string[]): string[] {
  if (typeof v === 'string') out.push(...(v.match(HEX_RUN) ?? []));
  else if (Array.isArray(v)) for (const x of v) hexRuns(x, out);
  else if (v !== null && typeof v === 'object') for (const x of Object.values(v)) hexRuns(x, out);
  return out;
}

/**
 * The 8-byte words (hex) of the device's answers and memory that are not zero and occur
 * nowhere in the engine's: bytes that came from somewhere else than the test.
 */
export function foreignWords(expected: JsonValue, observed: JsonValue): string[] {
  const known = hexRuns(expected, []);
  const foreign = new Set<string>();
  for (const run of hexRuns(observed, []))
    for (let at = 0; at + 16 <= run.length; at += 16) {
      const word = run.slice(at, at + 16);
      if (word !== '0'.repeat(16) && !known.some((k) => k.includes(word))) foreign.add(word);
    }
  return [...foreign];
}
