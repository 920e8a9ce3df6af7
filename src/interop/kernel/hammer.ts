/**
 * The concurrency step on a device: several requester QPs, each connected to its own
 * responder QP in the pair's PD (so all reach the one responder MR), post FetchAdds to
 * one word at the same time, keeping a window of requests outstanding on each QP. The
 * requesters live in the suite's process, or each in a process of its own
 * (hammer-process.ts), which connects to a responder QP of the suite's process.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { connectRcByHand } from '../../verbs/connect.js';
import { VerbsError } from '../../verbs/errors.js';
import type { Mr } from '../../verbs/mr.js';
import {
  addressOf,
  connectionOf,
  DEFAULT_TARGET,
  deviceOf,
  type Scenario,
  type Step,
} from '../scenario.js';
import type { HammerEndpoint, HammerJob, HammerProcessResult } from './hammer-process.js';
import { HammerWindows } from './hammer-windows.js';
import type { ExtraPair, LoopbackPair } from './loopback.js';
import { pollCompletions } from './poll-completions.js';

/** Requests each QP keeps outstanding (below the default send queue depth of 64). */
const WINDOW = 16;
const HAMMER_TIMEOUT_MS = 120_000;

export interface HammerResult {
  /** `ok`, or the errno the first refused post got (nothing of that QP was sent). */
  readonly post: string;
  readonly succeeded: number;
  /** The fetched values of the successful requests, every QP's. */
  readonly fetched: bigint[];
}

type HammerStep = Extract<Step, { do: 'hammer' }>;

/** Runs a `hammer` step on `pair`. */
export async function hammer(
  scenario: Scenario,
  pair: LoopbackPair,
  remote: Mr,
  step: HammerStep,
): Promise<HammerResult> {
  return step.across === 'processes'
    ? hammerAcrossProcesses(scenario, pair, remote, step)
    : hammerInProcess(scenario, pair, remote, step);
}

async function hammerInProcess(
  scenario: Scenario,
  pair: LoopbackPair,
  remote: Mr,
  step: HammerStep,
): Promise<HammerResult> {
  const total = step.qps * step.count;
  const cq = pair.context.createCq({ cqe: step.qps * WINDOW * 2 });
  const extra: ExtraPair[] = [];
  let localMr: Mr | undefined;
  try {
    localMr = pair.pd.allocMr(total * 8, ['LOCAL_WRITE']);
    for (let i = 0; i < step.qps; i++)
      extra.push(await pair.addPair(cq, i, scenario.postPath === 'ex'));
    const requesters = extra.flatMap((e) => (e.requester === undefined ? [] : [e.requester]));
    const windows = new HammerWindows(
      requesters,
      step,
      WINDOW,
      localMr,
      remote.remote(DEFAULT_TARGET),
      scenario.postPath,
    );
    try {
      windows.postAll();
    } catch (error) {
      if (!(error instanceof VerbsError)) throw error;
      return { post: error.code, succeeded: 0, fetched: [] };
    }
    await pollCompletions(cq, total, Date.now() + HAMMER_TIMEOUT_MS, (wcs) => {
      for (const wc of wcs) windows.post(windows.complete(wc));
    });
    const fetched = windows.fetched();
    return { post: 'ok', succeeded: fetched.length, fetched };
  } finally {
    for (const e of extra) await e.close();
    localMr?.close();
    cq.close();
  }
}

/**
 * The compiled child module (hammer-process.js): next to this file when it runs from
 * dist/, in dist/ when the suite runs from its TypeScript sources (vitest).
 */
function childModulePath(): string {
  const here = fileURLToPath(import.meta.url);
  return here.endsWith('.ts')
    ? here.replace(/\/src\/interop\/kernel\/hammer\.ts$/, '/dist/interop/kernel/hammer-process.js')
    : here.replace(/hammer\.js$/, 'hammer-process.js');
}

/** One child process and its line reader. */
interface Child {
  readonly process: ChildProcess;
  readonly nextLine: () => Promise<string>;
  readonly stderr: string[];
}

