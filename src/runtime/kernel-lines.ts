/**
 * The Debian kernel lines the guest boots (scripts/setup/kernel-lines.sh is the set-up's
 * copy; test/host/runtime/kernel-lines.test.ts checks the two agree). Each line pairs a
 * kernel with the rdma-core userspace the guest runs it with: bookworm's own 6.1 with the
 * host's rdma-core 44; the 6.12 and 7.3 lines with rdma-core 56.1 (trixie's) built from
 * source (scripts/setup/rdma-core.sh), since `ibv_wr_flush` needs rdma-core 45 or later
 * and these kernels have the Flush they would otherwise never be asked for. So 6.12 vs 7.3
 * is a kernel-only change; 6.1 vs 6.12 is what a bookworm -> trixie upgrade changes.
 */
import { nameText } from '../arguments.js';
import { UnknownNameError } from '../errors.js';
export interface KernelLine {
  /** The line's name on the command line: `6.1`, `6.12`, `7.3`. */
  readonly line: string;
  /** The Debian suite its `linux-image-amd64` comes from. */
  readonly suite: string;
  /** rdma-core built from source for its runs; `undefined`: the host's own. */
  readonly rdmaCore: string | undefined;
}

export const KERNEL_LINES: readonly KernelLine[] = [
  { line: '6.1', suite: 'bookworm', rdmaCore: undefined },
  { line: '6.12', suite: 'bookworm-backports', rdmaCore: '56.1' },
  { line: '7.3', suite: 'trixie-backports', rdmaCore: '56.1' },
];

/** The line `guest/current` points at: what a plain `vm` or `run` boots. */
export const DEFAULT_KERNEL_LINE = '6.1';

/** The line named `name`, or `undefined` (a directory, or a typo): the package's own test. */
export function findKernelLine(name: string): KernelLine | undefined {
  return KERNEL_LINES.find((l) => l.line === name);
}

/** The line named `name`; a name that is no line throws UnknownNameError (the lookup convention). */
export function kernelLine(name: string): KernelLine {
  const line = findKernelLine(name);
  if (line === undefined)
    throw new UnknownNameError(
      'runtime',
      'kernel line',
      nameText(name),
      KERNEL_LINES.map((l) => l.line),
    );
  return line;
}
