/**
 * Issue 36, the addon built without external buffers (NODE_API_NO_EXTERNAL_BUFFERS_ALLOWED,
 * scripts/setup/no-external-addon.sh), as a Node with the V8 sandbox needs it: every piece
 * of memory it shares with JS is V8-allocated (native/js_memory.h). Each part runs in a
 * child process that loads that build (RDMA_INTEROP_ADDON):
 * - misuse on V8's memory: allocMr page-aligned and zeroed; every transfer of its
 *   ArrayBuffer refused or a copy, RDMA Writes landing in it after collections; the memory
 *   JS's own after deregistration; on Node 22, where ArrayBuffer.prototype.transfer()
 *   ignores markAsUntransferable, allocMr refuses and a detached round-trip block or bound
 *   poll/post memory is VerbsError EBADF, never freed memory used;
 * - a bounded selection of the verbs kernel tests on that build (BOUNDED; all of them
 *   with RDMA_INTEROP_NO_EXTERNAL_VERBS=all);
 * - a selection of the suite, judged against the engine, on that build.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cacheRoot } from '../../../src/runtime/paths.js';
import { FLOOR, nodeBinary } from '../../helpers/node-versions.js';

const VARIANT = join(cacheRoot(), 'addon-no-external', 'build', 'Release', 'rdma_interop.node');
const DIST = resolve('dist');

/** The environment of a child on the variant (no vitest worker variables: a nested run). */
function variantEnv(): NodeJS.ProcessEnv {
  expect(existsSync(VARIANT), `${VARIANT}: bash scripts/setup/no-external-addon.sh`).toBe(true);
  const env: NodeJS.ProcessEnv = { ...process.env, RDMA_INTEROP_ADDON: VARIANT };
  for (const key of Object.keys(env)) if (key.startsWith('VITEST')) delete env[key];
  return env;
}

/** The floor's binary (a Node 22 while engines.node says so), as node22.test.ts runs it. */
function node22(): string {
  expect(FLOOR.startsWith('22.'), `the floor ${FLOOR} is no longer a Node 22`).toBe(true);
  return nodeBinary(FLOOR);
}

