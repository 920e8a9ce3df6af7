/**
 * `compare` of the shards of a run (`run --shard k/n`, judge/shard.ts): the parts of
 * one run are put back together into one run before comparing, so that comparing the n
 * shards' reports gives what comparing the unsharded run gives. Parts belong together
 * when they ran on the same kernel, rdma-core, Node and siw variant and were split from
 * the same selection (`shardSelection`: `--device rxe0`'s shards and `--device siw0`'s are
 * two runs) into the same number of shards; their host may differ (one CI runner per shard). Two parts
 * claiming the same shard are refused: they are two runs, to be compared one at a time.
 * The merged run lists its scenarios and probes in the unsharded order: a shard's i-th
 * item (scenarios, then probes) was the selection's item i*n + k - 1 (judge/shard.ts).
 */
import { FIXES_SUFFIX, PATCHED_SIW_PROVIDER } from '../../judge/record.js';
import { type Shard, unshardedPosition } from '../../judge/shard.js';
import { ReportInputError, type ReportRun } from './read.js';

/** `k/n` as results.json records it. */
const SHARD = /^(\d+)\/(\d+)$/;

/**
 * The build a run's soft devices ran on, from their device facts (a part may lack siw0):
 * the patched siw, the fixed build of issue 33 (`rxe+fixes`, `siw+fixes`), or stock.
 */
function siwVariantOf(run: ReportRun): string {
  if (run.devices.some((d) => d.provider === PATCHED_SIW_PROVIDER)) return 'rfc7306';
  return run.devices.some((d) => String(d.provider).endsWith(FIXES_SUFFIX)) ? 'fixes' : 'stock';
}

/**
 * The merged run's label: the path its parts' labels share, then what their last
 * elements share, less a trailing shard number or the word `shard`: `out/6.1` of
 * `out/6.1/shard-1` and `out/6.1/shard-2`; `reports/report-6.1-rxe0` of
 * `reports/report-6.1-rxe0-1` and `-2` (the matrix workflow's artefacts). One part keeps
 * its own label.
 */
function mergedLabel(labels: readonly string[]): string {
  const first = labels[0] ?? '.';
  if (labels.length === 1) return first;
  const split = labels.map((l) => l.replace(/\/+$/, '').split('/'));
  const head = split[0] ?? [];
  let n = 0;
  while (n < head.length - 1 && split.every((p) => p.length > n + 1 && p[n] === head[n])) n++;
  const lasts = split.map((p) => p.slice(n).join('/'));
  let common = lasts[0] ?? '';
  for (const l of lasts) while (!l.startsWith(common)) common = common.slice(0, -1);
  const rest = common.replace(/[-_./]*(shard)?[-_./]*$/i, '');
  const label = [...head.slice(0, n), ...(rest === '' ? [] : [rest])].join('/');
  return label === '' ? first : label;
}

/** Items of the parts, each at its place in the unsharded selection. */
function inUnshardedOrder<T>(
  parts: readonly { shard: Shard; items: readonly T[]; offset: number }[],
): T[] {
  return parts
    .flatMap(({ shard, items, offset }) =>
      items.map((item, i) => ({ item, at: unshardedPosition(shard, offset + i) })),
    )
    .sort((a, b) => a.at - b.at)
    .map((x) => x.item);
}

/** One run of its parts: scenarios and probes in the unsharded order, devices once each. */
function mergeParts(parts: readonly { shard: Shard; run: ReportRun }[]): ReportRun {
  const first = parts[0]?.run;
  if (first === undefined) throw new ReportInputError('compare', 'no shard to merge');
  const devices = new Map<string, Readonly<Record<string, unknown>>>();
  for (const { run } of parts)
    for (const d of run.devices) {
      const name = String(d.name ?? '?');
      if (!devices.has(name)) devices.set(name, d);
    }
  return {
    label: mergedLabel(parts.map((p) => p.run.label)),
    path: first.path,
    parts: parts.map((p) => p.run.path),
    host: [...new Set(parts.map((p) => p.run.host))].join(', '),
    kernel: first.kernel,
    rdmaCore: first.rdmaCore,
    node: first.node,
    devices: [...devices.values()],
    // A shard lists its scenarios, then its probes: its probes follow its scenarios.
    scenarios: inUnshardedOrder(
      parts.map(({ shard, run }) => ({ shard, items: run.scenarios, offset: 0 })),
    ),
    probes: inUnshardedOrder(
      parts.map(({ shard, run }) => ({ shard, items: run.probes, offset: run.scenarios.length })),
    ),
  };
}

/**
 * `runs` with the shards of each sharded run merged into one, at the place of its first
 * part; unsharded runs as they are.
 */
export function mergeShards(runs: readonly ReportRun[]): ReportRun[] {
  const groups = new Map<string, { shard: Shard; run: ReportRun }[]>();
  const keyOf: (string | undefined)[] = runs.map((run) => {
    if (run.shard === undefined) return undefined;
    const m = SHARD.exec(run.shard);
    if (m === null) throw new ReportInputError(run.label, `shard '${run.shard}' is not k/n`);
    const key = [
      run.kernel,
      run.rdmaCore,
      run.node,
      siwVariantOf(run),
      run.shardSelection ?? '',
      m[2],
    ].join('\u0000');
    const group = groups.get(key) ?? [];
    const shard = { index: Number(m[1]), count: Number(m[2]) };
    const twin = group.find((g) => g.shard.index === shard.index);
    if (twin !== undefined)
      throw new ReportInputError(
        run.label,
        `shard ${run.shard} of kernel ${run.kernel} is also in ${twin.run.label}: compare the shards of one run at a time`,
      );
    group.push({ shard, run });
    groups.set(key, group);
    return key;
  });
  const merged: ReportRun[] = [];
  const done = new Set<string>();
  runs.forEach((run, i) => {
    const key = keyOf[i];
    if (key === undefined) merged.push(run);
    else if (!done.has(key)) {
      done.add(key);
      const parts = [...(groups.get(key) ?? [])].sort((a, b) => a.shard.index - b.shard.index);
      merged.push(mergeParts(parts));
    }
  });
  return merged;
}
