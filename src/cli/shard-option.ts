/**
 * `--shard <k>/<n>` of `run` and `probe` (judge/shard.ts says how items are split): a
 * bad value is a usage error from commander, one line, before any work.
 */
import { InvalidArgumentError, Option } from 'commander';
import { parseShard, type Shard, ShardError } from '../judge/shard.js';

/** commander argument parser for `--shard 2/5`. */
export function shardValue(value: string): Shard {
  try {
    return parseShard(value);
  } catch (error) {
    if (error instanceof ShardError)
      throw new InvalidArgumentError(`${error.reason[0]?.toUpperCase()}${error.reason.slice(1)}.`);
    throw error;
  }
}

/** `--shard <k>/<n>`; `what` names the items split (scenarios, assertions). */
export function shardOption(what: string): Option {
  return new Option(
    '--shard <k>/<n>',
    `only shard k of n (1-based) of the ${what} the other filters select: sorted by id, dealt round-robin, so the n shards together run each exactly once (e.g. one CI job per shard; compare merges their reports)`,
  ).argParser(shardValue);
}
