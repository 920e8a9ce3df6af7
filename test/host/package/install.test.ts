/**
 * The packed tarball installed the way a user installs it (`npm install <tarball>` in a
 * fresh project) on a machine with no compiler: PATH holds node and npm only, no cc, g++,
 * make or python3. With the prebuilt addon the verbs layer loads it; with the addon
 * missing entirely the install still succeeds, the codec, the engine and the root entry
 * point work, and the verbs layer's first call throws AddonUnavailableError naming the fix.
 * The install with the prebuild runs the README's own `npm install <tarball>` line ("Getting
 * it"), so the command the docs give is the one tested.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allBlocks } from '../docs/examples.js';

const ROOT = process.cwd();
const work = mkdtempSync(join(tmpdir(), 'rdma-interop-install-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** What builds native code: compilers, make, the linker and assembler, python (node-gyp). */
const TOOLCHAIN =
  /^(cc|c\+\+|c89|c99|cpp|gcc|g\+\+|clang|clang\+\+|make|gmake|ld|as|python|python3)([.-].*)?$|^x86_64-linux-gnu-/;

/**
 * This machine's PATH without a toolchain: one directory of links to every program on
 * PATH except TOOLCHAIN (a machine with no compiler still has sh, tar, node and npm).
 */
function compilerFreePath(): string {
  const bin = join(work, 'bin');
  mkdirSync(bin, { recursive: true });
  for (const dir of (process.env.PATH ?? '').split(':').filter((d) => d !== '')) {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      continue;
    }
    for (const name of names) {
      if (TOOLCHAIN.test(name) || existsSync(join(bin, name))) continue;
      try {
        symlinkSync(join(dir, name), join(bin, name));
      } catch {
        // a name seen twice in one directory listing race: first wins
      }
    }
  }
  return bin;
}

/** `npm pack` of the checkout as built by set-up (dist/ and the prebuild present). */
function pack(): string {
  const out = execFileSync(
    'npm',
    ['pack', '--ignore-scripts', '--json', '--pack-destination', work],
    {
      cwd: ROOT,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    },
  );
  const [report] = JSON.parse(out) as [{ filename: string }];
  return join(work, report.filename);
}

/** The same tarball without prebuilds/: the addon missing entirely. */
function withoutPrebuild(tarball: string): string {
  const dir = join(work, 'unpacked');
  mkdirSync(dir);
  execFileSync('tar', ['-xzf', tarball, '-C', dir]);
  rmSync(join(dir, 'package', 'prebuilds'), { recursive: true });
  const out = join(work, 'no-prebuild.tgz');
  execFileSync('tar', ['-czf', out, '-C', dir, 'package']);
  return out;
}

let PATH = '';
let tarball = '';
beforeAll(() => {
  PATH = compilerFreePath();
  tarball = pack();
}, 120_000);

/**
 * The README's install line: the `npm install <...>.tgz` of its "Getting it" block (the one
 * whose not-run reason names this test).
 */
function readmeInstallLine(): string {
  const block = allBlocks().find(
    (b) => b.file === 'README.md' && b.attributes.includes('install.test.ts'),
  );
  const line = block?.code.split('\n').find((l) => /^npm install \S+\.tgz\s*$/.test(l));
  if (line === undefined) throw new Error('README.md has no "npm install <tarball>.tgz" line');
  return line.trim();
}

/**
 * A fresh project with the tarball installed through the compiler-free PATH, by `command`
 * (default: the README's line) with its tarball path replaced by `from`. No audit, no fund
 * message and the npm cache first, through npm's environment, so the command stays as given.
 */
function installInFreshProject(name: string, from: string, command = readmeInstallLine()) {
  const app = join(work, name);
  mkdirSync(app);
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name, private: true, type: 'module' }));
  const r = spawnSync('sh', ['-c', command.replace(/\S+\.tgz/, `'${from}'`)], {
    cwd: app,
    encoding: 'utf8',
    env: {
      ...process.env,
      PATH,
      npm_config_loglevel: 'error',
      npm_config_audit: 'false',
      npm_config_fund: 'false',
      npm_config_prefer_offline: 'true',
    },
    timeout: 240_000,
  });
  return { app, ...r };
}

