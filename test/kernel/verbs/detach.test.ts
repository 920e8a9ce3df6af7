/**
 * Issue 8, detached memory: the ArrayBuffer behind a registered Buffer could be
 * transferred away (structuredClone with a transfer list, a worker postMessage) and
 * freed; RDMA Writes then landed in the heap (malloc corruption, SIGSEGV, 5 of 6 runs).
 * The reproducer runs in a child process: register, try every transfer, drop and
 * collect the copies, then RDMA-write the whole MR many times and allocate.
 */
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const VERBS = resolve('dist/verbs/index.js');

const CHILD = `
const [verbsPath, how] = process.argv.slice(1);
const { MessageChannel } = require('node:worker_threads');
import(verbsPath).then(async (v) => {
  const ctx = v.openDevice('rxe0');
  const gid = ctx.findGid({ type: 'RoCEv2', ipv4: '192.0.2.1' });
  const pd = ctx.allocPd();
  const cq = ctx.createCq({ cqe: 64 });
  const a = pd.createQp({ sendCq: cq });
  const b = pd.createQp({ sendCq: cq });
  v.connectPairByHand(a, b, gid, { aPsn: 1, bPsn: 2 });
  const SIZE = 1 << 20;
  const target = how === 'alloc'
    ? pd.allocMr(SIZE, ['LOCAL_WRITE', 'REMOTE_WRITE'])
    : pd.regMr(Buffer.alloc(SIZE), ['LOCAL_WRITE', 'REMOTE_WRITE']);
  const source = pd.allocMr(SIZE, ['LOCAL_WRITE']);
  source.buffer.fill(0x5a);
  const ab = target.buffer.buffer;
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
  console.log('outcomes ' + outcomes.join(' '));
  for (let i = 0; i < 6; i++) { globalThis.gc(); await new Promise((r) => setTimeout(r, 20)); }
  for (let round = 0; round < 20; round++) {
    a.postSend({ opcode: 'RDMA_WRITE', sgList: [source.sge()], remote: target.remote() });
    const [wc] = cq.pollUntil(1);
    if (!wc.ok) throw new Error('write failed: ' + wc.status);
    const junk = [];
    for (let i = 0; i < 2000; i++) junk.push(Buffer.alloc(512, i));
  }
  const view = target.buffer.buffer.byteLength === 0 ? 'detached' : target.buffer[SIZE - 1].toString(16);
  target.close();
  for (let i = 0; i < 4; i++) { globalThis.gc(); await new Promise((r) => setTimeout(r, 20)); }
  console.log('writes done, last byte ' + view + ', deregistered ' + target.closed);
  a.close(); b.close(); source.close(); cq.close(); pd.close(); ctx.close();
});
`;

function runChild(how: 'reg' | 'alloc') {
  return spawnSync(process.execPath, ['--expose-gc', '-e', CHILD, VERBS, how], {
    encoding: 'utf8',
    timeout: 90_000,
  });
}

describe('registered memory cannot be freed by a transfer', () => {
  it('regMr(Buffer): every transfer leaves the memory in place; writes land in it', () => {
    const r = runChild('reg');
    expect(r.stderr).toBe('');
    expect(r.signal).toBeNull();
    expect(r.status).toBe(0);
    // Node 20 copies an untransferable ArrayBuffer instead of moving it; later Nodes refuse.
    expect(r.stdout).toMatch(
      /outcomes structuredClone:(kept|DataCloneError) postMessage:(kept|DataCloneError)/,
    );
    expect(r.stdout).not.toContain('detached');
    expect(r.stdout).toContain('writes done, last byte 5a, deregistered true');
  });

  it('allocMr(length): transferred away or not, the memory outlives the registration', () => {
    const r = runChild('alloc');
    expect(r.stderr).toBe('');
    expect(r.signal).toBeNull();
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/outcomes structuredClone:\w+ postMessage:\w+/);
    expect(r.stdout).toMatch(/writes done, last byte (5a|detached), deregistered true/);
  });
});
