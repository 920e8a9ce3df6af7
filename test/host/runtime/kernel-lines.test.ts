/**
 * Issue 11: the kernel lines the CLI offers are the ones the set-up can build
 * (scripts/setup/kernel-lines.sh), and `--kernel` resolves a line or a directory.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { UnknownNameError } from '../../../src/errors.js';
import { selectKernel } from '../../../src/runtime/assets.js';
import { GuestRuntimeError } from '../../../src/runtime/errors.js';
import {
  DEFAULT_KERNEL_LINE,
  findKernelLine,
  KERNEL_LINES,
  kernelLine,
} from '../../../src/runtime/kernel-lines.js';

function fromShell(expr: string): string {
  return execFileSync(
    'bash',
    ['-c', `source scripts/lib/common.sh; source scripts/setup/kernel-lines.sh; ${expr}`],
    { encoding: 'utf8', env: { ...process.env, RDMA_INTEROP_CACHE: '/nonexistent' } },
  ).trim();
}

describe('kernel lines', () => {
  it('the TypeScript table and scripts/setup/kernel-lines.sh name the same lines and suites', () => {
    expect(fromShell(['echo "$', '{KERNEL_LINES[*]}"'].join(''))).toBe(
      KERNEL_LINES.map((l) => l.line).join(' '),
    );
    expect(fromShell('echo "$DEFAULT_KERNEL_LINE"')).toBe(DEFAULT_KERNEL_LINE);
    for (const l of KERNEL_LINES) {
      const suite = fromShell(`kernel_line_suite ${l.line}`);
      // The default line uses the host's own apt lists (bookworm).
      expect(suite === 'host' ? 'bookworm' : suite, l.line).toBe(l.suite);
    }
  });

  it('6.1 runs with the host rdma-core; 6.12 and 7.3 with 56.1 built from source', () => {
    expect(kernelLine('6.1').rdmaCore).toBeUndefined();
    expect(kernelLine('6.12').rdmaCore).toBe('56.1');
    expect(kernelLine('7.3').rdmaCore).toBe('56.1');
    // The lookup convention (issue 25): an unknown name throws, naming it and the layer.
    expect(() => kernelLine('6.2')).toThrow(UnknownNameError);
    expect(() => kernelLine('6.2')).toThrow(/unknown kernel line '6.2' \(known: 6.1, 6.12, 7.3\)/);
    expect(findKernelLine('6.2')).toBeUndefined();
  });

  const dir = mkdtempSync(join(tmpdir(), 'kernel-select-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('--kernel resolves a line to its cached link and keeps a directory as given', () => {
    const line = selectKernel('7.3');
    expect(line).toMatchObject({ kind: 'line', line: '7.3' });
    expect(line.dir.endsWith(join('guest', 'line-7.3'))).toBe(true);
    // The default line is `current`, as before kernel lines existed.
    expect(selectKernel(undefined).dir.endsWith(join('guest', 'current'))).toBe(true);
    expect(selectKernel('6.1').dir.endsWith(join('guest', 'current'))).toBe(true);
    expect(selectKernel(dir)).toEqual({ kind: 'dir', dir });
  });

  it('--kernel with neither a line nor a directory is a typed error naming the lines', () => {
    let caught: unknown;
    try {
      selectKernel('6.2');
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(GuestRuntimeError);
    expect((caught as GuestRuntimeError).failure).toBe('assets-missing');
    expect((caught as Error).message).toContain('6.1, 6.12, 7.3');
  });
});
