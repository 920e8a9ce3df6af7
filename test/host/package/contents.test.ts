/**
 * What `npm pack` puts in the tarball, against the rules (docs/contributing.md): the
 * compiled JavaScript and its types (no source maps: the sources are not shipped), the
 * prebuilt linux-x64 addon and what a source build needs, the scripts the runtime uses,
 * docs/ and LICENSE; no tests, no test helpers, no stale outputs of deleted sources.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = process.cwd();
const PREBUILD = 'prebuilds/linux-x64/rdma-interop.glibc.node';

interface PackageJson {
  readonly name: string;
  readonly license: string;
  readonly repository?: { readonly type: string; readonly url: string };
  readonly os?: readonly string[];
  readonly cpu?: readonly string[];
  readonly engines: { readonly node: string };
  readonly bin: Record<string, string>;
  readonly exports: Record<string, string | { types: string; default: string }>;
  readonly scripts: Record<string, string>;
}
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as PackageJson;

/** The tarball's file list, as `npm pack --dry-run --json` reports it (nothing rebuilt). */
function packedFiles(): string[] {
  if (!existsSync(join(ROOT, PREBUILD)))
    throw new Error(`${PREBUILD} is missing: run bash scripts/setup.sh (scripts/ci/prebuild.sh)`);
  const out = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
    cwd: ROOT,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const [report] = JSON.parse(out) as [{ files: { path: string }[] }];
  return report.files.map((f) => f.path).sort();
}

const files = packedFiles();
const shipped = new Set(files);

/** Each shipped file matches exactly one of these, with the reason it ships. */
const RULES: readonly [RegExp, string][] = [
  [/^(package\.json|README\.md|LICENSE)$/, 'npm metadata, the README, the MIT licence text'],
  [/^dist\/.+\.(js|d\.ts)$/, 'the compiled library, CLI and benchmarks (`rdma-interop bench`)'],
  [/^docs\/[^/]+\.md$/, 'the documentation the README links to'],
  [/^docs\/ci\/[^/]+\.yml$/, 'the CI workflow docs/ci.md links to, for users to copy'],
  [/^prebuilds\/linux-x64\/rdma-interop\.glibc\.node$/, 'the prebuilt N-API addon'],
  [/^(binding\.gyp|native\/[^/]+\.(cc|h))$/, 'the source build, when the prebuild does not load'],
  [
    /^scripts\/(guest|setup|lib)\/[^/]+$|^scripts\/rdma-devices\.sh$/,
    'guest assets and boot (runtime)',
  ],
  [/^scripts\/coverage\/rdma_cov\.c$/, 'the block-coverage collector coverage-modules.sh builds'],
];

describe('npm pack contents', () => {
  it('every file is there by a rule', () => {
    const unexplained = files.filter((f) => !RULES.some(([rule]) => rule.test(f)));
    expect(unexplained).toEqual([]);
  });

  it('no source maps, tests, test helpers, fuzzers or sources', () => {
    expect(files.filter((f) => f.endsWith('.map'))).toEqual([]);
    expect(files.filter((f) => /^(test|bench|src)\/|^dist\/(testing|fuzz)\//.test(f))).toEqual([]);
  });

  it('every compiled file comes from a current source (no stale outputs of deleted files)', () => {
    const stale = files
      .filter((f) => f.startsWith('dist/'))
      .map((f) => f.replace(/^dist\//, 'src/').replace(/\.(js|d\.ts)$/, '.ts'))
      .filter((source) => !existsSync(join(ROOT, source)));
    expect(stale).toEqual([]);
  });

  it('LICENSE is the MIT licence package.json names; every doc and the prebuild are in', () => {
    expect(pkg.license).toBe('MIT');
    expect(readFileSync(join(ROOT, 'LICENSE'), 'utf8')).toMatch(/^MIT License\n/);
    const docs = readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md'));
    for (const f of ['LICENSE', 'README.md', PREBUILD, ...docs.map((d) => `docs/${d}`)])
      expect(shipped, f).toContain(f);
  });

  it('every export target, the bin and every source-build input is shipped', () => {
    const targets = Object.values(pkg.exports).flatMap((e) =>
      typeof e === 'string' ? [e] : [e.types, e.default],
    );
    for (const t of [...targets, ...Object.values(pkg.bin)])
      expect(shipped, t).toContain(normalize(t));
    for (const f of readdirSync(join(ROOT, 'native')))
      expect(shipped, `native/${f}`).toContain(`native/${f}`);
  });

  it('relative links in the shipped Markdown resolve inside the package', () => {
    // Repository-only targets, each with why it is not shipped.
    const repositoryOnly: Record<string, string> = {
      'docker/README.md': 'the image builds from a checkout, not from the package',
      'docs/report-html.png': 'a screenshot: the package ships the text of the docs only',
      'docs/report-html-matrix.png': 'a screenshot: the package ships the text of the docs only',
    };
    const broken: string[] = [];
    for (const md of files.filter((f) => f.endsWith('.md'))) {
      const text = readFileSync(join(ROOT, md), 'utf8');
      for (const [, target] of text.matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)) {
        if (target === undefined || /^[a-z]+:/.test(target)) continue;
        const path = normalize(join(dirname(md), target));
        if (!shipped.has(path) && !Object.hasOwn(repositoryOnly, path))
          broken.push(`${md} -> ${target}`);
      }
    }
    expect(broken).toEqual([]);
  });
});

describe('package.json says what is true', () => {
  it('Linux x64 only: the prebuild, the QEMU guest (amd64 kernel) and libibverbs are', () => {
    expect(pkg.os).toEqual(['linux']);
    expect(pkg.cpu).toEqual(['x64']);
  });

  it('names its repository and exports ./package.json', () => {
    expect(pkg.repository?.type).toBe('git');
    expect(pkg.repository?.url).toMatch(/^git\+https:\/\/.+\.git$/);
    expect(pkg.exports['./package.json']).toBe('./package.json');
  });

  it('engines names an exact lowest version (proved by min-node.test.ts)', () => {
    expect(pkg.engines.node).toMatch(/^>=\d+\.\d+\.\d+$/);
  });

  it('the install step never fails: prebuild or source build, else a note', () => {
    expect(pkg.scripts.install).toMatch(/^node-gyp-build \|\| /);
  });
});
