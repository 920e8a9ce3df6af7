/**
 * The command line's conventions (src/cli/main.ts), on the built CLI as a user runs it:
 * usage errors exit 2 with one line on stderr and nothing started; user errors exit 1
 * with one line and no stack trace; `--version` prints package.json's version.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { itUnless } from '../../helpers/not-run.js';

const CLI = join(process.cwd(), 'dist', 'cli', 'main.js');

function cli(args: readonly string[], env: NodeJS.ProcessEnv = {}) {
  const r = spawnSync(process.execPath, [CLI, ...args], {
    encoding: 'utf8',
    env: { ...process.env, ...env },
    timeout: 30_000,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** No stack frame ("    at f (file:line)") and no Node error banner. */
function expectNoStackTrace(stderr: string): void {
  expect(stderr).not.toMatch(/^\s+at /m);
  expect(stderr).not.toMatch(/node:internal|Node\.js v\d/);
}

describe('rdma-interop usage errors: exit 2, one line, before any work', () => {
  const cases: readonly [string, readonly string[], RegExp][] = [
    [
      'unknown benchmark suite',
      ['bench', 'bogus'],
      /^rdma-interop bench: error: .*'bogus'.*Allowed choices are codec, engine, verbs/,
    ],
    [
      'non-numeric --timeout',
      ['run', '--timeout', 'abc'],
      /^rdma-interop run: error: option '--timeout <seconds>' argument 'abc' is invalid\. Expected a positive number of seconds/,
    ],
    [
      'negative --timeout',
      ['run', '--timeout', '-5'],
      /^rdma-interop run: error: .*'--timeout <seconds>'/,
    ],
    [
      'unknown --runtime',
      ['run', '--runtime', 'moon'],
      /^rdma-interop run: error: .*Allowed choices are auto, host, guest/,
    ],
    ['unknown command', ['bogus'], /^rdma-interop: error: unknown command 'bogus'/],
    [
      'unknown option',
      ['devices', '--bogus'],
      /^rdma-interop devices: error: unknown option '--bogus'/,
    ],
    [
      'missing argument',
      ['decode'],
      /^rdma-interop decode: error: missing required argument 'file'/,
    ],
    [
      'unknown decode profile',
      ['decode', '--profile', 'x', 'test/fixtures/siw-rping.pcap'],
      /^rdma-interop decode: error: option '--profile <profile>' argument 'x' is invalid\. Allowed choices are rfc7306, draft-01, v2-draft\./,
    ],
    [
      'bad vm --cpus',
      ['vm', '--cpus', 'two', '--', 'true'],
      /^rdma-interop vm: error: option '--cpus <n>' argument 'two' is invalid/,
    ],
  ];
  it.each(cases)('%s', (_name, args, message) => {
    const r = cli(args);
    expect(r.status).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(message);
    expectNoStackTrace(r.stderr);
  });
});

describe('rdma-interop user errors: exit 1, one line, no stack trace', () => {
  it('decode of a file that does not exist', () => {
    const r = cli(['decode', '/nonexistent/capture.pcap']);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/cannot read \/nonexistent\/capture\.pcap: ENOENT/);
    expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
    expectNoStackTrace(r.stderr);
  });

  it('devices with the addon unavailable names the cause and the command that fixes it', () => {
    // node-gyp-build's <NAME>_PREBUILD override: look for the addon in an empty directory.
    const empty = mkdtempSync(join(tmpdir(), 'rdma-interop-no-addon-'));
    const r = cli(['devices'], { RDMA_INTEROP_PREBUILD: empty });
    expect(r.status).toBe(1);
    expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(
      /^rdma-interop devices: error: the rdma_interop addon is not available: no prebuilt binary for linux-x64 and no source build/,
    );
    expect(r.stderr).toMatch(/fix: npm run build:native/);
    expectNoStackTrace(r.stderr);
  });

  // On a host without RDMA devices (they live in the guest) an empty listing is a failure.
  // On a host with devices there is no empty listing to see: a listed skip
  // (test/expected-skips.json, condition host-has-rdma-devices).
  itUnless(hasRdmaDevices(), 'this host has RDMA devices')(
    'devices with no devices exits 1 and says so; --json stays valid JSON',
    () => {
      const table = cli(['devices']);
      expect(table.status).toBe(1);
      expect(table.stdout).toBe('');
      expect(table.stderr).toMatch(
        /^rdma-interop devices: error: no RDMA devices on this machine \(.*rdma-interop vm -- node .*main\.js devices\)\n$/,
      );
      const json = cli(['devices', '--json']);
      expect(json.status).toBe(1);
      expect(JSON.parse(json.stdout)).toEqual([]);
    },
  );
});

describe('rdma-interop --version and --help', () => {
  it('--version prints package.json version', () => {
    const { version } = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };
    for (const flag of ['--version', '-V']) {
      const r = cli([flag]);
      expect(r.status).toBe(0);
      expect(r.stdout).toBe(`${version}\n`);
    }
  });

  it('--help exits 0 and lists every command', () => {
    const r = cli(['--help']);
    expect(r.status).toBe(0);
    for (const command of ['devices', 'run', 'decode', 'bench', 'vm'])
      expect(r.stdout).toMatch(new RegExp(`^  ${command}\\b`, 'm'));
  });
});

function hasRdmaDevices(): boolean {
  try {
    return readdirSync('/sys/class/infiniband').length > 0;
  } catch {
    return false;
  }
}
