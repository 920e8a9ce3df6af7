/**
 * The bench's two-thread write-with-immediate ping-pong (src/bench/write-imm-pingpong.ts)
 * on rxe0: each side in its own worker thread with its own context and QP, the answerer's
 * first wait and last answer outside its loop. It must neither deadlock nor lose a message:
 * the initiator stamps every one of its posts, each after the previous one, and both
 * workers end. (Its speed is `npm run bench`'s business, never a test's.) Run through the
 * built package: the worker loads dist/bench/write-imm-side.js.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const MODULE = pathToFileURL(resolve('dist/bench/write-imm-pingpong.js')).href;
const SCRIPT = `
const { writeImmPingPong } = await import(${JSON.stringify(MODULE)});
const stamps = await writeImmPingPong('rxe0', 300);
let increasing = true;
for (let i = 1; i < stamps.length; i++) if (!(stamps[i] > stamps[i - 1])) increasing = false;
console.log(JSON.stringify({ count: stamps.length, increasing, first: stamps[0] > 0 }));
`;

describe('two-thread write-with-immediate ping-pong', () => {
  const dir = mkdtempSync(join(tmpdir(), 'pingpong-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('300 round trips: every post of the initiator stamped in order, both workers end', () => {
    const script = join(dir, 'pingpong.mjs');
    writeFileSync(script, SCRIPT);
    const r = spawnSync(process.execPath, [script], {
      encoding: 'utf8',
      timeout: 90_000,
    });
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout.trim().split('\n').pop() ?? '{}')).toEqual({
      count: 300,
      increasing: true,
      first: true,
    });
  });
});
