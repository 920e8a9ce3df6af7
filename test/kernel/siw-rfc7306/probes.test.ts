import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PairCheck } from '../../../src/probe/siw-pair-rfc7306.js';

// The patched siw.ko (patches/siw/, rfc7306=1) with the patched libsiw (patches/rdma-core/):
// siw against siw, verbs atomics and RDMA Write with Immediate, checked against the
// engine's results. It runs in a child process (src/probe/rfc7306-main.ts) that loads the
// patched libsiw; siw0 goes back to the stock module afterwards for the other kernel
// tests. The RFC 7306 wire probes from our iWARP peer are the tester's assertions
// (src/probe/iwarp-assertions.ts, run by test/host/interop/probe-kernels.test.ts).

interface Outcome {
  readonly pair: readonly PairCheck[] | { readonly error: string };
}

const root = process.env.RDMA_INTEROP_ROOT ?? process.cwd();
const siwModule = (kind: 'stock' | 'rfc7306'): void => {
  execFileSync('bash', [join(root, 'scripts/guest/siw-module.sh'), kind], { stdio: 'inherit' });
};

describe('patched siw0 (rfc7306=1): siw against siw', () => {
  let outcome: Outcome;
  beforeAll(() => {
    siwModule('rfc7306');
    expect(readFileSync('/sys/module/siw/parameters/rfc7306', 'utf8').trim()).toBe('Y');
    const rdmaCore = join(process.env.MODULES_ROOT ?? '', '..', 'siw-rfc7306-rdma-core');
    const out = execFileSync(process.execPath, [join(root, 'dist/probe/rfc7306-main.js')], {
      env: { ...process.env, LD_LIBRARY_PATH: join(rdmaCore, 'lib') },
      encoding: 'utf8',
      timeout: 300_000,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    outcome = JSON.parse(out.trim().split('\n').at(-1) ?? '{}') as Outcome;
  }, 320_000);
  afterAll(() => siwModule('stock'));

  for (const id of [
    'siw-pair-fetch-add',
    'siw-pair-cmp-swap-hit',
    'siw-pair-cmp-swap-miss',
    'siw-pair-write-with-imm',
  ]) {
    it(`${id}: siw against siw gives the engine's result`, () => {
      expect(outcome.pair).not.toHaveProperty('error');
      const check = (outcome.pair as readonly PairCheck[]).find((c) => c.id === id);
      expect(check?.kernel).toBe(check?.engine);
    });
  }
});
