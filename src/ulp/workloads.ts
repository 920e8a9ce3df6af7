/**
 * The kernel's own RDMA users the `ulp` command runs (issue 35), the devices they run on,
 * and the result of one run. One place for these facts: the guest runner, the CLI, the
 * report and the tests read them from here.
 */
import type { LinkFaultCounts } from '../runtime/faults/relay.js';
import type { WireJudgement } from './wire-judge.js';

/** The workloads, with how each is set up and what it needs. */
export const ULP_WORKLOADS = {
  nvme: {
    title: 'NVMe over Fabrics (nvmet-rdma target, nvme-rdma host)',
    script: 'scripts/guest/ulp-nvme.sh',
    /** TCP port of its RDMA CM listener (the iWARP connections' port). */
    port: 4420,
    implemented: true,
  },
  nfs: {
    title: 'NFS over RDMA (knfsd RDMA listener, NFSv4.1 client proto=rdma)',
    script: 'scripts/guest/ulp-nfs.sh',
    port: 20049,
    implemented: true,
  },
  iser: {
    title:
      'iSER (LIO target with an iSER portal on a RAM disk, open-iscsi with the iser interface)',
    script: 'scripts/guest/ulp-iser.sh',
    port: 3260,
    implemented: true,
  },
  smb: {
    title: 'SMB Direct (ksmbd, cifs rdma)',
    script: undefined,
    /**
     * Modules that must link the RDMA core for the workload to exist at all: Debian builds
     * neither CONFIG_CIFS_SMB_DIRECT nor CONFIG_SMB_SERVER_SMBDIRECT (7.3's config says
     * "is not set"; 6.1's cifs.ko logs "CONFIG_CIFS_SMB_DIRECT is not enabled").
     */
    rdmaModules: ['cifs', 'ksmbd'],
    port: 5445,
    implemented: false,
  },
} as const;

export type UlpWorkloadName = keyof typeof ULP_WORKLOADS;
export const ULP_WORKLOAD_NAMES = Object.keys(ULP_WORKLOADS) as UlpWorkloadName[];

/** Why a workload is not run (reported as such, never skipped silently). */
export const NOT_IMPLEMENTED_REASON =
  'not implemented yet in this project (issue 35: SMB Direct follows NVMe-oF, NFS and iSER)';

/**
 * The guest's RDMA devices and the address of the netdev each sits on (rdma-devices.sh),
 * and `tcp`: the same ULP over TCP (NVMe/TCP, NFS over TCP) on rxe0's address, the speed
 * reference of the issue (a table, not a target).
 */
export const ULP_DEVICES = {
  rxe0: { address: '192.0.2.1', transport: 'roce' },
  siw0: { address: '198.51.100.1', transport: 'iwarp' },
  tcp: { address: '192.0.2.1', transport: 'tcp' },
} as const;

export type UlpDeviceName = keyof typeof ULP_DEVICES;
export const ULP_DEVICE_NAMES = Object.keys(ULP_DEVICES) as UlpDeviceName[];
/** What `ulp` runs on unless told otherwise: the two soft RDMA devices. */
export const DEFAULT_ULP_DEVICES: readonly UlpDeviceName[] = ['rxe0', 'siw0'];

/** Why the TCP reference has no judged wire. */
export const TCP_NO_WIRE_REASON = 'not judged: the TCP speed reference carries no RDMA';

/** Why a device's wire is not captured in one guest. */
export const RXE_NO_WIRE_REASON =
  'not captured: rxe delivers traffic between QPs of one guest internally, never through a netdev (kernel-runtime.md); `ulp --link` captures it between two guests';

/** Sizes of one run: the large transfer (MiB) and the number of 4 KiB files or blocks. */
export interface UlpSizes {
  readonly mib: number;
  readonly files: number;
}

export const DEFAULT_SIZES: UlpSizes = { mib: 8, files: 64 };

/** A dmesg line that makes a run fail: a warning, a hung task, an oops, an I/O error. */
export const DMESG_TROUBLE =
  /(WARNING:|BUG:|Oops|hung_task|blocked for more than|Call Trace|I\/O error|kernel NULL pointer)/;

/** One workload on one device of one kernel. */
export interface WorkloadResult {
  readonly workload: UlpWorkloadName;
  readonly device: UlpDeviceName;
  readonly kernel: string;
  readonly outcome: 'passed' | 'failed' | 'not-run';
  /** Why it failed or was not run. */
  readonly reason?: string;
  /** The script's `ulp KEY VALUE` lines (timings, sizes, the verified checksum). */
  readonly facts: Readonly<Record<string, string>>;
  /** dmesg lines the run added that match {@link DMESG_TROUBLE}. */
  readonly dmesgTrouble: readonly string[];
  readonly seconds: number;
  /** The wire, or why there is none. */
  readonly wire: WireJudgement | { readonly notCaptured: string };
  /** The capture's file name in the report directory. */
  readonly pcap?: string;
  /** Across the two-guest link: who played which side, and the faulty wire's work. */
  readonly link?: UlpLinkFacts;
}

/** A link run's sides (target in guest B, initiator in guest A) and its wire. */
export interface UlpLinkFacts {
  readonly initiator: { readonly kernel: string; readonly siw: string };
  readonly target: { readonly kernel: string; readonly siw: string };
  /** The `--faults` text, when the wire was faulty. */
  readonly faults?: string;
  /** What the relay did on this device's link during the whole boot (every workload on it). */
  readonly relay?: LinkFaultCounts;
}

/** Workloads the two-guest link runs (target and initiator split by ULP_ROLE). */
export const ULP_LINK_WORKLOADS: readonly UlpWorkloadName[] = ['nvme', 'nfs'];

/** Reads a workload script's `ulp KEY VALUE` lines; `error` is the failure's text. */
export function parseScriptOutput(stdout: string): Record<string, string> {
  const facts: Record<string, string> = {};
  for (const line of stdout.split('\n')) {
    const m = /^ulp ([a-z0-9-]+) ?(.*)$/.exec(line);
    if (m?.[1] !== undefined) facts[m[1]] = (m[2] ?? '').trim();
  }
  return facts;
}

/** MB/s of `bytes` in `seconds`, one decimal; undefined without both facts. */
export function throughput(
  facts: Readonly<Record<string, string>>,
  what: string,
): number | undefined {
  const bytes = Number(facts[`${what}-bytes`] ?? facts['large-bytes']);
  const seconds = Number(facts[`${what}-seconds`]);
  if (!Number.isFinite(bytes) || !Number.isFinite(seconds) || seconds <= 0) return undefined;
  return Math.round((bytes / 1e6 / seconds) * 10) / 10;
}
