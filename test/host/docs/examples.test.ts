/**
 * Every code example in README.md and docs/*.md, as docs/contributing.md defines them:
 * ts blocks are type-checked (all of them, device ones included) and the host ones run;
 * sh blocks run unless marked not-run with a reason. Device blocks run in the guest:
 * test/kernel/docs/examples.test.ts.
 */
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { notRun } from '../../helpers/not-run.js';
import {
  allBlocks,
  cliShim,
  EXAMPLES_DIR,
  KNOWN_BROKEN,
  KNOWN_LANGUAGES,
  NO_ASSERT_YET,
  needsDevices,
  notRunReason,
  ordinal,
  ROOT,
  runModule,
  typeCheck,
} from './examples.js';

const blocks = allBlocks();
const tsBlocks = blocks.filter((b) => b.language === 'ts');
const shBlocks = blocks.filter((b) => b.language === 'sh');
const checked = typeCheck(tsBlocks);

/** `it`, or `it.fails` for an example listed in KNOWN_BROKEN. */
function itFor(name: string) {
  return Object.hasOwn(KNOWN_BROKEN, name) ? it.fails : it;
}

describe('documentation code blocks follow the convention', () => {
  it('there are examples to check (README.md and docs/*.md were found)', () => {
    expect(tsBlocks.length).toBeGreaterThanOrEqual(4);
    expect(new Set(tsBlocks.map((b) => b.file))).toContain('docs/codec-iwarp.md');
  });

  it('every fence names ts, sh, text or nothing', () => {
    const unknown = blocks
      .filter((b) => !(KNOWN_LANGUAGES as readonly string[]).includes(b.language))
      .map((b) => `${b.id}: \`\`\`${b.language}`);
    expect(unknown).toEqual([]);
  });

  it('every ts example checks its own results with node:assert', () => {
    const silent = tsBlocks
      .filter((b) => !/\bassert\b/.test(b.code))
      .map((b) => ordinal(blocks, b));
    expect(silent).toEqual(Object.keys(NO_ASSERT_YET));
  });

  it('KNOWN_BROKEN names only examples that exist', () => {
    const names = tsBlocks.map((b) => ordinal(blocks, b));
    for (const name of Object.keys(KNOWN_BROKEN)) expect(names).toContain(name);
  });
});

describe.each(tsBlocks.map((b) => [ordinal(blocks, b), b] as const))('%s', (name, block) => {
  itFor(name)(`type-checks (${block.id})`, () => {
    expect(checked.errors.get(block.id)).toEqual([]);
  });

  if (needsDevices(block)) return; // run in the guest by test/kernel/docs/
  itFor(name)(`runs on the host and its assertions hold (${block.id})`, () => {
    const file = checked.outputs.get(block.id) ?? '';
    const r = runModule(file);
    expect(r.status, `${r.stdout}${r.stderr}`).toBe(0);
  });
});

describe.each(shBlocks.map((b) => [b.id, b] as const))('%s (sh)', (_id, block) => {
  const reason = notRunReason(blocks, block);
  // A block marked not-run is counted as not run by the closing line, never passed.
  if (reason !== undefined) {
    notRun('runs', reason);
    return;
  }
  it('runs, every command exiting 0', () => {
    const r = spawnSync('bash', ['-euo', 'pipefail', '-c', block.code], {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 120_000,
      env: { ...process.env, PATH: `${cliShim(EXAMPLES_DIR)}:${process.env.PATH ?? ''}` },
    });
    expect(r.status, `${r.stdout}${r.stderr}`).toBe(0);
  });
});