function runIn(app: string, source: string) {
  writeFileSync(join(app, 'check.mjs'), source);
  return spawnSync('node', ['check.mjs'], {
    cwd: app,
    encoding: 'utf8',
    env: { ...process.env, PATH },
  });
}

/** Decodes an RFC 7306 FetchAdd Atomic Request; prints its Add Data. */
const CODEC_CHECK = `
import { decodeRdmapMessage, encodeRdmapMessage, makeAtomicRequest } from 'rdma-interop/codec';
const request = makeAtomicRequest({ operation: 'fetch-add', messageSequenceNumber: 1,
  requestIdentifier: 7, remoteSTag: 0x1234, remoteTaggedOffset: 0x7f0000001008n,
  addOrSwapData: 0x0123456789abcdefn });
const decoded = decodeRdmapMessage(encodeRdmapMessage(request));
console.log(decoded.ok ? decoded.value.addOrSwapData.toString(16) : decoded.error.message);
`;

describe('npm install of the tarball with no compiler', () => {
  it("the README's install line names the tarball npm pack writes", () => {
    expect(readmeInstallLine()).toMatch(/^npm install \S+\.tgz$/);
    expect(basename(readmeInstallLine().split(' ')[2] ?? '')).toBe(basename(tarball));
  });

  it('there is no compiler on the PATH used', () => {
    const r = spawnSync(
      'sh',
      ['-c', 'command -v cc || command -v g++ || command -v make || command -v python3'],
      {
        env: { PATH },
        encoding: 'utf8',
      },
    );
    expect(r.stdout).toBe('');
    expect(r.status).not.toBe(0);
  });

  it('with the prebuilt addon: the codec works and verbs loads the prebuild', () => {
    const { app, status, stderr } = installInFreshProject('with-prebuild', tarball);
    expect(status, stderr).toBe(0);
    const pkgDir = join(app, 'node_modules', 'rdma-interop');
    expect(readdirSync(join(pkgDir, 'prebuilds', 'linux-x64'))).toEqual([
      'rdma-interop.glibc.node',
    ]);
    expect(existsSync(join(pkgDir, 'build')), 'no source build was attempted').toBe(false);
    const codec = runIn(app, CODEC_CHECK);
    expect(codec.stderr).toBe('');
    expect(codec.stdout).toBe('123456789abcdef\n');
    const verbs = runIn(
      app,
      "import { listDevices } from 'rdma-interop/verbs'; console.log(Array.isArray(listDevices()));",
    );
    expect(verbs.stderr).toBe('');
    expect(verbs.stdout).toBe('true\n');
    const cli = spawnSync('npx', ['--no', 'rdma-interop', '--version'], {
      cwd: app,
      encoding: 'utf8',
      env: { ...process.env, PATH },
    });
    expect(cli.stdout).toMatch(/^\d+\.\d+\.\d+\n$/);
  }, 300_000);

  it('with the addon missing entirely: the install succeeds, the pure layers work, verbs says how to fix it', () => {
    const { app, status, stderr } = installInFreshProject('no-addon', withoutPrebuild(tarball));
    expect(status, stderr).toBe(0);
    const codec = runIn(app, CODEC_CHECK);
    expect(codec.stderr).toBe('');
    expect(codec.stdout).toBe('123456789abcdef\n');
    const root = runIn(
      app,
      `import { engine, RdmaInteropError, verbs } from 'rdma-interop';
       console.log(typeof engine.projectVerbs);
       try { verbs.listDevices(); console.log('loaded?'); }
       catch (e) { console.log(e instanceof RdmaInteropError, e.name, e.reason, e.fix.split(' (')[0]); }`,
    );
    expect(root.stderr).toBe('');
    expect(root.stdout).toBe(
      'function\ntrue AddonUnavailableError missing npm rebuild rdma-interop\n',
    );
  }, 300_000);
});
