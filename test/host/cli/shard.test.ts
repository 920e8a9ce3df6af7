/**
 * `--shard <k>/<n>` of `run` and `probe` (issue 36, judge/shard.ts): refused clearly
 * when malformed; the n shards of a selection are disjoint, cover it, and differ in size
 * by at most one; `--list` shows the shard's part.
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runArgumentsError, selectScenarios } from '../../../src/cli/commands/run.js';
import { ArgumentError } from '../../../src/errors.js';
import {
  parseShard,
  type Shard,
  ShardError,
  selectShard,
  unshardedPosition,
} from '../../../src/judge/shard.js';
import { resumeKey, selectAssertions } from '../../../src/probe/probe-guest.js';
import { rowsOf, runCli } from './run-cli.js';

const CLI = join(process.cwd(), 'dist', 'cli', 'main.js');

const shardsOf = (n: number): Shard[] =>
  Array.from({ length: n }, (_, i) => ({ index: i + 1, count: n }));

/** Every item in exactly one shard, the union the unsharded selection, sizes within 1. */
function expectPartition(all: readonly string[], parts: readonly (readonly string[])[]): void {
  const flat = parts.flat();
  expect(flat.length).toBe(all.length);
  expect(new Set(flat).size).toBe(flat.length);
  expect([...flat].sort()).toEqual([...all].sort());
  const sizes = parts.map((p) => p.length);
  expect(Math.max(...sizes) - Math.min(...sizes)).toBeLessThanOrEqual(1);
}

describe('parseShard', () => {
  it('takes k/n with 1 <= k <= n', () => {
    expect(parseShard('2/5')).toEqual({ index: 2, count: 5 });
    expect(parseShard('1/1')).toEqual({ index: 1, count: 1 });
    expect(parseShard(' 7 / 7 ')).toEqual({ index: 7, count: 7 });
  });

  it.each([
    ['0/5', 'shard number must be 1 to 5'],
    ['6/5', 'shard number must be 1 to 5'],
    ['x', 'expected <k>/<n>'],
    ['1/0', 'count must be 1 to 1000'],
    ['2/1001', 'count must be 1 to 1000'],
    ['-1/5', 'expected <k>/<n>'],
    ['1.5/3', 'expected <k>/<n>'],
    ['1/3/4', 'expected <k>/<n>'],
    ['', 'expected <k>/<n>'],
  ])('refuses %j with a typed error (%s)', (value, reason) => {
    let caught: unknown;
    try {
      parseShard(value);
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(ShardError);
    expect(caught).toBeInstanceOf(ArgumentError);
    expect((caught as ShardError).value).toBe(value);
    expect((caught as ShardError).reason).toContain(reason);
    expect((caught as ShardError).field).toBe('shard');
  });

  it('refuses a value that is not a string', () => {
    expect(() => parseShard(3)).toThrow(ShardError);
  });
});

describe('selectShard', () => {
  it('deals the items round-robin in their given order', () => {
    const items = ['d', 'a', 'c', 'e', 'b'];
    expect(selectShard(items, { index: 1, count: 2 })).toEqual(['d', 'c', 'b']);
    expect(selectShard(items, { index: 2, count: 2 })).toEqual(['a', 'e']);
    expect(selectShard(items, undefined)).toEqual(items);
    // A shard's i-th item was the selection's item i*n + k - 1 (compare's merge uses it).
    const third = { index: 3, count: 4 };
    const letters = [...'abcdefghijk'];
    selectShard(letters, third).forEach((x, i) => {
      expect(letters[unshardedPosition(third, i)]).toBe(x);
    });
    // More shards than items: some are empty, none has two.
    expect(shardsOf(7).map((s) => selectShard(['x', 'y'], s).length)).toEqual([
      1, 1, 0, 0, 0, 0, 0,
    ]);
  });
});

describe('run --shard', () => {
  const ids = (s: ReturnType<typeof selectScenarios>) => s.map((x) => x.id);

  it.each([{}, { device: ['siw0' as const] }, { scenario: 'rxe-*' }, { siw: 'rfc7306' as const }])(
    'splits the selection %j into n disjoint, covering shards for n = 1..7',
    (filters) => {
      const all = ids(selectScenarios(filters));
      expect(all.length).toBeGreaterThan(7);
      for (let n = 1; n <= 7; n++)
        expectPartition(
          all,
          shardsOf(n).map((shard) => ids(selectScenarios({ ...filters, shard }))),
        );
    },
  );

  it('--list shows the shard part: the union of the shards is the unsharded list', () => {
    const all = rowsOf(runCli(['--list', '--device', 'siw0']).stdout);
    const parts = [1, 2, 3].map((k) =>
      rowsOf(runCli(['--list', '--device', 'siw0', '--shard', `${k}/3`]).stdout),
    );
    expectPartition(
      all.map((r) => r.join('\t')),
      parts.map((p) => p.map((r) => r.join('\t'))),
    );
    // --json lists the same part.
    const json = JSON.parse(
      runCli(['--list', '--device', 'siw0', '--shard', '2/3', '--json']).stdout,
    ) as { id: string }[];
    expect(json.map((r) => r.id)).toEqual(parts[1]?.map((r) => r[0]));
  });

  it('refuses a bad shard as a usage error, before any work', () => {
    for (const bad of ['0/5', '6/5', 'x']) {
      const r = runCli(['--list', '--shard', bad]);
      expect(r.status).toBe(2);
      expect(r.stderr).toMatch(/^rdma-interop run: error: option '--shard <k>\/<n>' argument/);
      expect(r.stderr).not.toMatch(/\n\s+at /);
    }
    expect(runArgumentsError(['--shard', '6/5'])).toContain('The shard number must be 1 to 5');
    expect(runArgumentsError(['--shard', '5/5'])).toBeUndefined();
  });

  it('says so when a shard is empty (more shards than scenarios)', () => {
    const r = runCli(['--list', '--scenario', 'siw-fetch-add', '--shard', '2/2']);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain("no scenario matches 'siw-fetch-add' in shard 2/2");
  });
});

describe('probe --shard', () => {
  const keys = (shard?: Shard) =>
    selectAssertions({ siw: 'both', ...(shard === undefined ? {} : { shard }) }).map((p) =>
      resumeKey(p.variant, p.assertion.id),
    );

  it('splits the (assertion, pass) pairs into n disjoint, covering shards for n = 1..7', () => {
    const all = keys();
    expect(all.length).toBeGreaterThan(7);
    for (let n = 1; n <= 7; n++) expectPartition(all, shardsOf(n).map(keys));
  });

  it('--list shows the shard part', () => {
    const list = (args: string[]) =>
      execFileSync(process.execPath, [CLI, 'probe', '--list', ...args], { encoding: 'utf8' })
        .trimEnd()
        .split('\n');
    const all = list([]);
    expectPartition(all, [list(['--shard', '1/2']), list(['--shard', '2/2'])]);
  });
});
