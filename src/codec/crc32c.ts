/**
 * CRC32c (Castagnoli, reflected polynomial 0x82F63B78), as used by MPA (RFC 5044 §4.4)
 * and iSCSI (RFC 3720 §12.1, check vectors in Appendix B.4). A portable slicing-by-16
 * implementation, plus the native addon's SSE4.2 path when the addon (a source build or the
 * shipped prebuild, see src/native/load.ts) loads and exports `crc32c` (its absence is
 * normal: the TS path is then used).
 */

import { createRequire } from 'node:module';
import { requireBytes, requireInteger } from '../arguments.js';
import { packageRoot, resolveAddonFile } from '../native/load.js';

/** Reflected Castagnoli polynomial. */
const POLY = 0x82f63b78;

/** Slicing-by-16: table k maps a byte seen k positions before the end of a 16-byte block. */
const SLICES = 16;
const TABLES: readonly Int32Array[] = buildTables();
const [T0, T1, T2, T3, T4, T5, T6, T7, T8, T9, T10, T11, T12, T13, T14, T15] = TABLES as [
  Int32Array,
  Int32Array,
  Int32Array,
  Int32Array,
  Int32Array,
  Int32Array,
  Int32Array,
  Int32Array,
  Int32Array,
  Int32Array,
  Int32Array,
  Int32Array,
  Int32Array,
  Int32Array,
  Int32Array,
  Int32Array,
];

function buildTables(): Int32Array[] {
  const t = Array.from({ length: SLICES }, () => new Int32Array(256));
  const t0 = t[0]!;
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ POLY : c >>> 1;
    t0[n] = c;
  }
  for (let n = 0; n < 256; n++) {
    let c = t0[n]!;
    for (let k = 1; k < SLICES; k++) {
      c = t0[c & 0xff]! ^ (c >>> 8);
      t[k]![n] = c;
    }
  }
  return t;
}

/** The 16-byte blocks are read as little-endian 32-bit words; big-endian hosts go bytewise. */
const LITTLE_ENDIAN = new Uint8Array(Uint32Array.of(1).buffer)[0] === 1;
/** Below this, creating the word view costs more than it saves. */
const WORD_PATH_MIN = 64;

/**
 * Portable CRC32c of `data`. `seed` is a previous result, so that
 * `crc32cPortable(b, crc32cPortable(a)) === crc32cPortable(a ++ b)`.
 */
export function crc32cPortable(data: Uint8Array, seed = 0): number {
  let crc = ~seed;
  let i = 0;
  const n = data.length;
  if (LITTLE_ENDIAN && n >= WORD_PATH_MIN) {
    // Byte steps up to a 4-aligned address, then 16 bytes per step through 16 tables.
    while (((data.byteOffset + i) & 3) !== 0) {
      crc = T0[(crc ^ data[i]!) & 0xff]! ^ (crc >>> 8);
      i++;
    }
    const blocks = (n - i) >>> 4;
    const w = new Uint32Array(data.buffer, data.byteOffset + i, blocks * 4);
    for (let j = 0; j < w.length; j += 4) {
      const a = crc ^ w[j]!;
      const b = w[j + 1]!;
      const c = w[j + 2]!;
      const d = w[j + 3]!;
      crc =
        T15[a & 0xff]! ^
        T14[(a >>> 8) & 0xff]! ^
        T13[(a >>> 16) & 0xff]! ^
        T12[a >>> 24]! ^
        T11[b & 0xff]! ^
        T10[(b >>> 8) & 0xff]! ^
        T9[(b >>> 16) & 0xff]! ^
        T8[b >>> 24]! ^
        T7[c & 0xff]! ^
        T6[(c >>> 8) & 0xff]! ^
        T5[(c >>> 16) & 0xff]! ^
        T4[c >>> 24]! ^
        T3[d & 0xff]! ^
        T2[(d >>> 8) & 0xff]! ^
        T1[(d >>> 16) & 0xff]! ^
        T0[d >>> 24]!;
    }
    i += blocks * 16;
  }
  while (i < n) {
    crc = T0[(crc ^ data[i]!) & 0xff]! ^ (crc >>> 8);
    i++;
  }
  return ~crc >>> 0;
}

/** The signature the native addon exports. */
type NativeCrc32c = (data: Uint8Array, seed?: number) => number;

let nativeCrc: NativeCrc32c | undefined;
let nativeProbed = false;

/**
 * The addon's `crc32c`, or undefined when the addon is not built (normal) or lacks the
 * export. Loaded once, found as the verbs layer finds it.
 */
export function nativeCrc32c(): NativeCrc32c | undefined {
  if (nativeProbed) return nativeCrc;
  nativeProbed = true;
  try {
    const require = createRequire(import.meta.url);
    const addon: unknown = require(resolveAddonFile(packageRoot()));
    if (typeof addon === 'object' && addon !== null && 'crc32c' in addon) {
      const fn = (addon as { crc32c: unknown }).crc32c;
      if (typeof fn === 'function') nativeCrc = fn as NativeCrc32c;
    }
  } catch {
    // No addon (not built, or built without crc32c): the portable path is used.
    nativeCrc = undefined;
  }
  return nativeCrc;
}

/** Below this size the N-API call costs more than the portable loop saves. */
const NATIVE_MIN_LENGTH = 256;

/** Which implementation `crc32c` uses for large inputs. */
export function crc32cBackend(): 'native' | 'portable' {
  return nativeCrc32c() === undefined ? 'portable' : 'native';
}

/**
 * CRC32c of `data` (standard: initial value all ones, final complement). `seed` is a
 * previous result to continue from. Uses the native addon for large inputs when present.
 */
export function crc32c(data: Uint8Array, seed = 0): number {
  requireBytes('codec', 'data', data);
  requireInteger('codec', 'seed', seed, 0, 0xffff_ffff);
  if (data.length >= NATIVE_MIN_LENGTH) {
    const native = nativeCrc32c();
    if (native !== undefined) return native(data, seed) >>> 0;
  }
  return crc32cPortable(data, seed);
}
