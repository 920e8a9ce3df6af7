/**
 * What `rdma-interop run` asks of the runs it starts elsewhere: the suite in the guest
 * (run.ts `runOnce`), and `--siw both|rfc7306`'s stock and patched passes in child
 * processes (run-siw.ts). Each is this command again with `--runtime host`, given the
 * options `RUN_FORWARDING` marks `forward` as this process parsed them (cli/request.ts
 * writes them back from the definition), plus what the run itself decides (its report
 * directory, the pass's siw). An option added to `run` is a compile error here until the
 * table says whether it goes along (test/host/cli/options-request.test.ts checks each).
 */
import type { Command } from 'commander';
import type { PeerAddress } from '../../interop/peer/peer.js';
import type { DeviceName } from '../../interop/scenario.js';
import { type Shard, shardLabel } from '../../judge/shard.js';
import type { FaultSpec } from '../../runtime/faults/spec.js';
import type { SiwVariant } from '../../runtime/siw-variant-env.js';
import type { Runtime } from '../options.js';
import { CACHE_DIR_STAYS, type Forwarding, forwardedOptions, requestArgs } from '../request.js';
import type { SiwChoice } from './run-siw.js';

/** `run`'s options as commander parses them. */
export interface RunOptions {
  readonly runtime: Runtime;
  /** Device names: the reference targets (rxe0, siw0) or any device present (issue 37). */
  readonly device?: string[];
  /** The address (IPv4/IPv6) of the one --device's netdev to use (issue 37). */
  readonly address?: string;
  /** The GID index of the one --device's port 1 to use (issue 37). */
  readonly gidIndex?: number;
  readonly scenario?: string;
  readonly report?: string;
  readonly strict?: boolean;
  readonly list?: boolean;
  readonly link?: boolean;
  /** The host serving the responder side (`peer serve`) of a two-host run (issue 37). */
  readonly peer?: PeerAddress;
  readonly timeout: number;
  readonly kernel?: string;
  readonly modules?: string;
  readonly kernels?: string[];
  readonly siw?: SiwChoice;
  /** rxe0 and siw0 on the fixed build of issue 33 (runtime/fixes-env.ts). */
  readonly fixes?: boolean;
  readonly peerKernel?: string;
  readonly peerSiw?: SiwVariant;
  readonly json?: boolean;
  readonly faults?: FaultSpec;
  readonly shard?: Shard;
  readonly cacheDir?: string;
  /** Record the functions of rxe, siw and the core the suite entered (coverage/ftrace.ts). */
  readonly coverage?: boolean;
}

const LINK_ONLY = { stays: 'with --link only, which boots its guest pair from this process' };
const THIS_GUEST = { stays: 'sets up the guest this process boots' };

/** Every option of `run`: whether the runs it starts elsewhere get it, or why not. */
export const RUN_FORWARDING = {
  runtime: { stays: "the run elsewhere is on that machine's devices: --runtime host" },
  device: 'forward',
  address: 'forward',
  gidIndex: 'forward',
  scenario: 'forward',
  // Replaced by the directory the run elsewhere writes (the guest's private share, copied
  // to <dir> afterwards; a pass's <dir> or <dir>/siw-rfc7306).
  report: 'forward',
  strict: 'forward',
  json: 'forward',
  list: { stays: 'lists the scenarios here and exits: nothing runs elsewhere' },
  link: { stays: 'boots its guest pair from this process (run-link.ts), no run elsewhere' },
  peer: { stays: "drives the peer from this process, on this host's device (run-peer.ts)" },
  peerKernel: LINK_ONLY,
  peerSiw: LINK_ONLY,
  siw: 'forward',
  // The guest is set up on the fixed build from here (runInGuest `fixes`); the run there
  // gets --fixes too and checks its devices are on it (RDMA_INTEROP_FIXES=1).
  fixes: 'forward',
  faults: LINK_ONLY,
  // Each run elsewhere (the guest's, a siw pass) selects the same part (judge/shard.ts).
  shard: 'forward',
  timeout: THIS_GUEST,
  kernel: THIS_GUEST,
  modules: THIS_GUEST,
  kernels: { stays: 'a guest per kernel line, each booted from this process' },
  cacheDir: CACHE_DIR_STAYS,
  coverage: 'forward',
} as const satisfies Readonly<Record<keyof RunOptions, Forwarding>>;

/** What one run elsewhere decides for itself, over the forwarded options. */
export interface RunElsewhere {
  /** Where it writes its report (none: it writes none). */
  readonly report: string | undefined;
  /** A siw pass's siw. */
  readonly siw?: SiwChoice;
  /** The patched pass's device (siw0). */
  readonly device?: readonly DeviceName[];
}

/** The arguments of `rdma-interop run` elsewhere (on the devices there: --runtime host). */
export function runElsewhereArgs(
  command: Command,
  options: RunOptions,
  elsewhere: RunElsewhere,
): string[] {
  const forwarded = forwardedOptions(RUN_FORWARDING, options);
  return [
    'run',
    ...requestArgs(command, {
      ...forwarded,
      shard: forwarded.shard === undefined ? undefined : shardLabel(forwarded.shard),
      runtime: 'host',
      ...elsewhere,
    }),
  ];
}
