/**
 * Two results.json of the same suite selection compared field by field, timings aside
 * (a scenario's `seconds`). The run environment is compared apart from what legitimately
 * differs between a container and the guest: rdma-core's and Node's versions (the image
 * is Debian trixie; the guest runs the host's bookworm root) and the host name (a container
 * may have its own UTS namespace); the kernel and the devices' attributes must be the same.
 */

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** Paths (`scenarios[3].device_fields.wc.status`) where `a` and `b` differ. */
export function differingPaths(a: Json, b: Json, path = ''): string[] {
  if (Array.isArray(a) && Array.isArray(b)) {
    const out: string[] = a.length === b.length ? [] : [`${path}.length`];
    for (let i = 0; i < Math.min(a.length, b.length); i++)
      out.push(...differingPaths(a[i] as Json, b[i] as Json, `${path}[${i}]`));
    return out;
  }
  if (a !== null && b !== null && typeof a === 'object' && typeof b === 'object') {
    if (Array.isArray(a) || Array.isArray(b)) return [path];
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    return [...keys].flatMap((k) =>
      differingPaths(a[k] ?? null, b[k] ?? null, path === '' ? k : `${path}.${k}`),
    );
  }
  return a === b ? [] : [path];
}

/** The fields that are timings or a version of the user-space stack, not results. */
export function isTimingOrStackVersion(path: string): boolean {
  return (
    /^scenarios\[\d+\]\.seconds$/.test(path) ||
    path === 'environment.rdmaCore' ||
    path === 'environment.host' ||
    path === 'environment.node'
  );
}

export function resultDifferences(a: Json, b: Json): string[] {
  return differingPaths(a, b).filter((p) => !isTimingOrStackVersion(p));
}
