/**
 * Version ranges for recorded provider behaviour (judge/records/): a record holds for a
 * range of kernel lines (`uname -r`) and, where the userspace provider decides, a range of
 * rdma-core versions. Versions compare by their leading dotted numbers only, so Debian's
 * ABI names (`6.1.0-56-amd64`, `6.12.95+deb12-amd64`, `7.3.4+deb13-amd64`) and package
 * versions (`44.0-2`, `56.1-1`) compare as the kernel/rdma-core releases they are.
 */

/** `from` (inclusive) up to `before` (exclusive); a missing `before` means "and later". */
export interface VersionRange {
  readonly from: string;
  readonly before?: string;
}

/** The leading dotted numbers of a version string: `6.12.95+deb12-amd64` -> [6, 12, 95]. */
export function versionNumbers(version: string): number[] {
  const m = /^\d+(?:\.\d+)*/.exec(version.trim());
  return m === null ? [] : m[0].split('.').map(Number);
}

/**
 * Compares `version` with `bound` on the bound's own precision: against `6.1`, every
 * `6.1.x` is equal; `6.12` is greater (numbers, not text).
 */
export function compareToBound(version: string, bound: string): number {
  const v = versionNumbers(version);
  const b = versionNumbers(bound);
  for (let i = 0; i < b.length; i++) {
    const d = (v[i] ?? 0) - (b[i] ?? 0);
    if (d !== 0) return Math.sign(d);
  }
  return 0;
}

/** True when `version` lies in `range`; an unparsable version (`unknown`) lies in none. */
export function inRange(version: string, range: VersionRange): boolean {
  if (versionNumbers(version).length === 0) return false;
  return (
    compareToBound(version, range.from) >= 0 &&
    (range.before === undefined || compareToBound(version, range.before) < 0)
  );
}

/** The range as reports show it: `6.1 <= v < 6.2`, `>= 6.12`. */
export function rangeText(range: VersionRange): string {
  return range.before === undefined ? `>= ${range.from}` : `${range.from} <= v < ${range.before}`;
}
