/**
 * Issue 25, "one curated API": every entry point exports an explicit list of names (its
 * index.ts), and this test pins them, values and types, against exports.json. Changing
 * the public surface is then a deliberate act: update exports.json in the same commit
 * (`RDMA_INTEROP_UPDATE_EXPORTS=1 npx vitest run --project host test/host/package/exports.test.ts`
 * rewrites it from dist/, after `npm run build:ts`; then `npx biome format --write` it).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../docs/examples.js';
import { ENTRY_POINTS, typeOnlyExports } from './exports.js';

interface Pinned {
  readonly values: Record<string, string[]>;
  readonly types: Record<string, string[]>;
}

const PINNED_FILE = join(ROOT, 'test', 'host', 'package', 'exports.json');

async function actual(): Promise<Pinned> {
  const values: Record<string, string[]> = {};
  for (const entry of ENTRY_POINTS) {
    values[entry.subpath] = Object.keys(await import(entry.module)).sort();
  }
  return { values, types: typeOnlyExports() };
}

describe('the public surface of every entry point (issue 25)', async () => {
  const now = await actual();
  if (process.env.RDMA_INTEROP_UPDATE_EXPORTS === '1') {
    writeFileSync(PINNED_FILE, `${JSON.stringify(now, null, 2)}\n`);
  }
  const pinned = JSON.parse(readFileSync(PINNED_FILE, 'utf8')) as Pinned;

  it('pins every entry point of package.json "exports"', () => {
    expect(Object.keys(pinned.values).sort()).toEqual(ENTRY_POINTS.map((e) => e.subpath).sort());
  });

  it.each(ENTRY_POINTS.map((e) => e.subpath))('%s exports exactly the pinned values', (entry) => {
    expect(now.values[entry]).toEqual(pinned.values[entry]);
  });

  it.each(ENTRY_POINTS.map((e) => e.subpath))('%s exports exactly the pinned types', (entry) => {
    expect(now.types[entry]).toEqual(pinned.types[entry]);
  });

  it('exports no CLI, bench, fuzz or docs-tool internals', () => {
    const internal = [
      // decode --summary/--fields/--filter (src/codec/capture/summary.ts)
      'parseFilter',
      'matchesFilter',
      'SUMMARY_COLUMNS',
      'SummaryOptionError',
      // the docs' requirement traceability (src/engine/requirements/)
      'buildTraceability',
      'extractRfc7306Sentences',
      'REQUIREMENTS',
      // the addon's raw records (src/verbs/)
      'toNativeQpAttr',
      'C_NAMES',
    ];
    for (const names of Object.values(now.values)) {
      expect(names.filter((n) => internal.includes(n))).toEqual([]);
    }
  });

  it('every layer exports the typed errors of the lookup convention', () => {
    for (const entry of ['./codec', './engine', './verbs', './runtime', './interop', '.']) {
      expect(now.values[entry]).toEqual(
        expect.arrayContaining(['ArgumentError', 'UnknownNameError']),
      );
    }
  });
});
