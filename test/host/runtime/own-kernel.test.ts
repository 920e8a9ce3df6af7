/**
 * A kernel of one's own (issue 24): `--kernel <bzImage> --modules <INSTALL_MOD_PATH tree>`.
 * The layout is built from Debian's 6.1 assets (the vmlinuz and its modules tree, which
 * is what `make modules_install INSTALL_MOD_PATH=` gives), so CI runs the path without
 * building a kernel: the release read from the image, the checks of what the guest needs,
 * and a bounded suite selection on rxe0 and siw0 in the guest booted from it.
 */
import { spawnSync } from 'node:child_process';
import {
  cpSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cacheRoot } from '../../../src/runtime/index.js';
import {
  imageRelease,
  ownKernelOf,
  prepareOwnKernel,
  REQUIRED_MODULES,
} from '../../../src/runtime/own-kernel.js';

const debian = realpathSync(join(cacheRoot(), 'guest', 'current'));
const release = debian.split('/').pop() ?? '';
const image = join(debian, 'vmlinuz');
const modules = join(debian, 'root');

describe('a kernel of one own: checks before any boot', () => {
  it("reads the release from the bzImage's header", () => {
    expect(release).toMatch(/^6\.1\.\d+-\d+-amd64$/);
    expect(imageRelease(image)).toBe(release);
    expect(() => imageRelease(join(debian, 'initramfs.cpio.gz'))).toThrow(/not an x86 bzImage/);
  });

  it('an image without --modules, or modules of another release, is a clear error', () => {
    expect(() => ownKernelOf(image, undefined)).toThrow(/name its modules with --modules/);
    const empty = mkdtempSync(join(tmpdir(), 'own-mods-'));
    expect(() => prepareOwnKernel({ image, modules: empty }, () => {})).toThrow(
      new RegExp(`has no lib/modules/${release.replace(/\./g, '\\.')}`),
    );
  });

  it('a kernel without rxe and siw is refused, naming the options that build them', () => {
    const tree = mkdtempSync(join(tmpdir(), 'own-mods-'));
    const moddir = join(tree, 'lib', 'modules', release);
    mkdirSync(moddir, { recursive: true });
    const dep = readFileSync(join(modules, 'lib', 'modules', release, 'modules.dep'), 'utf8');
    writeFileSync(
      join(moddir, 'modules.dep'),
      dep
        .split('\n')
        .filter((l) => !/(rdma_rxe|siw)\.ko/.test(l.split(':')[0] ?? ''))
        .join('\n'),
    );
    cpSync(
      join(modules, 'lib', 'modules', release, 'modules.builtin'),
      join(moddir, 'modules.builtin'),
    );
    expect(() => prepareOwnKernel({ image, modules: tree }, () => {})).toThrow(
      /lacks rdma_rxe, siw: build it with CONFIG_RDMA_RXE=m, CONFIG_RDMA_SIW=m/,
    );
    expect(REQUIRED_MODULES.map((m) => m.module)).toContain('virtio_console');
  });
});

describe('a kernel build tree without --modules: its own .ko files', () => {
  it('makes guest assets from the tree (its bzImage, its modules, depmod, an initramfs)', () => {
    // A stand-in build tree: a Makefile, arch/x86/boot/bzImage, and the .ko files the
    // guest needs with their dependencies, at their places in the tree (Debian's builds).
    const tree = mkdtempSync(join(tmpdir(), 'own-tree-'));
    const moddir = join(modules, 'lib', 'modules', release);
    const dep = new Map(
      readFileSync(join(moddir, 'modules.dep'), 'utf8')
        .split('\n')
        .filter((l) => l.includes(':'))
        .map((l) => {
          const [mod, deps] = l.split(':');
          return [mod ?? '', (deps ?? '').trim().split(/\s+/).filter(Boolean)] as const;
        }),
    );
    const wanted = new Set<string>();
    const add = (rel: string) => {
      if (wanted.has(rel)) return;
      wanted.add(rel);
      for (const d of dep.get(rel) ?? []) add(d);
    };
    for (const { module } of REQUIRED_MODULES) {
      const rel = [...dep.keys()].find((k) => k.endsWith(`/${module}.ko`));
      if (rel !== undefined) add(rel);
    }
    for (const rel of wanted) {
      const target = join(tree, rel.replace(/^(kernel|extra)\//, ''));
      mkdirSync(join(target, '..'), { recursive: true });
      cpSync(join(moddir, rel), target);
    }
    writeFileSync(join(tree, 'Makefile'), '# stand-in\n');
    mkdirSync(join(tree, 'arch', 'x86', 'boot'), { recursive: true });
    cpSync(image, join(tree, 'arch', 'x86', 'boot', 'bzImage'));
    cpSync(join(moddir, 'modules.builtin'), join(tree, 'modules.builtin'));

    const own = ownKernelOf(tree, undefined);
    expect(own?.image).toBe(join(tree, 'arch', 'x86', 'boot', 'bzImage'));
    const progress: string[] = [];
    const assets = prepareOwnKernel(own ?? { image }, (l) => progress.push(l));
    expect(progress.join('\n')).toMatch(/own kernel 6\.1\..* preparing guest assets/);
    const made = join(assets, 'root', 'lib', 'modules', release);
    expect(readFileSync(join(made, 'modules.dep'), 'utf8')).toMatch(/rdma_rxe\.ko:.*ib_core\.ko/);
    expect(readFileSync(join(assets, '.complete'), 'utf8')).toBe('own bzImage\n');
    // A second call finds the same assets without making them again.
    const again: string[] = [];
    expect(prepareOwnKernel(own ?? { image }, (l) => again.push(l))).toBe(assets);
    expect(again).toEqual([]);
    rmSync(dirname(assets), { recursive: true, force: true });
    rmSync(tree, { recursive: true, force: true });
  });
});

describe('a kernel of one own: the suite in the guest', () => {
  it('run --kernel <bzImage> --modules <dir>: boots it and runs rxe0 and siw0 scenarios', () => {
    const report = mkdtempSync(join(tmpdir(), 'own-kernel-report-'));
    const r = spawnSync(
      process.execPath,
      [
        'dist/cli/main.js',
        'run',
        '--runtime',
        'guest',
        '--kernel',
        image,
        '--modules',
        modules,
        '--scenario',
        '{rxe-fetch-add,rxe-write-imm,siw-write,siw-send}',
        '--report',
        report,
      ],
      { encoding: 'utf8', timeout: 600_000 },
    );
    expect(r.status, `${r.stdout.slice(-2000)}\n${r.stderr.slice(-3000)}`).toBe(0);
    // First use prepares the assets (once per image and modules), and says so.
    expect(r.stderr).toMatch(/own kernel .*preparing guest assets|guest exited 0/);
    const results = JSON.parse(readFileSync(join(report, 'results.json'), 'utf8'));
    expect(results.environment.kernel).toBe(release);
    expect(results.scenarios.map((s: { id: string }) => s.id).sort()).toEqual([
      'rxe-fetch-add',
      'rxe-write-imm',
      'siw-send',
      'siw-write',
    ]);
    expect(results.totals.passed).toBe(4);
    // The boot-to-devices time, for the closing note's figure.
    const ready = /guest exited 0 after ([\d.]+) s(.*)/.exec(r.stderr);
    process.stderr.write(`own kernel: ${ready?.[0] ?? 'no timing line'}\n`);
  }, 660_000);
});
