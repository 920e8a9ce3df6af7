/**
 * src/native/load.ts: a missing or broken addon is one AddonUnavailableError (an
 * RdmaInteropError) naming the cause and a command that fixes it from where the package
 * is: `npm rebuild rdma-interop` in an installed package, the build script in a checkout.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RdmaInteropError } from '../../../src/errors.js';
import { AddonUnavailableError, fixCommand, loadAddonFrom } from '../../../src/native/load.js';

function caught(f: () => unknown): unknown {
  try {
    f();
  } catch (e) {
    return e;
  }
  return undefined;
}

describe('the addon loader', () => {
  it('no build and no prebuild: reason missing, fix = the checkout build script', () => {
    const root = mkdtempSync(join(tmpdir(), 'rdma-interop-checkout-'));
    const e = caught(() => loadAddonFrom(root));
    expect(e).toBeInstanceOf(AddonUnavailableError);
    expect(e).toBeInstanceOf(RdmaInteropError);
    const error = e as AddonUnavailableError;
    expect(error.origin).toBe('verbs');
    expect(error.reason).toBe('missing');
    expect(error.packageRoot).toBe(root);
    expect(error.detail).toMatch(/^No native build was found for platform=linux arch=x64/);
    expect(error.fix).toMatch(/^npm run build:native \(in /);
    expect(error.message).toMatch(
      /^the rdma_interop addon is not available: no prebuilt binary for linux-x64 and no source build \(No native build was found.*\); fix: npm run build:native/,
    );
  });

  it('a prebuild the dynamic loader refuses: reason load-failed, fix = npm rebuild', () => {
    const root = join(
      mkdtempSync(join(tmpdir(), 'rdma-interop-app-')),
      'node_modules',
      'rdma-interop',
    );
    mkdirSync(join(root, 'prebuilds', 'linux-x64'), { recursive: true });
    writeFileSync(
      join(root, 'prebuilds', 'linux-x64', 'rdma-interop.glibc.node'),
      'not an ELF file',
    );
    const error = caught(() => loadAddonFrom(root)) as AddonUnavailableError;
    expect(error).toBeInstanceOf(AddonUnavailableError);
    expect(error.reason).toBe('load-failed');
    expect(error.detail).toMatch(/rdma-interop\.glibc\.node: (invalid ELF header|file too short)/);
    expect(error.message).toMatch(/apt-get install libibverbs1 librdmacm1/);
    expect(error.fix).toMatch(
      /^npm rebuild rdma-interop \(a source build; needs g\+\+, make, python3/,
    );
  });

  it('the fix command follows where the package is', () => {
    expect(fixCommand('/srv/app/node_modules/rdma-interop')).toMatch(/^npm rebuild rdma-interop /);
    expect(fixCommand('/home/me/rdma-interop')).toMatch(
      /^npm run build:native \(in \/home\/me\/rdma-interop;/,
    );
  });

  it('this checkout has an addon that loads (source build or prebuild)', () => {
    const addon = loadAddonFrom(process.cwd());
    expect(typeof addon.listDevices).toBe('function');
  });
});
