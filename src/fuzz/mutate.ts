/**
 * Byte-level mutations of valid inputs (the AFL family: bit flips, interesting values,
 * arithmetic on length-like fields, inserts, deletes, truncation, splices). Valid seeds
 * keep the mutated inputs deep in the decoders; a few edits off a valid message reach the
 * checks random bytes never get past.
 */
import type { FuzzRandom } from './random.js';

const INTERESTING_8 = [
  0x00, 0x01, 0x02, 0x03, 0x04, 0x07, 0x08, 0x0f, 0x10, 0x3f, 0x40, 0x7f, 0x80, 0xc0, 0xfe, 0xff,
];
const INTERESTING_16 = [0x0000, 0x0001, 0x0004, 0x0010, 0x0200, 0x7fff, 0x8000, 0xfffc, 0xffff];
const INTERESTING_32 = [0, 1, 0x10, 0x7fffffff, 0x80000000, 0xfffffff0, 0xffffffff];

function splice(bytes: Uint8Array, at: number, remove: number, insert: Uint8Array): Uint8Array {
  const out = new Uint8Array(bytes.length - remove + insert.length);
  out.set(bytes.subarray(0, at), 0);
  out.set(insert, at);
  out.set(bytes.subarray(at + remove), at + insert.length);
  return out;
}

/** One mutation of `input` (a new array; `input` is not changed). */
export function mutateOnce(
  rng: FuzzRandom,
  input: Uint8Array,
  others: readonly Uint8Array[],
): Uint8Array {
  const b = input.slice();
  const n = b.length;
  const at = rng.below(Math.max(n, 1));
  switch (rng.below(12)) {
    case 0: // flip one bit
      if (n > 0) b[at] = b[at]! ^ (1 << rng.below(8));
      return b;
    case 1: // a random byte
      if (n > 0) b[at] = rng.u32() & 0xff;
      return b;
    case 2: // an interesting byte
      if (n > 0) b[at] = rng.pick(INTERESTING_8);
      return b;
    case 3: // an interesting 16-bit big-endian value (lengths, ports, FPDUPTR)
      if (n > 1) {
        const i = rng.below(n - 1);
        const v = rng.pick(INTERESTING_16);
        b[i] = v >>> 8;
        b[i + 1] = v & 0xff;
      }
      return b;
    case 4: // an interesting 32-bit value in either byte order (pcap lengths are LE)
      if (n > 3) {
        const i = rng.below(n - 3);
        const v = rng.pick(INTERESTING_32);
        new DataView(b.buffer).setUint32(i, v, rng.bool());
      }
      return b;
    case 5: // small arithmetic on a 16-bit big-endian field
      if (n > 1) {
        const i = rng.below(n - 1);
        const v = (((b[i]! << 8) | b[i + 1]!) + rng.int(-8, 8)) & 0xffff;
        b[i] = v >>> 8;
        b[i + 1] = v & 0xff;
      }
      return b;
    case 6: // truncate
      return b.subarray(0, rng.below(n + 1)).slice();
    case 7: // extend with random bytes
      return splice(b, n, 0, rng.bytes(rng.int(1, 16)));
    case 8: // insert random bytes
      return splice(b, rng.below(n + 1), 0, rng.bytes(rng.int(1, 8)));
    case 9: // delete a range
      return n === 0 ? b : splice(b, at, Math.min(n - at, rng.int(1, 8)), new Uint8Array(0));
    case 10: {
      // duplicate a range in place
      if (n === 0) return b;
      const len = Math.min(n - at, rng.int(1, 32));
      return splice(b, rng.below(n + 1), 0, b.slice(at, at + len));
    }
    default: {
      // splice: this input's head, another's tail
      const other = others.length > 0 ? rng.pick(others) : b;
      return splice(b, at, n - at, other.subarray(rng.below(other.length + 1)));
    }
  }
}

/** One to four mutations of `input`. */
export function mutate(
  rng: FuzzRandom,
  input: Uint8Array,
  others: readonly Uint8Array[],
): Uint8Array {
  let b = input;
  const rounds = 1 + rng.below(rng.oneIn(4) ? 8 : 2);
  for (let k = 0; k < rounds; k++) b = mutateOnce(rng, b, others);
  return b === input ? input.slice() : b;
}