function startChild(args: {
  device: string;
  psn: number;
  postPath: string;
  connect: string;
  address: string;
  gidIndex: number;
}): Child {
  const argv = [
    childModulePath(),
    args.device,
    String(args.psn),
    args.postPath,
    args.connect,
    args.address,
    String(args.gidIndex),
  ];
  const child = spawn(process.execPath, argv, { stdio: ['pipe', 'pipe', 'pipe'] });
  const stderr: string[] = [];
  child.stderr?.setEncoding('utf8').on('data', (s: string) => stderr.push(s));
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream })[
    Symbol.asyncIterator
  ]();
  return {
    process: child,
    stderr,
    nextLine: async () => {
      // A child that dies ends its stdout, which ends the iteration.
      const line = await lines.next();
      if (line.done === true) throw new Error(`hammer process ended: ${stderr.join('').trim()}`);
      return line.value;
    },
  };
}

/** Ends a child's stdin and waits for it to exit (killed after 10 s). */
async function stopChild(c: Child): Promise<void> {
  c.process.stdin?.end();
  if (c.process.exitCode !== null || c.process.signalCode !== null) return;
  await new Promise((resolve) => {
    const timer = setTimeout(() => c.process.kill('SIGKILL'), 10_000);
    c.process.once('exit', () => {
      clearTimeout(timer);
      resolve(undefined);
    });
  });
}

async function hammerAcrossProcesses(
  scenario: Scenario,
  pair: LoopbackPair,
  remote: Mr,
  step: HammerStep,
): Promise<HammerResult> {
  const responders: ExtraPair[] = [];
  const children: Child[] = [];
  const cq = pair.context.createCq({ cqe: 16 });
  const byHand = connectionOf(scenario) === 'by-hand';
  try {
    // A bound device (scenario.on): its chosen GID; a reference target: its first RoCE v2 one.
    const bound = scenario.on;
    const gid = !byHand
      ? undefined
      : bound === undefined
        ? pair.context.findGid()
        : (pair.context.gidTable(1).find((g) => g.index === bound.gidIndex) ??
          pair.context.findGid());
    for (let i = 0; i < step.qps; i++)
      children.push(
        startChild({
          device: deviceOf(scenario),
          address: addressOf(scenario),
          gidIndex: gid?.index ?? -1,
          psn: 0x100 * (i + 1),
          postPath: scenario.postPath,
          connect: byHand ? 'by-hand' : `rdma-cm:${pair.listenerPort}`,
        }),
      );
    // rdma_cm: accept every child's connection (in whatever order they come).
    if (!byHand) for (const _ of children) responders.push(await pair.acceptRemote(cq));
    const target = remote.remote(DEFAULT_TARGET);
    for (const [i, child] of children.entries()) {
      const endpoint = JSON.parse(await child.nextLine()) as HammerEndpoint;
      const psn = 0x100 * (i + 1) + 1;
      let peer = { qpNum: 0, psn: 0 };
      if (gid !== undefined) {
        const responder = pair.pd.createQp({ sendCq: cq });
        responders.push({ requester: undefined, responder, close: async () => responder.close() });
        connectRcByHand(responder, {
          sgidIndex: gid.index,
          remote: { qpNum: endpoint.qpNum, psn: endpoint.psn, gid: gid.gid },
          localPsn: psn,
          maxRdAtomic: 4,
          maxDestRdAtomic: 4,
        });
        peer = { qpNum: responder.qpNum, psn };
      }
      const job: HammerJob = {
        ...peer,
        addr: `0x${target.addr.toString(16)}`,
        rkey: target.rkey,
        count: step.count,
        add: `0x${step.add.toString(16)}`,
        window: WINDOW,
        postPath: scenario.postPath,
        timeoutMs: HAMMER_TIMEOUT_MS,
      };
      child.process.stdin?.write(`${JSON.stringify(job)}\n`);
    }
    const results = await Promise.all(
      children.map(async (c) => JSON.parse(await c.nextLine()) as HammerProcessResult),
    );
    const refused = results.find((r): r is { post: string } => 'post' in r);
    if (refused !== undefined) return { post: refused.post, succeeded: 0, fetched: [] };
    const fetched = results.flatMap((r) => ('fetched' in r ? r.fetched.map((v) => BigInt(v)) : []));
    return { post: 'ok', succeeded: fetched.length, fetched };
  } finally {
    await Promise.all(children.map(stopChild));
    for (const r of responders) await r.close();
    cq.close();
  }
}
