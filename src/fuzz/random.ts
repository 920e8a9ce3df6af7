/**
 * The fuzzer's random source: xoshiro128** seeded through splitmix32, so that one 32-bit
 * seed reproduces a whole run. Written here rather than taken from fast-check because the
 * runner ships in dist (fast-check is a devDependency) and the hot loop wants one call per
 * number.
 */
export class FuzzRandom {
  private s0: number;
  private s1: number;
  private s2: number;
  private s3: number;

  constructor(seed: number) {
    let x = seed >>> 0;
    const next = (): number => {
      // splitmix32
      x = (x + 0x9e3779b9) >>> 0;
      let z = x;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
      return (z ^ (z >>> 16)) >>> 0;
    };
    this.s0 = next();
    this.s1 = next();
    this.s2 = next();
    this.s3 = next();
  }

  /** A uniform unsigned 32-bit integer. */
  u32(): number {
    const result = Math.imul(rotl(Math.imul(this.s1, 5), 7), 9) >>> 0;
    const t = this.s1 << 9;
    this.s2 ^= this.s0;
    this.s3 ^= this.s1;
    this.s1 ^= this.s2;
    this.s0 ^= this.s3;
    this.s2 ^= t;
    this.s3 = rotl(this.s3, 11);
    return result;
  }

  /** An integer in 0..n-1 (n >= 1). */
  below(n: number): number {
    return n <= 1 ? 0 : Math.floor((this.u32() / 0x1_0000_0000) * n);
  }

  /** An integer in min..max inclusive. */
  int(min: number, max: number): number {
    return min + this.below(max - min + 1);
  }

  bool(): boolean {
    return (this.u32() & 1) === 1;
  }

  /** True with probability 1/n. */
  oneIn(n: number): boolean {
    return this.below(n) === 0;
  }

  /** A uniform unsigned 64-bit bigint. */
  u64(): bigint {
    return (BigInt(this.u32()) << 32n) | BigInt(this.u32());
  }

  pick<T>(items: readonly T[]): T {
    const item = items[this.below(items.length)];
    if (item === undefined) throw new RangeError('pick from an empty list');
    return item;
  }

  bytes(length: number): Uint8Array {
    const out = new Uint8Array(length);
    for (let i = 0; i < length; i++) out[i] = this.u32() & 0xff;
    return out;
  }
}

function rotl(x: number, k: number): number {
  return ((x << k) | (x >>> (32 - k))) >>> 0;
}

/** A seed that changes every run (printed so that the run can be repeated). */
export function rotatingSeed(): number {
  return (Date.now() ^ Math.imul(process.pid, 0x9e3779b1) ^ (Math.random() * 0x1_0000_0000)) >>> 0;
}
