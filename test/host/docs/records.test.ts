/**
 * Issue 31, generated docs: the tables of recorded behaviour in docs/interop.md (the
 * suite's), docs/probe.md (the iWARP tester's) and docs/tester-roce.md (the RoCE
 * tester's) are the records' own rendering (src/judge/records/table.ts), so a record
 * absent from the docs, or one the docs still list after it went, fails here.
 * `RDMA_INTEROP_UPDATE_DOCS=1 npx vitest run --project host test/host/docs/records.test.ts`
 * rewrites them.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RECORD_TABLES, recordsTable } from '../../../src/judge/records/table.js';
import { ROOT } from './examples.js';

const DOCS: Readonly<Record<string, string>> = {
  suite: 'docs/interop.md',
  'tester-iwarp': 'docs/probe.md',
  'tester-roce': 'docs/tester-roce.md',
};

const BETWEEN = (name: string) =>
  new RegExp(`(<!-- records:${name} -->\\n)([\\s\\S]*?)(\\n<!-- records:end -->)`);

describe('the docs tables of records are generated from the records', () => {
  it.each(Object.keys(RECORD_TABLES))('%s', (name) => {
    const file = join(ROOT, DOCS[name] as string);
    const text = readFileSync(file, 'utf8');
    const table = recordsTable(RECORD_TABLES[name] ?? []);
    if (process.env.RDMA_INTEROP_UPDATE_DOCS === '1')
      writeFileSync(file, text.replace(BETWEEN(name), `$1${table}$3`));
    const found = BETWEEN(name).exec(readFileSync(file, 'utf8'));
    expect(found, `${DOCS[name]} has no <!-- records:${name} --> table`).not.toBeNull();
    expect(found?.[2]).toBe(table);
  });

  it('a record left out of a table is a different table', () => {
    const records = RECORD_TABLES.suite ?? [];
    expect(records.length).toBeGreaterThan(30);
    expect(recordsTable(records.slice(1))).not.toBe(recordsTable(records));
  });
});
