/**
 * `rdma-interop ulp --link`'s host side: boots the guest pair (src/runtime/pair.ts) with
 * each workload's target in guest B and its initiator in guest A (src/ulp/link-main.ts),
 * optionally over the fault relay, then cuts each device's link capture per workload
 * (link-split.ts), judges it (wire-judge.ts) and merges the two sides' results into one
 * entry per workload and device.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findGuestAssets } from '../runtime/assets.js';
import type { FaultSpec } from '../runtime/faults/spec.js';
import { formatFaults } from '../runtime/faults/spec.js';
import { runGuestPair } from '../runtime/pair.js';
import { cacheRoot, packageRoot } from '../runtime/paths.js';
import { LINK_WIRE_PENDING } from './guest-run.js';
import { type LinkCut, splitLinkCapture, ULP_PAIR_ADDRESSES } from './link-split.js';
import type { UlpLineRun } from './run.js';
import { judgeCapture } from './wire-judge.js';
import {
  DEFAULT_SIZES,
  ULP_DEVICES,
  type UlpDeviceName,
  type UlpSizes,
  type UlpWorkloadName,
  type WorkloadResult,
} from './workloads.js';

/** One guest of the pair: its kernel (a line or assets directory), siw and environment. */
export interface UlpLinkGuest {
  readonly kernelDir: string;
  readonly siw: string;
  readonly env: Readonly<Record<string, string>>;
}

export interface UlpLinkOptions {
  /** Guest A, the initiators. */
  readonly initiator: UlpLinkGuest;
  /** Guest B, the targets. */
  readonly target: UlpLinkGuest;
  readonly workloads: readonly UlpWorkloadName[];
  readonly devices: readonly UlpDeviceName[];
  readonly sizes?: UlpSizes;
  readonly faults?: FaultSpec;
  readonly timeoutSeconds: number;
  /** Where the per-workload pcaps go (`<line>-<workload>-<device>.pcap`). */
  readonly pcapDir?: string;
  readonly signal?: AbortSignal;
  readonly onProgress?: (line: string) => void;
}

/** The report's name of a link run: `link 6.1/7.3` (initiator/target), faults after. */
export function linkRunName(o: Pick<UlpLinkOptions, 'initiator' | 'target' | 'faults'>): string {
  const side = (g: UlpLinkGuest) => `${g.kernelDir}${g.siw === 'stock' ? '' : ` siw ${g.siw}`}`;
  return `link ${side(o.initiator)}/${side(o.target)}${o.faults === undefined ? '' : ` faults ${formatFaults(o.faults)}`}`;
}

/** Merges the initiator's and the target's entries of one workload and device. */
export function mergeSides(
  a: WorkloadResult,
  b: WorkloadResult | undefined,
  wire: WorkloadResult['wire'],
  sides: NonNullable<WorkloadResult['link']>,
): WorkloadResult {
  const targetFacts = Object.fromEntries(
    Object.entries(b?.facts ?? {}).map(([k, v]) => [k.startsWith('target') ? k : `target-${k}`, v]),
  );
  // Both sides skipped it for the same reason (a workload the link does not run): say it once.
  const same = b !== undefined && a.outcome === b.outcome && a.reason === b.reason;
  const reasons =
    same && a.reason !== undefined
      ? [a.reason]
      : [
          a.outcome === 'passed' ? undefined : a.reason && `initiator (A): ${a.reason}`,
          b === undefined
            ? 'target (B): no entry'
            : b.outcome === 'passed'
              ? undefined
              : b.reason && `target (B): ${b.reason}`,
        ];
  const said = reasons.filter((r): r is string => r !== undefined && r !== '');
  const outcome =
    a.outcome === 'failed' || b?.outcome === 'failed' || b === undefined
      ? 'failed'
      : a.outcome === 'not-run' || b.outcome === 'not-run'
        ? 'not-run'
        : 'passed';
  return {
    ...a,
    kernel: b === undefined || b.kernel === a.kernel ? a.kernel : `${a.kernel} / ${b.kernel}`,
    outcome,
    ...(said.length === 0 ? {} : { reason: said.join('; ') }),
    facts: { ...a.facts, ...targetFacts },
    dmesgTrouble: [
      ...a.dmesgTrouble.map((l) => `[A] ${l}`),
      ...(b?.dmesgTrouble ?? []).map((l) => `[B] ${l}`),
    ],
    wire,
    link: sides,
  };
}

