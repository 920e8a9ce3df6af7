/**
 * Runs the ULP workloads on this machine's devices: inside the guest (the kernel test, and
 * `rdma-interop ulp`'s guest side). Per workload and device: tcpdump on `lo` for siw0 (its
 * connections to its own address run over the loopback device; rxe's never reach a
 * netdev), the workload's script (scripts/guest/ulp-*.sh: the kernel's target and host,
 * the data written and verified), dmesg before and after, and the wire decoded and judged.
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { cacheRoot, packageRoot } from '../runtime/paths.js';
import { judgeCapture } from './wire-judge.js';
import {
  DEFAULT_SIZES,
  DMESG_TROUBLE,
  NOT_IMPLEMENTED_REASON,
  parseScriptOutput,
  RXE_NO_WIRE_REASON,
  TCP_NO_WIRE_REASON,
  ULP_DEVICES,
  ULP_WORKLOADS,
  type UlpDeviceName,
  type UlpSizes,
  type UlpWorkloadName,
  type WorkloadResult,
} from './workloads.js';

const run = promisify(execFile);

/** Where scripts/setup/ulp-packages.sh unpacked the Debian tools. */
export function ulpToolsRoot(): string {
  return join(cacheRoot(), 'ulp', 'root');
}

/** The longest one workload may take (TCG guest, 8 MiB and 64 files: 10-20 s measured). */
const SCRIPT_TIMEOUT_MS = 300_000;
const CAPTURE_READY_MS = 10_000;
const CAPTURE_FLUSH_MS = 300;

async function dmesgLines(): Promise<string[]> {
  try {
    const r = await run('dmesg', [], { maxBuffer: 16 * 1024 * 1024 });
    return r.stdout.split('\n');
  } catch {
    return [];
  }
}

/** Of `modules`, those this kernel has but built without RDMA (they depend on no RDMA core). */
async function withoutRdma(modules: readonly string[]): Promise<string[]> {
  const out: string[] = [];
  for (const m of modules) {
    try {
      const r = await run('modinfo', ['-F', 'depends', m]);
      if (!/\b(rdma_cm|ib_core)\b/.test(r.stdout)) out.push(m);
    } catch {
      out.push(`${m} (absent)`);
    }
  }
  return out;
}

interface RunningCapture {
  stop(): Promise<Uint8Array | undefined>;
}

/**
 * tcpdump on `lo` for the workload's TCP port and the device's address, into tmpfs with a
 * 64 MiB kernel buffer: writing into the 9p share, or with the default 2 MiB buffer, lost
 * segments of an 8 MiB NVMe run under TCG (measured 2026-12-05: 3 TCP gaps in 2494 frames).
 */
async function startLoopbackCapture(file: string, filter: string): Promise<RunningCapture> {
  const tcpdump = spawn(
    'tcpdump',
    ['-i', 'lo', '-B', '65536', '--immediate-mode', '-U', '-s', '0', '-w', file, filter],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  const exited = new Promise<void>((resolve) => tcpdump.on('close', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    let stderr = '';
    const timer = setTimeout(() => {
      tcpdump.kill('SIGKILL');
      reject(new Error(`tcpdump did not start within ${CAPTURE_READY_MS} ms: ${stderr}`));
    }, CAPTURE_READY_MS);
    tcpdump.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      if (stderr.includes('listening on')) {
        clearTimeout(timer);
        resolve();
      }
    });
    tcpdump.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
  });
  return {
    stop: async () => {
      await new Promise((resolve) => setTimeout(resolve, CAPTURE_FLUSH_MS));
      tcpdump.kill('SIGINT');
      await exited;
      return existsSync(file) ? new Uint8Array(readFileSync(file)) : undefined;
    },
  };
}

/** Options of {@link runWorkloadHere}. */
export interface RunHereOptions {
  readonly kernel: string;
  readonly sizes?: UlpSizes;
  /** Where the pcap is written (`<prefix><workload>-<device>.pcap`); none when undefined. */
  readonly pcapDir?: string;
  readonly pcapPrefix?: string;
  readonly onLine?: (line: string) => void;
  /**
   * One side of the two-guest link (src/ulp/link-main.ts): the role this guest plays, the
   * address the script uses (the target's own, or the target's for the initiator) and the
   * sync path in the share both guests mount. The link is captured on the host, not here.
   */
  readonly link?: {
    readonly role: 'target' | 'initiator';
    readonly address: string;
    readonly sync: string;
  };
}

/** The wire of a link run until the host judges its own capture (src/ulp/link-run.ts). */
export const LINK_WIRE_PENDING = 'captured on the link by the host';

