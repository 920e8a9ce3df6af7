/**
 * Issue 8, worker teardown: a worker thread that ends while an fd watcher (the engine
 * of `cq.next()` and of every rdma_cm wait) is armed used to segfault the whole process
 * (the watcher's uv_close callback ran after Node had unloaded the addon with the
 * worker's environment). The reproducer runs in a child process, on a FIFO that never
 * becomes readable, so it needs no RDMA device; the kernel suite repeats it with a real
 * CQ and rdma_cm channel (test/kernel/verbs/worker.test.ts).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ADDON = resolve('build/Release/rdma_interop.node');

// The child: a worker loads the addon on its own (the main thread never does, so the
// worker's exit really unloads it), arms a watcher, then ends the way `how` says.
const CHILD = `
const { Worker } = require('node:worker_threads');
const { execFileSync } = require('node:child_process');
const [how, addonPath, dir] = process.argv.slice(1);
const fifo = dir + '/never-readable';
execFileSync('mkfifo', [fifo]);
const body = \`
  const { workerData, parentPort } = require('node:worker_threads');
  const fs = require('node:fs');
  const addon = require(workerData.addonPath);
  // one FIFO reader per watcher (epoll takes an fd once), and a writer so none is readable
  const reader = () => fs.openSync(workerData.fifo, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
  const first = reader();
  fs.openSync(workerData.fifo, fs.constants.O_WRONLY | fs.constants.O_NONBLOCK);
  new addon.NativeFdWatcher(first, () => {}).start();
  for (let i = 0; i < 7; i++) new addon.NativeFdWatcher(reader(), () => {}).start();
  // one closed explicitly just before the end: its close callback is still queued
  const closing = new addon.NativeFdWatcher(reader(), () => {});
  closing.start();
  parentPort.postMessage('armed');
  if (workerData.how === 'exit') setTimeout(() => { closing.close(); process.exit(3); }, 10);
  else setInterval(() => {}, 1000);
\`;
const worker = new Worker(body, { eval: true, workerData: { how, addonPath, fifo } });
worker.on('message', () => {
  if (how === 'terminate') setTimeout(() => void worker.terminate(), 10);
});
worker.on('exit', (code) => {
  setTimeout(() => console.log('main thread alive after worker exit ' + code), 50);
});
`;

// The child of the second case: a worker is terminated while a native call is raising a
// typed error (the addon builds it by calling the registered JS class, which spins here
// until the termination arrives). N-API can neither run the constructor nor throw once
// the environment is ending; the addon aborted the process there, in
// Napi::Error::Error (FATAL ERROR ... napi_define_properties) or with "terminate called
// after throwing an instance of 'Napi::Error'", as one `bench verbs` run did while its
// write-with-immediate workers were terminated.
const CHILD_THROWING = `
const { Worker } = require('node:worker_threads');
const [, addonPath] = process.argv.slice(1);
const body = \`
  const { parentPort, workerData } = require('node:worker_threads');
  const addon = require(workerData.addonPath);
  class Spinning { constructor() { parentPort.postMessage('inside'); for (;;) {} } }
  addon.setVerbsErrorClass(Spinning, Spinning);
  new addon.NativeFdWatcher('not an fd', () => {});
\`;
const worker = new Worker(body, { eval: true, workerData: { addonPath } });
worker.on('message', () => setTimeout(() => void worker.terminate(), 20));
worker.on('exit', (code) => {
  setTimeout(() => console.log('main thread alive after worker exit ' + code), 50);
});
`;

function runChild(how: 'exit' | 'terminate' | 'throwing'): {
  status: number | null;
  signal: string | null;
  stdout: string;
} {
  const dir = mkdtempSync(join(tmpdir(), 'rdma-interop-worker-'));
  try {
    const script = how === 'throwing' ? CHILD_THROWING : CHILD;
    const r = spawnSync(process.execPath, ['-e', script, how, ADDON, dir], {
      encoding: 'utf8',
      timeout: 30_000,
    });
    return { status: r.status, signal: r.signal, stdout: r.stdout };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('a worker thread ending with armed fd watchers', () => {
  it('process.exit() in the worker leaves the process alive (was SIGSEGV)', () => {
    const r = runChild('exit');
    expect(r.signal).toBeNull();
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('main thread alive after worker exit 3');
  });

  it('worker.terminate() leaves the process alive (was SIGSEGV)', () => {
    const r = runChild('terminate');
    expect(r.signal).toBeNull();
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('main thread alive after worker exit 1');
  });

  it('worker.terminate() while a native call raises a typed error leaves the process alive (was SIGABRT)', () => {
    const r = runChild('throwing');
    expect(r.signal).toBeNull();
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('main thread alive after worker exit 1');
  });
});