/** Boots the pair, runs the workloads across the link, judges each one's cut of the wire. */
export async function runUlpOnLink(o: UlpLinkOptions): Promise<UlpLineRun> {
  const work = mkdtempSync(join(tmpdir(), 'rdma-interop-ulp-link-'));
  const line = linkRunName(o);
  const progress = o.onProgress ?? (() => {});
  const sizes = o.sizes ?? DEFAULT_SIZES;
  try {
    const share = join(work, 'share');
    const captures = join(work, 'captures');
    const main = join(packageRoot(), 'dist', 'ulp', 'link-main.js');
    const args = (guest: 'A' | 'B') => [
      process.execPath,
      main,
      guest,
      share,
      o.workloads.join(','),
      o.devices.join(','),
      String(sizes.mib),
      String(sizes.files),
    ];
    const started = performance.now();
    const lines: Record<'A' | 'B', string[]> = { A: [], B: [] };
    const relay = await runGuestPair({
      assets: findGuestAssets(o.initiator.kernelDir),
      accel: 'auto',
      commands: [args('A'), args('B')],
      cwd: packageRoot(),
      timeoutSeconds: o.timeoutSeconds,
      shareDir: share,
      captureDir: captures,
      env: { ...o.initiator.env, RDMA_INTEROP_CACHE: cacheRoot() },
      peer: {
        assets: findGuestAssets(o.target.kernelDir),
        env: { ...o.target.env, RDMA_INTEROP_CACHE: cacheRoot() },
      },
      ...(o.faults === undefined ? {} : { faults: o.faults }),
      onProgress: (l) => progress(`[pair] ${l}`),
      onErrorOutput: (guest, chunk) => {
        const g = guest === 0 ? 'A' : 'B';
        for (const l of chunk.toString('utf8').split('\n'))
          if (l !== '') {
            progress(`[${g}] ${l}`);
            lines[g] = [...lines[g], l].slice(-5);
          }
      },
      ...(o.signal === undefined ? {} : { signal: o.signal }),
    });
    const guestSeconds = Number(((performance.now() - started) / 1000).toFixed(1));
    const read = (g: 'A' | 'B'): WorkloadResult[] | undefined => {
      const file = join(share, `ulp-${g}.json`);
      return existsSync(file)
        ? (JSON.parse(readFileSync(file, 'utf8')) as WorkloadResult[])
        : undefined;
    };
    const a = read('A');
    const b = read('B');
    if (a === undefined)
      return {
        line,
        results: [],
        guestSeconds,
        failure: `guest A wrote no results: ${lines.A.join(' / ')}`,
      };
    // Each link's capture, cut per workload.
    const cuts = new Map<string, LinkCut>();
    for (const device of new Set(o.devices.map((d) => ULP_PAIR_ADDRESSES[d].link))) {
      const file = relay.captures[device];
      if (file === undefined || !existsSync(file)) continue;
      for (const [key, cut] of splitLinkCapture(new Uint8Array(readFileSync(file))))
        cuts.set(key, cut);
    }
    const side = (g: UlpLinkGuest, kernel: string | undefined) => ({
      kernel: kernel ?? g.kernelDir,
      siw: g.siw,
    });
    const results = a.map((ra) => {
      const rb = b?.find((r) => r.workload === ra.workload && r.device === ra.device);
      const key = `${ra.workload}-${ra.device}`;
      const cut = cuts.get(key);
      const transport = ULP_DEVICES[ra.device].transport;
      let wire: WorkloadResult['wire'] = ra.wire;
      let pcap: string | undefined;
      if (
        'notCaptured' in ra.wire &&
        ra.wire.notCaptured === LINK_WIRE_PENDING &&
        transport !== 'tcp'
      ) {
        if (cut === undefined)
          wire = { notCaptured: `no markers of ${key} in the ${ra.device} link capture` };
        else {
          // Guest A's side of the relay: B's packets arrive after its drops.
          wire = judgeCapture(
            cut.pcap,
            o.faults === undefined
              ? {}
              : { afterRelay: new Set([ULP_PAIR_ADDRESSES[ra.device].B]) },
          );
          if (o.pcapDir !== undefined) {
            mkdirSync(o.pcapDir, { recursive: true });
            pcap = `${line.replace(/[^A-Za-z0-9.=-]+/g, '_')}-${key}.pcap`;
            writeFileSync(join(o.pcapDir, pcap), cut.pcap);
          }
        }
      }
      const counts = relay.faults?.[ULP_PAIR_ADDRESSES[ra.device].link];
      const merged = mergeSides(ra, rb, wire, {
        initiator: side(o.initiator, ra.kernel),
        target: side(o.target, rb?.kernel),
        ...(o.faults === undefined ? {} : { faults: formatFaults(o.faults) }),
        ...(counts === undefined ? {} : { relay: counts }),
      });
      return pcap === undefined ? merged : { ...merged, pcap };
    });
    return {
      line,
      results,
      guestSeconds,
      ...(b === undefined ? { failure: `guest B wrote no results: ${lines.B.join(' / ')}` } : {}),
    };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
