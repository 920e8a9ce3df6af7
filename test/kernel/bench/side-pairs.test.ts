/**
 * The bench's two-thread side pairs on rxe0, each side in its own worker thread with its
 * own context and QP, opened once and run several times as the bench's rounds run them:
 * the write-with-immediate ping-pong (src/bench/write-imm-pingpong.ts; the answerer's
 * first wait and last answer outside its loop) and the SRQ rate (src/bench/srq-rate.ts).
 * They must neither deadlock nor lose a message across runs: the initiator stamps every
 * one of its posts, its round trips run forward, the SRQ sender reports a rate every run
 * (a lost receive would leave its receiver waiting), and all four workers end. (Their
 * speed is `npm run bench`'s business, never a test's.) Run through the built package: the
 * workers load dist/bench/*-side.js.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const PINGPONG = pathToFileURL(resolve('dist/bench/write-imm-pingpong.js')).href;
const SRQ = pathToFileURL(resolve('dist/bench/srq-rate.js')).href;
const SCRIPT = `
const { openWriteImmPingPong } = await import(${JSON.stringify(PINGPONG)});
const { openSrqRateSides } = await import(${JSON.stringify(SRQ)});
const pingPong = await openWriteImmPingPong('rxe0');
const runs = [];
// 330 then 270: more than one repost of receives (every 100) in each, and a count that
// leaves the receives' accounting between two reposts at the end of a run.
for (const count of [330, 270]) {
  const stamps = await pingPong.measure(count);
  const deltas = [];
  for (let i = 1; i < stamps.length; i++) deltas.push(stamps[i] - stamps[i - 1]);
  deltas.sort((a, b) => a - b);
  runs.push({
    count: stamps.length,
    allStamped: stamps.every((s) => Number.isFinite(s) && s > 0),
    medianRoundTripPositive: deltas[deltas.length >> 1] > 0,
    forward: stamps[stamps.length - 1] > stamps[0],
  });
}
await pingPong.close();
// The SRQ sides: depth 64, streams of 100 Sends: every run consumes more than the depth,
// so the receiver's refills must keep up across runs.
const srq = await openSrqRateSides('rxe0', { count: 100, depth: 64, size: 8, batch: 16 });
const rates = [];
for (const streams of [2, 1, 3]) rates.push(await srq.measure(streams));
await srq.close();
console.log(JSON.stringify({ runs, rates: rates.map((r) => Number.isFinite(r) && r > 0) }));
`;

describe('two-thread side pairs of the bench', () => {
  const dir = mkdtempSync(join(tmpdir(), 'pingpong-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('ping-pong and SRQ rate, each pair run several times: every post of the initiator stamped, round trips forward, a rate every run, all workers end', () => {
    const script = join(dir, 'pairs.mjs');
    writeFileSync(script, SCRIPT);
    const r = spawnSync(process.execPath, [script], {
      encoding: 'utf8',
      timeout: 120_000,
    });
    expect(r.status, r.stderr).toBe(0);
    // Not every step need be forward: a thread that moves between vCPUs whose TSCs differ
    // (the TCG guest finds them unsynchronized) can stamp a little back (native/clock.h).
    const run = (count: number) => ({
      count,
      allStamped: true,
      medianRoundTripPositive: true,
      forward: true,
    });
    expect(JSON.parse(r.stdout.trim().split('\n').pop() ?? '{}')).toEqual({
      runs: [run(330), run(270)],
      rates: [true, true, true],
    });
  });
});
