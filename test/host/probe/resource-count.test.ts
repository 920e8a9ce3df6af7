/**
 * The resource-count oracle's logic (src/probe/oracles/resource-count.ts): the two sources
 * it parses, what counts as growth (the slab tolerance against the measured baselines),
 * and plain probe's judgement of it (a finding in report.md and junit.xml). The counting
 * itself runs in the guest.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  judgeResources,
  parseRdmaResources,
  parseSlabinfo,
  type ResourceCheck,
  resourceGrowth,
  resourceLeaks,
  SLAB_TOLERANCE,
} from '../../../src/probe/oracles/resource-count.js';
import {
  PROBE_SCHEMA,
  type ProbeDocument,
  renderProbeJunit,
  renderProbeMarkdown,
} from '../../../src/probe/probe-report.js';

// The shape iproute2's `rdma resource show` prints (rdma/res.c, res_print_summary).
const RDMA = [
  '0: rxe0: pd 1 cq 2 qp 3 cm_id 0 mr 4 ctx 0 srq 0',
  '1: siw0: pd 0 cq 0 qp 0 cm_id 1 mr 0 ctx 0 srq 0',
  '2: rxe_t: pd 1 cq 1 qp 17 cm_id 0 mr 9 ctx 1 srq 0',
].join('\n');

const SLAB = [
  'slabinfo - version: 2.1',
  '# name            <active_objs> <num_objs> <objsize> <objperslab> <pagesperslab> : tunables',
  'skbuff_head_cache   1203   1344    256   16    1 : tunables    0    0    0 : slabdata     84     84      0',
  'kmalloc-256         2210   2336    256   16    1 : tunables    0    0    0 : slabdata    146    146      0',
  'ib_mad_cache           7     28    144   28    1 : tunables    0    0    0 : slabdata      1      1      0',
  'ip_fib_trie          170    170     48   85    1 : tunables    0    0    0 : slabdata      2      2      0',
  'rdma_rxe_pool          3     16    256   16    1 : tunables    0    0    0 : slabdata      1      1      0',
].join('\n');

describe('parsing the counts', () => {
  it('reads each device and object of `rdma resource show`', () => {
    const counts = parseRdmaResources(RDMA);
    expect(counts['rdma/rxe0/qp']).toBe(3);
    expect(counts['rdma/rxe_t/qp']).toBe(17);
    expect(counts['rdma/siw0/cm_id']).toBe(1);
    expect(Object.keys(counts)).toHaveLength(21);
    expect(parseRdmaResources('Failed to open NETLINK_RDMA socket')).toEqual({});
  });

  it('keeps the socket buffers and the RDMA-named caches of /proc/slabinfo, active objects', () => {
    expect(parseSlabinfo(SLAB)).toEqual({
      'slab/skbuff_head_cache': 1203,
      'slab/ib_mad_cache': 7,
      'slab/rdma_rxe_pool': 3,
    });
  });
});

describe('growth', () => {
  const before = { ...parseRdmaResources(RDMA), ...parseSlabinfo(SLAB) };

  it('an RDMA object more than before is a finding, in key order; fewer or equal is not', () => {
    const after = { ...before, 'rdma/rxe_t/qp': 18, 'rdma/rxe_t/mr': 8, 'rdma/rxe0/cq': 5 };
    expect(resourceGrowth(before, after)).toEqual([
      'rdma/rxe0/cq 2 -> 5',
      'rdma/rxe_t/qp 17 -> 18',
    ]);
    expect(resourceGrowth(before, before)).toEqual([]);
  });

  it("a process's device context is not growth: the pass holds it for its life", () => {
    expect(resourceGrowth(before, { ...before, 'rdma/siw0/ctx': 1 })).toEqual([]);
    expect(resourceGrowth(before, { ...before, 'rdma/siw0/pd': 1 })).toEqual([
      'rdma/siw0/pd 0 -> 1',
    ]);
  });

  it('a device or cache that appeared between the counts is not growth', () => {
    expect(resourceGrowth(before, { ...before, 'rdma/rxe9/qp': 4 })).toEqual([]);
  });

  it('a slab grows past the tolerance only: the rest of the kernel allocates meanwhile', () => {
    // A big cache: half its earlier count (601.5 of 1203) is the allowance.
    const within = 1203 + 601;
    expect(Math.max(SLAB_TOLERANCE.objects, 1203 * SLAB_TOLERANCE.ratio)).toBe(601.5);
    expect(resourceGrowth(before, { ...before, 'slab/skbuff_head_cache': within })).toEqual([]);
    expect(resourceGrowth(before, { ...before, 'slab/skbuff_head_cache': within + 1 })).toEqual([
      `slab/skbuff_head_cache 1203 -> ${within + 1}`,
    ]);
    // A small cache: 64 objects, more than two slabs of the largest move measured (one
    // slab of skbuff_small_head, 56 -> 84 on 7.3).
    expect(resourceGrowth(before, { ...before, 'slab/ib_mad_cache': 7 + 64 })).toEqual([]);
    expect(resourceGrowth(before, { ...before, 'slab/ib_mad_cache': 7 + 65 })).toEqual([
      'slab/ib_mad_cache 7 -> 72',
    ]);
  });

  it('passes no measured baseline: every move of the unmodified modules is within it', () => {
    const measured = JSON.parse(
      readFileSync('test/fixtures/probe/benchmark-measured.json', 'utf8'),
    ) as { runs: { baselineCounts: Record<string, ResourceCheck[]> }[] };
    const checks = measured.runs.flatMap((r) => Object.values(r.baselineCounts).flat());
    expect(checks).toHaveLength(6);
    expect(checks.flatMap((c) => resourceGrowth(c.before, c.after))).toEqual([]);
    // The largest slab move among them: one slab.
    const moves = checks.flatMap((c) =>
      Object.keys(c.after)
        .filter((k) => k.startsWith('slab/'))
        .map((k) => (c.after[k] as number) - (c.before[k] ?? (c.after[k] as number))),
    );
    expect(Math.max(...moves)).toBe(28);
  });
});

describe('judged in plain probe', () => {
  const quiet: ResourceCheck = {
    pass: 'rxe',
    before: { 'rdma/rxe_t/qp': 1, 'slab/skbuff_head_cache': 60 },
    after: { 'rdma/rxe_t/qp': 1, 'slab/skbuff_head_cache': 88 },
    grew: [],
  };
  it("judges each pass again on the host, whatever the guest's list said", () => {
    const leaked = { ...quiet, pass: 'stock', after: { ...quiet.after, 'rdma/rxe_t/qp': 2 } };
    const judged = judgeResources('7.3.4+deb13-amd64', [quiet, leaked]);
    expect(judged.map((j) => [j.kernel, j.pass, j.grew])).toEqual([
      ['7.3.4+deb13-amd64', 'rxe', []],
      ['7.3.4+deb13-amd64', 'stock', ['rdma/rxe_t/qp 1 -> 2']],
    ]);
    expect(resourceLeaks(judged, () => '7.3')).toEqual([
      '7.3 stock: rdma/rxe_t/qp 1 -> 2 (oracle: resource-count)',
    ]);
  });
  it('puts the leak in report.md and junit.xml as a failure of its oracle', () => {
    const judged = judgeResources('6.12.95+deb12-amd64', [
      { ...quiet, after: { ...quiet.after, 'slab/skbuff_head_cache': 200 } },
    ]);
    const doc: ProbeDocument = {
      schema: PROBE_SCHEMA,
      kernels: [{ line: '6.12', release: '6.12.95+deb12-amd64' }],
      assertions: [],
      fixes: [],
      fuzz: [],
      resources: judged,
    };
    const md = renderProbeMarkdown(doc);
    expect(md).toContain('## Resource counts');
    expect(md).toContain('1 passes, 1 grew.');
    expect(md).toContain('- 6.12 rxe: slab/skbuff_head_cache 60 -> 200 (oracle: resource-count)');
    expect(renderProbeJunit(doc)).toMatch(
      /<testcase classname="probe\.resources" name="rxe"[^>]*>\s*<failure message="grew: slab\/skbuff_head_cache 60 -> 200" type="resource-count"/,
    );
    expect(
      renderProbeMarkdown({ ...doc, resources: judgeResources(doc.kernels[0]!.release, [quiet]) }),
    ).toContain('1 passes, 0 grew.');
  });
});
