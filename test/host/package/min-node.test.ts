/**
 * The bounded host passes on the Node versions CI proves besides its own (Node 26,
 * scripts/test.sh): the floor engines.node claims (so `engines` is proved, not claimed)
 * and the maintenance LTS, both named once (test/helpers/node-versions.ts) and installed
 * from the npm registry into the cache at set-up (scripts/ci/min-node.sh). Each imports
 * every entry point, runs the CLI, loads the addon, runs the host documentation examples
 * and the codec and engine unit tests. This file's vitest runs on CI's Node, so it drives
 * those binaries from outside, one child process each.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FLOOR, MAINTENANCE, nodeBinary } from '../../helpers/node-versions.js';
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

/**
 * The unit tests of the two layers that never load the addon (pure TypeScript: bit
 * layouts, CRCs, bigint arithmetic, the RFC 7306 state machines), where a V8 difference
 * would show first: 29 files, 316 tests, 6 s per version on the idle 2-core CI machine
 * (18-20 s at load 13).
 */
const UNIT_TESTS = ['test/host/engine', 'test/host/codec/iwarp', 'test/host/codec/roce'];

/** This process's environment without vitest's own markers, for a vitest of its own. */
function childEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.startsWith('VITEST')),
  );
}

interface VitestJson {
  numTotalTests: number;
  numPassedTests: number;
  numFailedTests: number;
  testResults: { name: string; status: string }[];
}

describe.each([
  ['the floor engines.node claims', FLOOR],
  ['the maintenance LTS', MAINTENANCE],
])('%s: Node %s', (_role, version) => {
  function run(args: readonly string[], timeout = 60_000) {
    const r = spawnSync(nodeBinary(version), args, {
      cwd: ROOT,
      encoding: 'utf8',
      timeout,
      env: childEnv(),
    });
    return { status: r.status, stdout: r.stdout, stderr: r.stderr };
  }

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

  it(`runs the codec and engine unit tests (${UNIT_TESTS.join(', ')})`, () => {
    const dir = mkdtempSync(join(tmpdir(), `unit-node-${version}-`));
    try {
      const out = join(dir, 'unit.json');
      const r = run(
        [
          join(ROOT, 'node_modules', 'vitest', 'vitest.mjs'),
          'run',
          '--project',
          'host',
          '--reporter=json',
          `--outputFile.json=${out}`,
          ...UNIT_TESTS,
        ],
        120_000,
      );
      expect(r.status, r.stderr).toBe(0);
      const report = JSON.parse(readFileSync(out, 'utf8')) as VitestJson;
      expect(report.numFailedTests).toBe(0);
      expect(report.numPassedTests).toBe(report.numTotalTests);
      expect(report.numTotalTests).toBeGreaterThan(100);
      for (const prefix of UNIT_TESTS)
        expect(report.testResults.some((f) => f.name.includes(`/${prefix}/`))).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 150_000);

  const hostExamples = allBlocks().filter((b) => b.language === 'ts' && !needsDevices(b));
  it.each(hostExamples.map((b) => [b.id, b] as const))('runs the example %s', async (_id, b) => {
    const file = await transpileBlock(b, join(EXAMPLES_DIR, `node-${version}`));
    const r = runModule(file, nodeBinary(version));
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
  });
});
