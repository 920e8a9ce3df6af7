/**
 * The resource-count oracle's logic (src/probe/oracles/resource-count.ts): the two sources
 * it parses and what counts as growth. The counting itself runs in the guest.
 */
import { describe, expect, it } from 'vitest';
import {
  parseRdmaResources,
  parseSlabinfo,
  resourceGrowth,
  SLAB_TOLERANCE,
} from '../../../src/probe/oracles/resource-count.js';

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
    const within = 1203 + Math.max(SLAB_TOLERANCE.objects, 1203 * SLAB_TOLERANCE.ratio);
    expect(resourceGrowth(before, { ...before, 'slab/skbuff_head_cache': within })).toEqual([]);
    expect(resourceGrowth(before, { ...before, 'slab/skbuff_head_cache': within + 1 })).toEqual([
      `slab/skbuff_head_cache 1203 -> ${within + 1}`,
    ]);
    expect(resourceGrowth(before, { ...before, 'slab/ib_mad_cache': 263 })).toEqual([]);
    expect(resourceGrowth(before, { ...before, 'slab/ib_mad_cache': 264 })).toEqual([
      'slab/ib_mad_cache 7 -> 264',
    ]);
  });
});
