/**
 * The `resource-count` oracle (issue 32): a leak that logs nothing. The guest counts, before
 * a probe pass's assertions and after its fuzz, the RDMA objects each device holds (the
 * kernel's resource tracker, `rdma resource show`: pd, cq, qp, cm_id, mr, ctx, srq; rxe's
 * object pools (rxe_pool.c) keep their counts private, and restrack holds one entry per
 * pool element) and the slab caches a receive-path leak would grow (rxe and siw allocate
 * from the generic caches: neither creates a cache of its own in 6.1, 6.12 or 7.3, so
 * `skbuff_head_cache`, where an skb rxe forgets to free stays, and any cache named after
 * rxe, siw or the RDMA core should a kernel add one). The tester's own context, PD and CQ
 * are open at both counts; each assertion's QPs and regions are gone before the next
 * begins, so the counts must come back. A count above its earlier value (a slab beyond
 * the tolerance for what the rest of the kernel does meanwhile) is a finding.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** `rdma/<device>/<object>` or `slab/<cache>` -> count. */
export type ResourceCounts = Readonly<Record<string, number>>;

/**
 * The slab caches counted: the socket buffers, and any named after the RDMA stack (a whole
 * `_`-separated word: `ib_mad_cache`, never `ip_fib_trie`, which the 6.12 run first counted).
 */
export const COUNTED_SLAB = /^(skbuff_head_cache|skbuff_small_head|(.*_)?(rxe|siw|rdma|ib)(_.*)?)$/;

/**
 * How far a slab may grow between the counts without a finding: more than `objects`, and
 * more than `ratio` of its earlier count (for a cache that holds many). The rest of the
 * kernel (TCP, the 9p share, the console) allocates socket buffers meanwhile, and SLUB
 * counts whole slabs: the baseline passes measured on 2026-12-05 (probe --benchmark's
 * unmodified modules, 6.1/6.12/7.3, rxe and stock siw: test/fixtures/probe/
 * benchmark-measured.json) moved by at most one slab, skbuff_small_head 56 -> 84 (+28) on
 * 7.3; the CI form's passes (docs/probe.md) by no more. 64 objects is more than two such
 * slabs, and less than one socket buffer left behind per input of a CI pass (its 40
 * assertions and 40 packets to rxe alone send more than 80). The RDMA objects have no
 * tolerance.
 */
export const SLAB_TOLERANCE = { objects: 64, ratio: 0.5 } as const;

/** A pass's two counts (a line of the results file, kind `resources`). */
export interface ResourceCheck {
  /** The probe pass (rxe, or a siw build). */
  readonly pass: string;
  readonly before: ResourceCounts;
  readonly after: ResourceCounts;
  /** resourceGrowth(before, after): empty when nothing leaked. */
  readonly grew: readonly string[];
}

/** Counts now and returns the function that counts again and judges (a pass's two ends). */
export function startResourceCheck(pass: string): () => ResourceCheck {
  const before = readResourceCounts();
  return () => {
    const after = readResourceCounts();
    return { pass, before, after, grew: resourceGrowth(before, after) };
  };
}

/** `rdma resource show` (iproute2 rdma/res.c: `<index>: <dev>: pd N cq N ...`). */
export function parseRdmaResources(text: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const line of text.split('\n')) {
    const m = /^\s*\d+:\s+(\S+?):\s+(.*)$/.exec(line);
    if (m === null) continue;
    const [, device, rest] = m as unknown as [string, string, string];
    for (const pair of rest.matchAll(/([a-z_]+)\s+(\d+)/g))
      out[`rdma/${device}/${pair[1]}`] = Number(pair[2]);
  }
  return out;
}

/** /proc/slabinfo 2.1 (mm/slab_common.c: `<name> <active_objs> <num_objs> ...`), counted caches. */
export function parseSlabinfo(
  text: string,
  counted: RegExp = COUNTED_SLAB,
): Record<string, number> {
  const out: Record<string, number> = {};
  for (const line of text.split('\n')) {
    if (line.startsWith('#') || line.startsWith('slabinfo')) continue;
    const m = /^(\S+)\s+(\d+)\s+\d+/.exec(line);
    if (m !== null && counted.test(m[1] as string)) out[`slab/${m[1]}`] = Number(m[2]);
  }
  return out;
}

/**
 * Objects a pass's own process keeps for its life: a device context (ctx) the tester or the
 * siw peer opens once and holds until it exits. Measured: stock siw0 on 6.12, baseline
 * `rdma/siw0/ctx 0 -> 1` and no other growth. Leaks show in the objects each assertion makes
 * and destroys (qp, cq, mr, pd, srq, cm_id).
 */
export const PROCESS_LIFETIME_OBJECTS: ReadonlySet<string> = new Set(['ctx']);

/** What grew between two counts: `<key> <before> -> <after>`, in key order. */
export function resourceGrowth(before: ResourceCounts, after: ResourceCounts): string[] {
  const grew: string[] = [];
  for (const key of Object.keys(after).sort()) {
    if (key.startsWith('rdma/') && PROCESS_LIFETIME_OBJECTS.has(key.split('/')[2] ?? '')) continue;
    const now = after[key] as number;
    const then = before[key];
    // A device or cache that appeared between the counts was not counted before: no finding.
    if (then === undefined || now <= then) continue;
    if (
      key.startsWith('slab/') &&
      now - then <= Math.max(SLAB_TOLERANCE.objects, then * SLAB_TOLERANCE.ratio)
    )
      continue;
    grew.push(`${key} ${then} -> ${now}`);
  }
  return grew;
}

/** The guest's counts now (root: /proc/slabinfo is 0400). Unreadable sources count nothing. */
export function readResourceCounts(): ResourceCounts {
  let rdma = '';
  let slab = '';
  try {
    rdma = execFileSync('rdma', ['resource', 'show'], { encoding: 'utf8', timeout: 10_000 });
  } catch {}
  try {
    slab = readFileSync('/proc/slabinfo', 'utf8');
  } catch {}
  return { ...parseRdmaResources(rdma), ...parseSlabinfo(slab) };
}

/** A pass's counts as a report carries them: the kernel it ran on, judged again here. */
export interface ResourceJudgement extends ResourceCheck {
  /** The kernel release the pass ran on. */
  readonly kernel: string;
}

/**
 * The passes of one kernel judged from their two counts (the guest's own list is what it
 * judged then, with the tolerance of its build): `grew` is resourceGrowth's.
 */
export function judgeResources(
  kernel: string,
  checks: readonly ResourceCheck[],
): ResourceJudgement[] {
  return checks.map((c) => ({ ...c, kernel, grew: resourceGrowth(c.before, c.after) }));
}

/** Each pass that grew, as a finding of the `resource-count` oracle. */
export function resourceLeaks(
  judged: readonly ResourceJudgement[],
  lineOf: (release: string) => string = (r) => r,
): string[] {
  return judged
    .filter((j) => j.grew.length > 0)
    .map((j) => `${lineOf(j.kernel)} ${j.pass}: ${j.grew.join(', ')} (oracle: resource-count)`);
}
