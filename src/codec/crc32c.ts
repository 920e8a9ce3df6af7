/**
 * CRC32c (Castagnoli, reflected polynomial 0x82F63B78), as used by MPA (RFC 5044 §4.4)
 * and iSCSI (RFC 3720 §12.1, check vectors in Appendix B.4). A portable slicing-by-8
 * implementation, plus the native addon's SSE4.2 path when `build/Release/rdma_interop.node`
 * loads and exports `crc32c` (its absence is normal: the TS path is then used).
 */
import { createRequire } from 'node:module';

/** Reflected Castagnoli polynomial. */
const POLY = 0x82f63b78;

/** 8 tables of 256 entries: table k maps a byte seen k positions early. */
const TABLES: Uint32Array = buildTables();

function buildTables(): Uint32Array {
  const t = new Uint32Array(8 * 256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ POLY : c >>> 1;
    t[n] = c >>> 0;
  }
  for (let n = 0; n < 256; n++) {
    let c = t[n]!;
    for (let k = 1; k < 8; k++) {
      c = t[c & 0xff]! ^ (c >>> 8);
      t[k * 256 + n] = c >>> 0;
    }
  }
  return t;
}

/**
 * Portable CRC32c of `data`. `seed` is a previous result, so that
 * `crc32cPortable(b, crc32cPortable(a)) === crc32cPortable(a ++ b)`.
 */
export function crc32cPortable(data: Uint8Array, seed = 0): number {
  const t = TABLES;
  let crc = ~seed >>> 0;
  let i = 0;
  const n = data.length;
  // Slicing-by-8: fold 8 input bytes per step through 8 tables.
  const end8 = n - (n % 8);
  while (i < end8) {
    const lo =
      (crc ^ (data[i]! | (data[i + 1]! << 8) | (data[i + 2]! << 16) | (data[i + 3]! << 24))) >>> 0;
    crc =
      t[7 * 256 + (lo & 0xff)]! ^
      t[6 * 256 + ((lo >>> 8) & 0xff)]! ^
      t[5 * 256 + ((lo >>> 16) & 0xff)]! ^
      t[4 * 256 + (lo >>> 24)]! ^
      t[3 * 256 + data[i + 4]!]! ^
      t[2 * 256 + data[i + 5]!]! ^
      t[256 + data[i + 6]!]! ^
      t[data[i + 7]!]!;
    i += 8;
  }
  while (i < n) {
    crc = t[(crc ^ data[i]!) & 0xff]! ^ (crc >>> 8);
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
 * export. Loaded once, relative to the package root (this file is two levels below it in
 * both `src/` and `dist/`).
 */
export function nativeCrc32c(): NativeCrc32c | undefined {
  if (nativeProbed) return nativeCrc;
  nativeProbed = true;
  try {
    const require = createRequire(import.meta.url);
    const addonPath = new URL('../../build/Release/rdma_interop.node', import.meta.url);
    const addon: unknown = require(addonPath.pathname);
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
  if (data.length >= NATIVE_MIN_LENGTH) {
    const native = nativeCrc32c();
    if (native !== undefined) return native(data, seed) >>> 0;
  }
  return crc32cPortable(data, seed);
}
