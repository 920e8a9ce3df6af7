/**
 * The bench's two-thread write-with-immediate ping-pong (src/bench/write-imm-pingpong.ts)
 * on rxe0: each side in its own worker thread with its own context and QP, the answerer's
 * first wait and last answer outside its loop. It must neither deadlock nor lose a message:
 * the initiator stamps every one of its posts, its round trips run forward, and both
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
const deltas = [];
for (let i = 1; i < stamps.length; i++) deltas.push(stamps[i] - stamps[i - 1]);
deltas.sort((a, b) => a - b);
console.log(JSON.stringify({
  count: stamps.length,
  allStamped: stamps.every((s) => Number.isFinite(s) && s > 0),
  medianRoundTripPositive: deltas[deltas.length >> 1] > 0,
  forward: stamps[stamps.length - 1] > stamps[0],
}));
`;

describe('two-thread write-with-immediate ping-pong', () => {
  const dir = mkdtempSync(join(tmpdir(), 'pingpong-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('300 round trips: every post of the initiator stamped, round trips forward, both workers end', () => {
    const script = join(dir, 'pingpong.mjs');
    writeFileSync(script, SCRIPT);
    const r = spawnSync(process.execPath, [script], {
      encoding: 'utf8',
      timeout: 90_000,
    });
    expect(r.status, r.stderr).toBe(0);
    // Not every step need be forward: a thread that moves between vCPUs whose TSCs differ
    // (the TCG guest finds them unsynchronized) can stamp a little back (native/clock.h).
    expect(JSON.parse(r.stdout.trim().split('\n').pop() ?? '{}')).toEqual({
      count: 300,
      allStamped: true,
      medianRoundTripPositive: true,
      forward: true,
    });
  });
});