/** Runs one workload on one device of this machine and judges it. */
export async function runWorkloadHere(
  workload: UlpWorkloadName,
  device: UlpDeviceName,
  o: RunHereOptions,
): Promise<WorkloadResult> {
  const spec = ULP_WORKLOADS[workload];
  const base = { workload, device, kernel: o.kernel, facts: {}, dmesgTrouble: [], seconds: 0 };
  if (spec.script === undefined) {
    const missing = 'rdmaModules' in spec ? await withoutRdma(spec.rdmaModules) : [];
    return {
      ...base,
      outcome: 'not-run',
      reason:
        missing.length > 0
          ? `this kernel builds ${missing.join(' and ')} without RDMA (modinfo: no rdma_cm or ib_core among its dependencies)`
          : NOT_IMPLEMENTED_REASON,
      wire: { notCaptured: 'not run' },
    };
  }
  if (!existsSync(join(ulpToolsRoot(), 'usr', 'sbin')))
    return {
      ...base,
      outcome: 'not-run',
      reason: `the Debian tools are not unpacked in ${ulpToolsRoot()} (run scripts/setup/ulp-packages.sh)`,
      wire: { notCaptured: 'not run' },
    };
  const { transport } = ULP_DEVICES[device];
  const address = o.link?.address ?? ULP_DEVICES[device].address;
  const sizes = o.sizes ?? DEFAULT_SIZES;
  const before = (await dmesgLines()).length;
  const capFile = join('/dev/shm', `ulp-${workload}-${device}-${process.pid}.pcap`);
  let capture: RunningCapture | undefined;
  let captureError: string | undefined;
  if (transport === 'iwarp' && o.link === undefined) {
    try {
      capture = await startLoopbackCapture(capFile, `host ${address} and tcp port ${spec.port}`);
    } catch (e) {
      captureError = `tcpdump: ${(e as Error).message}`;
    }
  }
  const started = Date.now();
  let stdout = '';
  let failure: string | undefined;
  try {
    const r = await run(
      'bash',
      [
        join(packageRoot(), spec.script),
        address,
        device,
        String(sizes.mib),
        String(sizes.files),
        transport === 'tcp' ? 'tcp' : 'rdma',
      ],
      {
        env: {
          ...process.env,
          ULP_ROOT: ulpToolsRoot(),
          ...(o.link === undefined ? {} : { ULP_ROLE: o.link.role, ULP_SYNC: o.link.sync }),
        },
        timeout: SCRIPT_TIMEOUT_MS,
        killSignal: 'SIGKILL',
        maxBuffer: 4 * 1024 * 1024,
      },
    );
    stdout = r.stdout;
  } catch (e) {
    const err = e as { stdout?: string; stderr?: string; killed?: boolean; code?: unknown };
    stdout = err.stdout ?? '';
    failure = err.killed
      ? `the script did not end within ${SCRIPT_TIMEOUT_MS / 1000} s`
      : `the script exited ${String(err.code)}`;
  }
  const seconds = Math.round((Date.now() - started) / 100) / 10;
  const facts = parseScriptOutput(stdout);
  for (const [k, v] of Object.entries(facts)) o.onLine?.(`${workload} ${device}: ${k} ${v}`);
  const pcap = capture === undefined ? undefined : await capture.stop();
  rmSync(capFile, { force: true });
  const dmesgTrouble = (await dmesgLines()).slice(before).filter((l) => DMESG_TROUBLE.test(l));

  let pcapName: string | undefined;
  if (pcap !== undefined && o.pcapDir !== undefined) {
    mkdirSync(o.pcapDir, { recursive: true });
    pcapName = `${o.pcapPrefix ?? ''}${workload}-${device}.pcap`;
    writeFileSync(join(o.pcapDir, pcapName), pcap);
  }
  const wire =
    pcap !== undefined
      ? judgeCapture(pcap)
      : {
          notCaptured:
            transport === 'tcp'
              ? TCP_NO_WIRE_REASON
              : o.link !== undefined
                ? LINK_WIRE_PENDING
                : transport === 'roce'
                  ? RXE_NO_WIRE_REASON
                  : (captureError ?? 'no capture'),
        };
  // The script found the workload impossible on this device (its reason, its evidence).
  if (failure === undefined && facts['not-run'] !== undefined)
    return {
      ...base,
      outcome: 'not-run',
      reason: facts['not-run'],
      facts,
      dmesgTrouble,
      seconds,
      wire: { notCaptured: 'not run' },
    };
  // A target across the link verifies nothing itself but its served run (NFS: its copy).
  if (failure === undefined && o.link?.role === 'target') {
    if (facts['target-served'] !== 'yes') failure = 'the target did not finish serving';
  } else if (failure === undefined && facts.verified !== 'yes')
    failure = 'the data was not verified';
  if (failure === undefined && dmesgTrouble.length > 0)
    failure = `dmesg: ${dmesgTrouble.length} line(s) of trouble`;
  const reason =
    failure === undefined ? undefined : [facts.error, failure].filter(Boolean).join('; ');
  return {
    ...base,
    outcome: failure === undefined ? 'passed' : 'failed',
    ...(reason === undefined ? {} : { reason }),
    facts,
    dmesgTrouble,
    seconds,
    wire,
    ...(pcapName === undefined ? {} : { pcap: pcapName }),
  };
}

/** Runs every workload on every device, in order; the kernel is this machine's release. */
export async function runWorkloadsHere(
  workloads: readonly UlpWorkloadName[],
  devices: readonly UlpDeviceName[],
  o: Omit<RunHereOptions, 'kernel'> & { readonly kernel?: string },
): Promise<WorkloadResult[]> {
  const kernel = o.kernel ?? (await run('uname', ['-r'])).stdout.trim();
  const results: WorkloadResult[] = [];
  for (const w of workloads)
    for (const d of devices) results.push(await runWorkloadHere(w, d, { ...o, kernel }));
  return results;
}
