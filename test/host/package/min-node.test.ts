/**
 * `engines.node` is true: the lowest version it names (installed from the npm registry by
 * scripts/ci/min-node.sh into the cache, a set-up step) imports every entry point, runs
 * the CLI, loads the addon and runs the host documentation examples. Vitest itself needs
 * a newer Node, so this test drives that binary from outside.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  allBlocks,
  EXAMPLES_DIR,
  needsDevices,
  ROOT,
  runModule,
  transpileBlock,
} from '../docs/examples.js';

const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  engines: { node: string };
  exports: Record<string, unknown>;
};
const version = pkg.engines.node.replace(/^>=\s*/, '');
const cache = process.env.RDMA_INTEROP_CACHE ?? join(ROOT, '.cache');
const NODE = join(cache, `node-v${version}`, 'bin', 'node');

function run(args: readonly string[]) {
  if (!existsSync(NODE))
    throw new Error(`${NODE} is missing: run bash scripts/setup.sh (scripts/ci/min-node.sh)`);
  const r = spawnSync(NODE, args, { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe(`the lowest Node version engines.node claims (${pkg.engines.node})`, () => {
  it('is the binary under test', () => {
    expect(run(['--version']).stdout).toBe(`v${version}\n`);
  });

  it.each(Object.keys(pkg.exports))('imports %s', (entry) => {
    const specifier = entry === '.' ? 'rdma-interop' : `rdma-interop/${entry.slice(2)}`;
    const options = entry.endsWith('.json') ? ", { with: { type: 'json' } }" : '';
    const r = run([
      '--no-warnings',
      '--input-type=module',
      '-e',
      `const m = await import('${specifier}'${options}); console.log(Object.keys(m).length);`,
    ]);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(Number(r.stdout)).toBeGreaterThan(0);
  });

  it('runs the CLI: --version, run --list, decode of a real capture', () => {
    const cli = join(ROOT, 'dist', 'cli', 'main.js');
    expect(run([cli, '--version']).status).toBe(0);
    expect(run([cli, 'run', '--list']).stdout).toMatch(
      /^siw-fetch-add\tsiw0\tpost_send\tatomics\tFetchAdd$/m,
    );
    const decoded = run([cli, 'decode', 'test/fixtures/siw-rping.pcap']);
    expect(decoded.stderr).toBe('');
    expect(decoded.stdout).toMatch(/1 iWARP connections, 7 FPDUs, 0 problems/);
  });

  it('loads the addon (N-API: the same binary) and lists devices', () => {
    const r = run([
      '--input-type=module',
      '-e',
      "const { listDevices } = await import('rdma-interop/verbs'); console.log(JSON.stringify(listDevices().map((d) => d.name)));",
    ]);
    expect(r.stderr).toBe('');
    expect(Array.isArray(JSON.parse(r.stdout))).toBe(true);
  });

  const hostExamples = allBlocks().filter((b) => b.language === 'ts' && !needsDevices(b));
  it.each(hostExamples.map((b) => [b.id, b] as const))('runs the example %s', async (_id, b) => {
    const file = await transpileBlock(b, join(EXAMPLES_DIR, 'min-node'));
    const r = runModule(file, NODE);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
  });
});
