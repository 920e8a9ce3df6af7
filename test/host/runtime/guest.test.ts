import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { GuestRuntimeError, runInGuest } from '../../../src/runtime/index.js';

// These boot the real guest (TCG: ~5-10 s each on a quiet host). They check the runtime's
// contract: output streamed, exit status passed through, and every way a boot can go wrong
// ends in a typed error quoting the guest console, within the timeout. The CLI's output
// and signal handling: lifecycle.test.ts.

function collect(): { chunks: Buffer[]; onOutput: (c: Buffer) => void; text: () => string } {
  const chunks: Buffer[] = [];
  return { chunks, onOutput: (c) => chunks.push(c), text: () => Buffer.concat(chunks).toString() };
}

describe('QEMU guest runtime', () => {
  it('streams the output and returns the exit status of the command', async () => {
    const out = collect();
    const share = mkdtempSync(join(tmpdir(), 'rdma-interop-share-'));
    const result = await runInGuest({
      command: [
        'bash',
        '-c',
        'echo "uid=$(id -u) devices=$(ls /sys/class/infiniband | tr "\\n" " ")"; echo written >"$RDMA_INTEROP_SHARE/proof"; exit 7',
      ],
      timeoutSeconds: 120,
      shareDir: share,
      onOutput: out.onOutput,
    });
    expect(result.exitCode).toBe(7);
    expect(out.text()).toContain('uid=0 devices=rxe0 siw0 ');
    // The share is mounted at the same path in the guest, and is writable there.
    expect(readFileSync(join(share, 'proof'), 'utf8')).toBe('written\n');
  });

  it('does not let the guest write to the host root', async () => {
    const marker = join(process.cwd(), `.guest-write-probe-${process.pid}`);
    const result = await runInGuest({
      command: ['bash', '-c', `echo x > ${marker} && test -f ${marker}`],
      timeoutSeconds: 120,
      onOutput: () => {},
    });
    expect(result.exitCode).toBe(0); // writable inside (tmpfs overlay) ...
    expect(() => readFileSync(marker)).toThrow(/ENOENT/); // ... and gone outside
  });

  it('kills a guest that outlives the timeout and quotes its console', async () => {
    const error = await runInGuest({
      command: ['sleep', '600'],
      timeoutSeconds: 15,
      onOutput: () => {},
      extraKernelArgs: ['loglevel=7'],
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GuestRuntimeError);
    const failure = error as GuestRuntimeError;
    expect(failure.failure).toBe('timeout');
    expect(failure.message).toContain('within 15 s');
    expect(failure.consoleTail).toMatch(/Linux version|rdma_rxe|siw|9p/);
  });

  it('a kernel panic before the command: booted once more, then reported with the console tail', async () => {
    const progress: string[] = [];
    const error = await runInGuest({
      command: ['true'],
      timeoutSeconds: 60,
      onOutput: () => {},
      onProgress: (line) => progress.push(line),
      // No such init in the initramfs: the kernel panics; panic=-1 + -no-reboot end QEMU.
      extraKernelArgs: ['rdinit=/no-such-init', 'init=/no-such-init'],
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GuestRuntimeError);
    const failure = error as GuestRuntimeError;
    expect(failure.failure).toBe('boot-panic');
    expect(failure.consoleTail).toContain('Kernel panic');
    // Exactly one more boot, said as it happens.
    expect(progress.filter((l) => l.startsWith('booting Debian kernel'))).toHaveLength(1);
    expect(
      progress.filter((l) =>
        /^the guest kernel panicked before the command started \(.*Kernel panic.*\): booting it once more$/.test(
          l,
        ),
      ),
    ).toHaveLength(1);
  });
});
