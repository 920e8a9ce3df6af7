/**
 * `rdma-interop ulp`'s host side: boots a guest of one kernel line and runs the workloads
 * there (src/ulp/guest-main.ts), then reads back their results and pcaps.
 */
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runInGuest } from '../runtime/index.js';
import { packageRoot } from '../runtime/paths.js';
import {
  DEFAULT_SIZES,
  type UlpDeviceName,
  type UlpSizes,
  type UlpWorkloadName,
  type WorkloadResult,
} from './workloads.js';

/** One kernel line's run. */
export interface UlpLineRun {
  readonly line: string;
  readonly results: readonly WorkloadResult[];
  readonly guestSeconds: number;
  /** Set when the guest side wrote no results (its last stderr lines). */
  readonly failure?: string;
}

export interface UlpGuestOptions {
  readonly line: string;
  readonly workloads: readonly UlpWorkloadName[];
  readonly devices: readonly UlpDeviceName[];
  readonly sizes?: UlpSizes;
  readonly timeoutSeconds: number;
  /** Where the pcaps go (`<line>-<workload>-<device>.pcap`). */
  readonly pcapDir?: string;
  readonly signal?: AbortSignal;
  readonly onProgress?: (line: string) => void;
}

/** Boots a guest of `o.line`, runs the workloads, and collects what they left. */
export async function runUlpInGuest(o: UlpGuestOptions): Promise<UlpLineRun> {
  const share = mkdtempSync(join(tmpdir(), 'rdma-interop-ulp-'));
  const progress = o.onProgress ?? (() => {});
  const sizes = o.sizes ?? DEFAULT_SIZES;
  let tail: string[] = [];
  try {
    let pending = '';
    const result = await runInGuest({
      command: [
        process.execPath,
        join(packageRoot(), 'dist', 'ulp', 'guest-main.js'),
        share,
        o.workloads.join(','),
        o.devices.join(','),
        String(sizes.mib),
        String(sizes.files),
      ],
      kernel: o.line,
      rdmaCore: 'host',
      shareDir: share,
      timeoutSeconds: o.timeoutSeconds,
      onProgress: (l) => progress(`[vm] ${l}`),
      onOutput: () => {},
      onErrorOutput: (chunk) => {
        pending += chunk.toString('utf8');
        const lines = pending.split('\n');
        pending = lines.pop() ?? '';
        for (const l of lines) progress(`[${o.line}] ${l}`);
        tail = [...tail, ...lines].slice(-5);
      },
      ...(o.signal === undefined ? {} : { signal: o.signal }),
    });
    const file = join(share, 'workloads.json');
    const guestSeconds = Number(result.wallSeconds.toFixed(1));
    if (!existsSync(file))
      return {
        line: o.line,
        results: [],
        guestSeconds,
        failure: `the guest side wrote no results (exit ${result.exitCode}): ${tail.join(' / ')}`,
      };
    const results = (JSON.parse(readFileSync(file, 'utf8')) as WorkloadResult[]).map((r) => {
      if (r.pcap === undefined || o.pcapDir === undefined) return r;
      mkdirSync(o.pcapDir, { recursive: true });
      const name = `${o.line}-${r.pcap}`;
      copyFileSync(join(share, r.pcap), join(o.pcapDir, name));
      return { ...r, pcap: name };
    });
    return { line: o.line, results, guestSeconds };
  } finally {
    rmSync(share, { recursive: true, force: true });
  }
}
