/**
 * Issue 25, "no silent input": every runtime export of every entry point (functions, and
 * classes with their static methods) is called with the plain-JavaScript misuse
 * TypeScript would have stopped (src/testing/misuse.ts: undefined, null, NaN, -1, 1.5,
 * Infinity, a string, a number where a bigint belongs, a negative bigint, an object with
 * unknown names, a huge length, a function, ...; each in every position, all positions at
 * once, and fast-check mixes). Each call must return a checked result (no NaN, no stray
 * `undefined`/`NaN` text in it) or throw one of the package's typed errors: never a raw
 * TypeError/RangeError, never a crash, never a hang. The walk runs on the built package
 * (dist/) in a child process with a time limit, and with a cache directory of its own.
 *
 * KNOWN_RAW lists the exports that still let a raw error out, each with why; the test
 * fails when a listed export is clean (remove it) or an unlisted one is not.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from '../docs/examples.js';
import { ENTRY_POINTS } from './exports.js';

interface Line {
  readonly export?: string;
  readonly cases?: number;
  readonly start?: string;
  readonly id?: string;
  readonly outcome?: 'returned' | 'unchecked' | 'typed' | 'raw' | 'timeout';
  readonly detail?: string;
  readonly done?: boolean;
}

const cache = mkdtempSync(join(tmpdir(), 'rdma-interop-misuse-'));
afterAll(() => rmSync(cache, { recursive: true, force: true }));

const walk = spawnSync(process.execPath, [join(ROOT, 'dist', 'testing', 'misuse.js'), '25'], {
  cwd: ROOT,
  encoding: 'utf8',
  timeout: 240_000,
  maxBuffer: 64 * 1024 * 1024,
  // Its own empty cache: nothing the walk does can reach the real guest assets.
  env: { ...process.env, RDMA_INTEROP_CACHE: cache },
});
const lines: Line[] = walk.stdout
  .split('\n')
  .filter((l) => l.startsWith('{'))
  .map((l) => JSON.parse(l) as Line);
const exportsWalked = lines.filter((l) => l.export !== undefined).map((l) => l.export as string);
const results = lines.filter((l) => l.outcome !== undefined);
const bad = results.filter((l) => l.outcome !== 'returned' && l.outcome !== 'typed');
const exportOf = (id: string) => id.split(' ')[0] ?? id;
const offenders = [...new Set(bad.map((l) => exportOf(l.id ?? '')))].sort();
const known = JSON.parse(
  readFileSync(join(ROOT, 'test', 'host', 'package', 'misuse-known.json'), 'utf8'),
) as Readonly<Record<string, string>>;

describe('every export refuses plain-JavaScript misuse with a typed error (issue 25)', () => {
  it('the walk ends: no crash, no hang (a started case without its outcome)', () => {
    const started = lines.filter((l) => l.start !== undefined).length;
    expect(walk.signal, walk.stderr).toBeNull();
    expect(walk.status, walk.stderr).toBe(0);
    expect(lines.at(-1)).toEqual({ done: true });
    expect(results.length).toBe(started);
  });

  it('walks every callable runtime export of every entry point', async () => {
    const expected: string[] = [];
    for (const entry of ENTRY_POINTS) {
      const module = (await import(entry.module)) as Record<string, unknown>;
      for (const [name, value] of Object.entries(module))
        if (typeof value === 'function') expected.push(`${entry.subpath}.${name}`);
    }
    expect(expected.filter((e) => !exportsWalked.includes(e))).toEqual([]);
    // The counts the closing note gives.
    console.log(
      `misuse walk: ${results.length} cases over ${exportsWalked.length} callables ` +
        `(${expected.length} exported functions and classes, their statics), ` +
        `${results.filter((r) => r.outcome === 'typed').length} typed errors, ` +
        `${results.filter((r) => r.outcome === 'returned').length} checked results, ` +
        `${bad.length} raw/unchecked in ${offenders.length} exports (KNOWN_RAW)`,
    );
    expect(results.length).toBeGreaterThan(5000);
  });

  it('no export outside KNOWN_RAW lets a raw error out or returns an unchecked value', () => {
    const unexpected = bad.filter((l) => known[exportOf(l.id ?? '')] === undefined);
    expect(unexpected.map((l) => `${l.id}: ${l.outcome} ${l.detail ?? ''}`)).toEqual([]);
  });

  it('KNOWN_RAW names only exports that still misbehave (remove the ones fixed)', () => {
    expect(Object.keys(known).filter((e) => !offenders.includes(e))).toEqual([]);
  });
});
