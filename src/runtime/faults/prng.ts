/**
 * The relay's seeded generator: xoshiro128** (Blackman and Vigna, 2018), seeded through
 * splitmix32 so that neighbouring seeds give unrelated streams. Deterministic per seed
 * and stream: the same seed and the same sequence of frames give the same faults.
 */
export class Prng {
  readonly #s = new Uint32Array(4);

  /** `stream` separates generators of one seed (one per link and direction). */
  constructor(seed: number, stream = 0) {
    let x = (seed ^ Math.imul(stream + 1, 0x9e3779b9)) >>> 0;
    for (let i = 0; i < 4; i++) {
      // splitmix32
      x = (x + 0x9e3779b9) >>> 0;
      let z = x;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
      this.#s[i] = (z ^ (z >>> 16)) >>> 0;
    }
  }

  /** A generator with this exact state (reference vectors in tests). */
  static fromState(state: readonly [number, number, number, number]): Prng {
    const prng = new Prng(0);
    prng.#s.set(state);
    return prng;
  }

  /** The next 32-bit unsigned value. */
  nextU32(): number {
    const s = this.#s;
    const result = Math.imul(rotl(Math.imul(s[1] ?? 0, 5), 7), 9) >>> 0;
    const t = (s[1] ?? 0) << 9;
    s[2] = (s[2] ?? 0) ^ (s[0] ?? 0);
    s[3] = (s[3] ?? 0) ^ (s[1] ?? 0);
    s[1] = (s[1] ?? 0) ^ (s[2] ?? 0);
    s[0] = (s[0] ?? 0) ^ (s[3] ?? 0);
    s[2] = (s[2] ?? 0) ^ t;
    s[3] = rotl(s[3] ?? 0, 11);
    return result;
  }

  /** A float in [0, 1). */
  next(): number {
    return this.nextU32() / 0x1_0000_0000;
  }

  /** True with probability `p` (consumes one value whatever `p` is, so streams stay aligned). */
  chance(p: number): boolean {
    return this.next() < p;
  }

  /** An integer in [0, n). */
  below(n: number): number {
    return Math.floor(this.next() * n);
  }
}

function rotl(x: number, k: number): number {
  return ((x << k) | (x >>> (32 - k))) >>> 0;
}