// Registers memory on V8's allocation, tries every transfer, collects, writes into it.
const MISUSE = `
const [dist] = process.argv.slice(1);
const v = await import(dist + '/verbs/index.js');
const { addon } = await import(dist + '/verbs/native.js');
const { packSendList } = await import(dist + '/verbs/requests/send-packer.js');
const { MessageChannel } = await import('node:worker_threads');
const out = { path: v.memoryPath() };
const ctx = v.openDevice('rxe0');
const gid = ctx.findGid({ type: 'RoCEv2', ipv4: '192.0.2.1' });
const pd = ctx.allocPd();
const cq = ctx.createCq({ cqe: 64 });
const a = pd.createQp({ sendCq: cq });
const b = pd.createQp({ sendCq: cq });
v.connectPairByHand(a, b, gid, { aPsn: 1, bPsn: 2 });
const SIZE = (1 << 20) + 3;
let target;
try { target = pd.allocMr(SIZE, ['LOCAL_WRITE', 'REMOTE_WRITE']); }
catch (e) { out.allocMr = e.name + ' ' + e.field; }
if (target !== undefined) {
  out.pageAligned = target.addr % 4096n === 0n;
  out.zeroed = target.allocation.every((x) => x === 0);
  const ranged = pd.allocMr(100, ['LOCAL_WRITE'], { offset: 40, length: 8 });
  out.rangeAt = Number(ranged.addr % 4096n);
  ranged.close();
  const source = pd.allocMr(SIZE, ['LOCAL_WRITE']);
  source.buffer.fill(0x5a);
  const ab = target.allocation.buffer;
  const outcomes = [];
  const attempt = (name, f) => {
    try { f(); outcomes.push(name + ':' + (ab.byteLength === 0 ? 'detached' : 'kept')); }
    catch (e) { outcomes.push(name + ':' + e.name); }
  };
  attempt('structuredClone', () => structuredClone(ab, { transfer: [ab] }));
  const { port1, port2 } = new MessageChannel();
  attempt('postMessage', () => port1.postMessage(ab, [ab]));
  port1.close(); port2.close();
  if (typeof ArrayBuffer.prototype.transfer === 'function') attempt('transfer', () => ab.transfer());
  out.outcomes = outcomes.join(' ');
  for (let i = 0; i < 6; i++) { globalThis.gc(); await new Promise((r) => setTimeout(r, 20)); }
  for (let round = 0; round < 20; round++) {
    a.postSend({ opcode: 'RDMA_WRITE', sgList: [source.sge()], remote: target.remote() });
    const [wc] = cq.pollUntil(1);
    if (!wc.ok) throw new Error('write failed: ' + wc.status);
    const junk = [];
    for (let i = 0; i < 2000; i++) junk.push(Buffer.alloc(512, i));
  }
  out.lastByte = target.buffer[SIZE - 1].toString(16);
  // Deregistered: the memory is JS's from now on, alive as long as JS holds it.
  const kept = target.allocation;
  target.close();
  for (let i = 0; i < 4; i++) { globalThis.gc(); await new Promise((r) => setTimeout(r, 20)); }
  kept.fill(0x11, 0, 16);
  out.afterDereg = kept[SIZE - 1].toString(16) + '/' + kept[0].toString(16);
  source.close();
}
// The bound calls' and a round trip's memory, detached where this Node lets JS do it.
const poll = cq.native.boundPoll();
const post = a.native.boundPost(64);
// Node 22 registers no Buffer here (regMr and allocMr refuse): a SEND of nothing, not run.
let scratch;
try { scratch = pd.regMr(Buffer.alloc(8), ['LOCAL_WRITE', 'REMOTE_WRITE']); } catch {}
const wr = scratch === undefined
  ? { wrId: 7n, opcode: 2, sendFlags: 0, sgList: [] }
  : { wrId: 7n, opcode: 0, sendFlags: 0, sgList: [{ addr: scratch.addr, length: 8, lkey: scratch.lkey }],
      rkey: scratch.rkey, remoteAddr: scratch.addr };
const rt = addon().createRoundTrip(a.native, packSendList([wr]).words, cq.native, -1, 2000, 1);
out.roundTrip = scratch === undefined ? 'not run' : rt.run();
const detach = (name, memory) => {
  try { memory.transfer(); return name + ':' + (memory.byteLength === 0 ? 'detached' : 'kept'); }
  catch (e) { return name + ':' + e.name; }
};
const call = (f) => { try { f(); return 'ok'; } catch (e) { return e.name + ' ' + e.code; } };
out.detach = [detach('poll', poll.memory), detach('post', post.memory), detach('block', rt.block)].join(' ');
for (let i = 0; i < 4; i++) { globalThis.gc(); await new Promise((r) => setTimeout(r, 20)); }
out.after = [call(() => poll.poll(4, 0, 0)), call(() => post.post(0, false)), call(() => rt.run())].join(' | ');
rt.release();
scratch?.close(); a.close(); b.close(); cq.close(); pd.close(); ctx.close();
console.log(JSON.stringify(out));
`;

function misuse(node: string) {
  const r = spawnSync(node, ['--expose-gc', '--input-type=module', '-e', MISUSE, DIST], {
    encoding: 'utf8',
    timeout: 90_000,
    env: variantEnv(),
  });
  expect(r.stderr).toBe('');
  expect(r.signal).toBeNull();
  expect(r.status).toBe(0);
  return JSON.parse(r.stdout) as Record<string, unknown>;
}

/**
 * The verbs kernel tests that exercise the memory the addon shares with JS (allocMr, round
 * trips, the bound post and poll, transfers, GC pressure) on rxe and siw: a bounded
 * selection, so CI's kernel stage grows by about 2 minutes under TCG.
 * `RDMA_INTEROP_NO_EXTERNAL_VERBS=all` runs every file of this folder instead (but this one
 * and node22.test.ts, whose Node 22 refuses allocMr on V8's memory).
 */
const BOUNDED = [
  'round-trip.test.ts',
  'rxe-atomics.test.ts',
  'rxe-operations.test.ts',
  'siw-operations.test.ts',
  'detach.test.ts',
  'misuse.test.ts',
];
const VERBS_FILES = (
  process.env.RDMA_INTEROP_NO_EXTERNAL_VERBS === 'all'
    ? readdirSync(resolve('test/kernel/verbs'))
        .filter((f) => f.endsWith('.test.ts'))
        .filter((f) => f !== 'no-external-buffers.test.ts' && f !== 'node22.test.ts')
    : BOUNDED
).map((f) => `test/kernel/verbs/${f}`);

