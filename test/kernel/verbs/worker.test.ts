/**
 * Issue 8, worker teardown with real devices: a worker thread ends (process.exit in the
 * worker, worker.terminate()) while `cq.next()` and an rdma_cm wait are pending. This
 * segfaulted the process (9 of 9 runs); worker threads are supported (docs/verbs.md,
 * "Worker threads"). The child process loads the built package (dist/) in a worker.
 */
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const VERBS = resolve('dist/verbs/index.js');

const CHILD = `
const { Worker } = require('node:worker_threads');
const [how, verbsPath] = process.argv.slice(1);
const body = \`
  const { workerData, parentPort } = require('node:worker_threads');
  import(workerData.verbsPath).then(async (verbs) => {
    const ctx = verbs.openDevice('rxe0');
    const cq = ctx.createCq({ cqe: 8, channel: true });
    const channel = new verbs.EventChannel();
    const listener = channel.createId();
    listener.bindAddr('192.0.2.1', 0);
    listener.listen();
    const pending = [cq.next(), listener.nextConnectRequest()];
    pending.forEach((p) => p.catch(() => {}));
    parentPort.postMessage('waiting');
    if (workerData.how === 'exit') setTimeout(() => process.exit(3), 20);
  });
\`;
const worker = new Worker(body, { eval: true, workerData: { how, verbsPath } });
worker.on('message', (m) => {
  console.log('worker ' + m);
  if (how === 'terminate') setTimeout(() => void worker.terminate(), 20);
});
worker.on('error', (e) => console.log('worker error ' + e.message));
worker.on('exit', (code) => {
  setTimeout(() => console.log('main thread alive after worker exit ' + code), 50);
});
`;

function runChild(how: 'exit' | 'terminate') {
  return spawnSync(process.execPath, ['-e', CHILD, how, VERBS], {
    encoding: 'utf8',
    timeout: 60_000,
  });
}

describe('a worker thread ending with cq.next() and an rdma_cm wait pending', () => {
  for (const [how, code] of [
    ['exit', 3],
    ['terminate', 1],
  ] as const) {
    it(`${how}: the process survives and the worker's exit code is seen`, () => {
      const r = runChild(how);
      expect(r.signal).toBeNull();
      expect(r.stdout).toContain('worker waiting');
      expect(r.stdout).toContain(`main thread alive after worker exit ${code}`);
      expect(r.status).toBe(0);
    });
  }
});
