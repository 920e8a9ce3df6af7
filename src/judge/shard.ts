/**
 * `--shard <k>/<n>` of `run` and `probe` (issue 36): one of n deterministic parts of what
 * the other filters select, so that one kernel line's work can fan out over n CI jobs (or
 * the n indices of a Kubernetes indexed Job) and `compare` can put the parts back together
 * (comparison/shards.ts).
 *
 * The split: the item at position p of the selection, in the suite's own order (the order
 * `--list` prints, the same on every machine running one version), goes to shard
 * (p mod n) + 1. Why this and not a hash of the id: it is exact (shard sizes differ by at
 * most one, whatever the ids); dealing round-robin spreads each family (a family's
 * scenarios are listed together) and so its run time over every shard; and a shard's
 * i-th item is the selection's item i*n + k - 1, so `compare` puts the shards' results
 * back in the unsharded order. What it gives up: adding a scenario moves others to
 * another shard, which does not matter because the shards of one run are computed by
 * one version of the suite over one selection; a hash would keep an id in its shard
 * across versions, but its shards are balanced only on average.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ArgumentError } from '../errors.js';

/** Shard `index` (1-based) of `count`. */
export interface Shard {
  readonly index: number;
  readonly count: number;
}

/** The largest shard count accepted: more parts than any CI fans a line out into. */
export const MAX_SHARDS = 1000;

/** A `--shard` value that is not `<k>/<n>` with 1 <= k <= n. */
export class ShardError extends ArgumentError {
  override readonly name = 'ShardError';
  constructor(
    /** The value given. */
    readonly value: string,
    /** What is wrong with it, as a sentence. */
    readonly reason: string,
  ) {
    super('interop', 'shard', `'${value}' is not a shard: ${reason}`);
  }
}

/** Parses `k/n` (e.g. `2/5`): 1 <= k <= n <= {@link MAX_SHARDS}, plain decimal integers. */
export function parseShard(value: unknown): Shard {
  if (typeof value !== 'string') throw new ShardError(String(value), 'expected a string k/n');
  const m = /^\s*(\d{1,4})\s*\/\s*(\d{1,4})\s*$/.exec(value);
  if (m === null)
    throw new ShardError(value, 'expected <k>/<n>, two whole numbers, e.g. 2/5 (shard 2 of 5)');
  const index = Number(m[1]);
  const count = Number(m[2]);
  if (count < 1 || count > MAX_SHARDS)
    throw new ShardError(value, `the shard count must be 1 to ${MAX_SHARDS}`);
  if (index < 1 || index > count)
    throw new ShardError(value, `the shard number must be 1 to ${count} (shards count from 1)`);
  return { index, count };
}

/** `k/n`, as `--shard` takes it and as reports record it. */
export const shardLabel = (shard: Shard): string => `${shard.index}/${shard.count}`;

/**
 * The items of `items` in `shard`, in their given order: those at positions p with
 * p mod count = index - 1. Every item is in exactly one of the `count` shards, and their
 * sizes differ by at most one.
 */
export function selectShard<T>(items: readonly T[], shard: Shard | undefined): T[] {
  if (shard === undefined) return [...items];
  return items.filter((_, position) => position % shard.count === shard.index - 1);
}

/** Where the `i`-th item of `shard` was in the unsharded selection ({@link selectShard}). */
export const unshardedPosition = (shard: Shard, i: number): number =>
  i * shard.count + shard.index - 1;

/** A sharded run: which shard, and of what (the filters it was split from). */
export interface ShardOf {
  readonly shard: Shard;
  /**
   * The selection that was split, as the filters name it (e.g. `device=rxe0`): shards of
   * different selections are different runs, even on one kernel (comparison/shards.ts).
   */
  readonly selection: string;
}

/**
 * results.json of a shard: the document with `shard: "k/n"` and `shardSelection` beside
 * `schema`, so that `compare` knows the run is one part of a larger one
 * (comparison/shards.ts). An unsharded run's document is returned as it is.
 */
export function withShard(document: unknown, of: ShardOf | undefined): unknown {
  if (of === undefined || typeof document !== 'object' || document === null) return document;
  const { schema, ...rest } = document as Record<string, unknown>;
  return { schema, shard: shardLabel(of.shard), shardSelection: of.selection, ...rest };
}

/** Adds the shard to the results.json `run --report` wrote into `dir` (see {@link withShard}). */
export function markShard(dir: string, of: ShardOf): void {
  const file = join(dir, 'results.json');
  const document: unknown = JSON.parse(readFileSync(file, 'utf8'));
  writeFileSync(file, `${JSON.stringify(withShard(document, of), null, 2)}\n`);
}
