import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { fixesEnv } from '../../../src/runtime/fixes-env.js';
import { ArgumentError, GuestRuntimeError, runInGuest } from '../../../src/runtime/index.js';

// `vm --fixes` (issue 33): the environment that makes the guest load the fixed rxe and siw
// modules at device set-up and the command load the fixed providers, from the links
// scripts/setup/fixes.sh puts next to a kernel's guest assets; a clear error without them.

const dir = mkdtempSync(join(tmpdir(), 'fixes-env-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function assets(withLinks: boolean) {
  const at = join(dir, withLinks ? 'with' : 'without');
  mkdirSync(join(at, 'root'), { recursive: true });
  if (withLinks) {
    writeFileSync(join(at, 'rdma_rxe-fixes.ko'), '');
    writeFileSync(join(at, 'siw-fixes.ko'), '');
    mkdirSync(join(at, 'fixes-rdma-core', 'lib'), { recursive: true });
  }
  return {
    kernelRelease: '6.12.95+deb12-amd64',
    packageVersion: '6.12.95-1~bpo12+1',
    kernel: join(at, 'vmlinuz'),
    initramfs: join(at, 'initramfs.cpio.gz'),
    modulesRoot: join(at, 'root'),
  };
}

describe('fixesEnv', () => {
  it('sets RDMA_INTEROP_FIXES and puts the fixed rdma-core first on the library path', () => {
    expect(fixesEnv(assets(true))).toEqual({
      RDMA_INTEROP_FIXES: '1',
      LD_LIBRARY_PATH: join(dir, 'with', 'fixes-rdma-core', 'lib'),
    });
  });

  it('without the fixed build: assets-missing, naming what is missing and the set-up step', () => {
    let caught: unknown;
    try {
      fixesEnv(assets(false));
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(GuestRuntimeError);
    expect((caught as GuestRuntimeError).failure).toBe('assets-missing');
    expect((caught as Error).message).toMatch(
      /^no fixed build for kernel 6\.12\.95\+deb12-amd64 \(.*rdma_rxe-fixes\.ko, .*siw-fixes\.ko, .*fixes-rdma-core\/lib missing\): .*scripts\/setup\/fixes\.sh/,
    );
  });

  it('runInGuest refuses fixes with the RFC 7306 siw and a fixes that is not a boolean, before any boot', async () => {
    await expect(runInGuest({ command: ['true'], fixes: true, siw: 'rfc7306' })).rejects.toThrow(
      ArgumentError,
    );
    await expect(
      runInGuest({ command: ['true'], fixes: 'yes' as unknown as boolean }),
    ).rejects.toThrow(ArgumentError);
  });
});
