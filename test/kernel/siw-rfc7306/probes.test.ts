import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Rfc7306Answer } from '../../../src/probe/rfc7306-probes.js';
import { RFC7306_PROBES } from '../../../src/probe/rfc7306-probes.js';
import type { PairCheck } from '../../../src/probe/siw-pair-rfc7306.js';

// The patched siw.ko (patches/siw/, rfc7306=1) with the patched libsiw (patches/rdma-core/):
// (1) our userspace iWARP peer sends RFC 7306 messages to siw0 as Responder, the engine
// answers the same with the same memory; siw's answer must be the engine's, or a recorded,
// explained finding (src/probe/rfc7306-known.ts); (2) siw against siw, verbs
// atomics and RDMA Write with Immediate, checked against the engine's results. Both run in
// a child process (src/probe/rfc7306-main.ts) that loads the patched libsiw; siw0
// goes back to the stock module afterwards for the other kernel tests.

interface ProbeOutcome {
  readonly id: string;
  readonly verdict: string;
  readonly kernel: Rfc7306Answer | undefined;
  readonly expected: Rfc7306Answer | undefined;
  readonly error: string | undefined;
}
interface Outcome {
  readonly probes: readonly ProbeOutcome[];
  readonly pair: readonly PairCheck[] | { readonly error: string };
}

const root = process.env.RDMA_INTEROP_ROOT ?? process.cwd();
const siwModule = (kind: 'stock' | 'rfc7306'): void => {
  execFileSync('bash', [join(root, 'scripts/guest/siw-module.sh'), kind], { stdio: 'inherit' });
};

describe('patched siw0 (rfc7306=1): wire probes from our iWARP peer, and siw against siw', () => {
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

  for (const probe of RFC7306_PROBES) {
    it(`${probe.id}: ${probe.title}`, () => {
      const result = outcome.probes.find((p) => p.id === probe.id);
      expect(result?.error).toBeUndefined();
      expect({ verdict: result?.verdict, kernel: result?.kernel }).toEqual({
        verdict: expect.stringMatching(/^(match|known)$/),
        kernel: result?.expected,
      });
    });
  }

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