const SELECTION = '{rxe-fetch-add,rxe-fetch-add-ex,rxe-write-imm,siw-write,siw-read}';

describe('the addon built without external buffers (issue 36)', () => {
  it('misuse on V8-allocated memory: page-aligned, zeroed, never freed under the device', () => {
    const out = misuse(process.execPath);
    expect(out.path).toEqual({ path: 'v8', reason: 'compile-time', externalAvailable: false });
    expect(out.allocMr).toBeUndefined();
    expect([out.pageAligned, out.zeroed, out.rangeAt]).toEqual([true, true, 40]);
    // Marked untransferable: Node 20 copies, later Nodes refuse; none detaches.
    expect(out.outcomes).toMatch(
      /^structuredClone:(kept|DataCloneError) postMessage:(kept|DataCloneError)( transfer:TypeError)?$/,
    );
    expect(out.lastByte).toBe('5a');
    expect(out.afterDereg).toBe('5a/11');
    expect(out.roundTrip).toBe(0);
    // The bound memory is marked too: nothing detached, every call still works.
    expect(out.detach).toMatch(
      /^poll:(TypeError|kept) post:(TypeError|kept) block:(TypeError|kept)$/,
    );
    expect(out.after).toBe('ok | ok | ok');
  });

  it('on Node 22 (transfer() ignores the mark): allocMr refuses, detached bound memory is EBADF', () => {
    const out = misuse(node22());
    expect(out.path).toEqual({ path: 'v8', reason: 'compile-time', externalAvailable: false });
    expect(out.allocMr).toBe('VerbsArgumentError length');
    expect(out.roundTrip).toBe('not run');
    expect(out.detach).toBe('poll:detached post:detached block:detached');
    expect(out.after).toBe('VerbsError EBADF | VerbsError EBADF | VerbsError EBADF');
  });

  it(`verbs kernel tests pass on it (${VERBS_FILES.length} files)`, () => {
    const report = mkdtempSync(join(tmpdir(), 'no-external-verbs-'));
    try {
      const file = join(report, 'kernel.json');
      const r = spawnSync(
        process.execPath,
        [
          'node_modules/vitest/vitest.mjs',
          'run',
          '--project',
          'kernel',
          '--reporter=json',
          `--outputFile.json=${file}`,
          ...VERBS_FILES,
        ],
        { encoding: 'utf8', timeout: 240_000, env: variantEnv() },
      );
      const json = JSON.parse(readFileSync(file, 'utf8')) as {
        numTotalTests: number;
        numPassedTests: number;
        testResults: { name: string; status: string }[];
      };
      expect(json.testResults.map((t) => basename(t.name)).sort()).toEqual(
        VERBS_FILES.map((f) => basename(f)).sort(),
      );
      expect(json.numPassedTests, r.stderr.slice(-4000)).toBe(json.numTotalTests);
      expect(r.status).toBe(0);
    } finally {
      rmSync(report, { recursive: true, force: true });
    }
  }, 300_000);

  it('a selection of the suite passes on it, judged against the engine', () => {
    const report = mkdtempSync(join(tmpdir(), 'no-external-suite-'));
    try {
      const r = spawnSync(
        process.execPath,
        [
          join(DIST, 'cli/main.js'),
          'run',
          '--runtime',
          'host',
          '--scenario',
          SELECTION,
          '--report',
          report,
        ],
        { encoding: 'utf8', timeout: 240_000, env: variantEnv() },
      );
      expect(r.status, r.stderr).toBe(0);
      const results = JSON.parse(readFileSync(join(report, 'results.json'), 'utf8')) as {
        scenarios: { id: string }[];
        totals: { passed: number };
      };
      expect(results.scenarios.map((s) => s.id).sort()).toEqual([
        'rxe-fetch-add',
        'rxe-fetch-add-ex',
        'rxe-write-imm',
        'siw-read',
        'siw-write',
      ]);
      expect(results.totals.passed).toBe(5);
    } finally {
      rmSync(report, { recursive: true, force: true });
    }
  }, 300_000);
});
