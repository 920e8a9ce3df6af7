/**
 * `compare` of the shards of a run equals `compare` of the run unsharded (issue 36). The
 * shards are built on the host the way `run --shard` makes them: the fixture runs'
 * scenarios, then probes, split by the same function (judge/shard.ts), each part's
 * environment naming only the devices its scenarios used, and `shard: "k/n"` recorded.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  type Comparison,
  compareReports,
  ReportInputError,
  readReports,
} from '../../../src/interop/comparison/index.js';
import { selectShard, withShard } from '../../../src/judge/shard.js';

const CLI = join(process.cwd(), 'dist', 'cli', 'main.js');
const FIXTURES = join(process.cwd(), 'test', 'fixtures', 'reports');

interface Doc {
  schema: string;
  environment: { devices: { name: string }[] } & Record<string, unknown>;
  scenarios: { id: string; device: string }[];
  probes: { id: string; verdict: string; device: string }[];
}

/**
 * A fixture run grown to 10 scenarios and 3 wire probes (each fixture scenario four
 * times under new ids, values kept), so that up to 7 shards each get a share.
 */
function grown(line: string): Doc {
  const doc = JSON.parse(
    readFileSync(join(FIXTURES, `guest-${line}`, 'results.json'), 'utf8'),
  ) as Doc;
  const scenarios = [0, 1, 2, 3].flatMap((i) =>
    doc.scenarios.map((s) => ({ ...s, id: i === 0 ? s.id : `${s.id}-${i}` })),
  );
  scenarios.push({ ...(doc.scenarios[0] as Doc['scenarios'][number]), id: 'rxe-extra' });
  scenarios.push({ ...(doc.scenarios[1] as Doc['scenarios'][number]), id: 'siw-extra' });
  const probes = ['siw-probe-ddp-bad-stag', 'siw-probe-mpa-crc', 'siw-probe-rdmap-version'].map(
    (id) => ({ id, verdict: 'match', device: 'siw0' }),
  );
  return { ...doc, scenarios, probes };
}

/** Shard k of n of `doc`, as `run --shard k/n --report` writes it. */
function shardOf(doc: Doc, index: number, count: number, selection = 'siw=stock'): unknown {
  const items = [
    ...doc.scenarios.map((scenario) => ({ scenario })),
    ...doc.probes.map((probe) => ({ probe })),
  ];
  const kept = selectShard(items, { index, count });
  const scenarios = kept.flatMap((i) => ('scenario' in i ? [i.scenario] : []));
  const probes = kept.flatMap((i) => ('probe' in i ? [i.probe] : []));
  // run.ts collects the environment of the devices its scenarios use (siw0 for probes).
  const used = new Set([...scenarios.map((s) => s.device), ...(probes.length > 0 ? ['siw0'] : [])]);
  return withShard(
    {
      ...doc,
      environment: {
        ...doc.environment,
        devices: doc.environment.devices.filter((d) => used.has(d.name)),
      },
      scenarios,
      probes,
    },
    { shard: { index, count }, selection },
  );
}

function write(dir: string, doc: unknown): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'results.json'), `${JSON.stringify(doc, null, 2)}\n`);
}

/** A comparison without where its runs' files were. */
const withoutPaths = (c: Comparison) => ({
  ...c,
  runs: c.runs.map(({ path: _path, ...r }) => r),
});

describe('compare of shards', () => {
  const root = mkdtempSync(join(tmpdir(), 'compare-shards-'));
  const lines = ['6.1', '7.3'];
  for (const line of lines) write(join(root, 'whole', line), grown(line));

  it.each([1, 2, 3, 4, 5, 6, 7])('equals compare of the unsharded runs, %i shards', (n) => {
    const dir = join(root, `n${n}`);
    // A run of one shard is its own run, labelled by its own directory; n shards are
    // labelled by the directory they share.
    const at = (line: string, k: number) =>
      n === 1 ? join(dir, line) : join(dir, line, `shard-${k}`);
    for (const line of lines)
      for (let k = 1; k <= n; k++) write(at(line, k), shardOf(grown(line), k, n));
    const whole = compareReports(readReports(lines.map((l) => join(root, 'whole', l))));
    // Each line's directory of shard-k/ subdirectories, and the shard directories one by one.
    const byLine = compareReports(readReports(lines.map((l) => join(dir, l))));
    const oneByOne = compareReports(
      readReports(lines.flatMap((l) => Array.from({ length: n }, (_, k) => at(l, n - k)))),
    );
    expect(withoutPaths(byLine)).toEqual(withoutPaths(whole));
    expect(withoutPaths(oneByOne)).toEqual(withoutPaths(whole));
    expect(whole.runs.map((r) => r.label)).toEqual(lines);
    expect(whole.runs.map((r) => r.scenarios)).toEqual([10, 10]);
    expect(whole.changedCount).toBeGreaterThan(0);
  });

  it('the CLI prints the same comparison for the shards as for the whole runs', () => {
    const dir = join(root, 'cli');
    for (const line of lines)
      for (let k = 1; k <= 3; k++) write(join(dir, line, `shard-${k}`), shardOf(grown(line), k, 3));
    const compare = (paths: string[]) =>
      spawnSync(process.execPath, [CLI, 'compare', ...paths], { encoding: 'utf8' });
    const whole = compare(lines.map((l) => join(root, 'whole', l)));
    const shards = compare(lines.map((l) => join(dir, l)));
    expect(whole.status).toBe(0);
    expect(shards.status).toBe(0);
    expect(shards.stdout).toBe(whole.stdout);
  });

  it('refuses two reports that claim the same shard of one kernel', () => {
    const dir = join(root, 'twice');
    write(join(dir, 'a'), shardOf(grown('6.1'), 1, 2));
    write(join(dir, 'b'), shardOf(grown('6.1'), 1, 2));
    expect(() => readReports([join(dir, 'a'), join(dir, 'b')])).toThrow(ReportInputError);
    expect(() => readReports([join(dir, 'a'), join(dir, 'b')])).toThrow(
      /shard 1\/2 of kernel 6\.1\.0-56-amd64 is also in/,
    );
  });

  it('keeps shards of different selections apart (a job per provider, each sharded)', () => {
    const dir = join(root, 'providers');
    write(join(dir, 'rxe0-1'), shardOf(grown('6.1'), 1, 2, 'device=rxe0 siw=stock'));
    write(join(dir, 'rxe0-2'), shardOf(grown('6.1'), 2, 2, 'device=rxe0 siw=stock'));
    write(join(dir, 'siw0-1'), shardOf(grown('6.1'), 1, 2, 'device=siw0 siw=stock'));
    const runs = readReports(['rxe0-1', 'siw0-1', 'rxe0-2'].map((d) => join(dir, d)));
    expect(runs.map((r) => r.scenarios.length)).toEqual([10, 5]);
    expect(runs.map((r) => r.parts?.length)).toEqual([2, 1]);
  });

  it('keeps shards of different kernels, or split differently, apart', () => {
    const dir = join(root, 'apart');
    write(join(dir, '6.1'), shardOf(grown('6.1'), 1, 2));
    write(join(dir, '7.3'), shardOf(grown('7.3'), 1, 2));
    write(join(dir, '6.1-of-3'), shardOf(grown('6.1'), 1, 3));
    const runs = readReports(['6.1', '7.3', '6.1-of-3'].map((d) => join(dir, d)));
    expect(runs).toHaveLength(3);
  });
});
