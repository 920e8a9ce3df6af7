/**
 * `rdma-interop bench verbs`: the cost of the N-API wrapper on real rxe0, each figure
 * printed with its ratio to perftest measured in the same run (same guest boot).
 *
 * - FetchAdd round-trip latency, busy polling (`cq.poll` in a loop), typical (median) of
 *   1000 iterations, once through `postSend` per iteration and once with a list prepared
 *   once (`Qp.prepare`); anchor `ib_atomic_lat -A FETCH_AND_ADD` t_typical.
 * - FetchAdd message rate: post lists of 16 (one doorbell, one signaled) kept in flight;
 *   anchor `ib_atomic_bw` MsgRate.
 * - RDMA Write with Immediate ping-pong latency (half round trip, busy polling); anchor
 *   `ib_write_lat` (perftest 6.06 has no --write_with_imm: plain write is the closest).
 *
 * Run it where rxe0 exists: `node dist/cli/main.js vm -- node dist/cli/main.js bench verbs`.
 */
import { spawn } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  type Context,
  type Cq,
  connectPairByHand,
  listDevices,
  type Mr,
  openDevice,
  type Pd,
  type Qp,
} from '../verbs/index.js';

const DEVICE = 'rxe0';
const ITERATIONS = 1000;

interface Pair {
  readonly ctx: Context;
  readonly pd: Pd;
  readonly cq: Cq;
  readonly a: Qp;
  readonly b: Qp;
  close(): void;
}

function loopback(): Pair {
  const ctx = openDevice(DEVICE);
  const gid = ctx.findGid({ type: 'RoCEv2' });
  const pd = ctx.allocPd();
  const cq = ctx.createCq({ cqe: 1024, channel: false });
  const opts = { sendCq: cq, maxSendWr: 256, maxRecvWr: 256 };
  const a = pd.createQp(opts);
  const b = pd.createQp(opts);
  connectPairByHand(a, b, gid, { aPsn: 1, bPsn: 2 });
  return {
    ctx,
    pd,
    cq,
    a,
    b,
    close() {
      a.close();
      b.close();
      cq.close();
      pd.close();
      ctx.close();
    },
  };
}

function median(xs: number[]): number {
  const s = [...xs].sort((x, y) => x - y);
  return s[Math.floor(s.length / 2)] ?? Number.NaN;
}

/**
 * FetchAdd latency in microseconds (median over ITERATIONS, busy polling); `prepared`
 * posts a list parsed once, otherwise each iteration goes through `postSend`.
 */
function fetchAddLatency(p: Pair, prepared: boolean): number {
  const target = p.pd.regMr(Buffer.alloc(8), ['LOCAL_WRITE', 'REMOTE_ATOMIC']);
  const old = p.pd.regMr(Buffer.alloc(8), ['LOCAL_WRITE']);
  const wr = {
    opcode: 'ATOMIC_FETCH_AND_ADD' as const,
    sgList: [old.sge()],
    remote: target.remote(),
    add: 1n,
  };
  const once = p.a.prepare(wr);
  const samples: number[] = [];
  for (let i = 0; i < ITERATIONS + 50; i++) {
    const t0 = process.hrtime.bigint();
    if (prepared) once.post();
    else p.a.postSend(wr);
    p.cq.pollUntil(1);
    if (i >= 50) samples.push(Number(process.hrtime.bigint() - t0) / 1000);
  }
  once.release();
  target.close();
  old.close();
  return median(samples);
}

/** FetchAdd message rate in Mpps with batched posts. */
function fetchAddRate(p: Pair): number {
  const target = p.pd.regMr(Buffer.alloc(8), ['LOCAL_WRITE', 'REMOTE_ATOMIC']);
  const old = p.pd.regMr(Buffer.alloc(8 * 16), ['LOCAL_WRITE']);
  const batch = Array.from({ length: 16 }, (_, i) => ({
    opcode: 'ATOMIC_FETCH_AND_ADD' as const,
    sgList: [old.sge(i * 8, 8)],
    remote: target.remote(),
    add: 1n,
    signaled: i === 15,
  }));
  const prepared = p.a.prepare(batch);
  const batches = 200;
  const t0 = process.hrtime.bigint();
  // Two lists in flight: the next one is queued while the device works on the current.
  prepared.post();
  for (let i = 1; i < batches; i++) {
    prepared.post();
    p.cq.pollUntil(1);
  }
  p.cq.pollUntil(1);
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  prepared.release();
  target.close();
  old.close();
  return (batches * 16) / seconds / 1e6;
}

/** Write-with-immediate ping-pong, half round trip in microseconds. */
function writeImmLatency(p: Pair): number {
  const bufA = p.pd.regMr(Buffer.alloc(8), ['LOCAL_WRITE', 'REMOTE_WRITE']);
  const bufB = p.pd.regMr(Buffer.alloc(8), ['LOCAL_WRITE', 'REMOTE_WRITE']);
  // Unsignaled, with a signaled one every 64th iteration to retire the send queue (as
  // perftest's CQ moderation does); waitRecv skips the send completions it meets.
  const write = (from: Pair['a'], src: Mr, dst: Mr, signaled: boolean) =>
    from.prepare({
      opcode: 'RDMA_WRITE_WITH_IMM',
      sgList: [src.sge()],
      remote: dst.remote(),
      immData: 7306,
      signaled,
    });
  const ping = [write(p.a, bufA, bufB, false), write(p.a, bufA, bufB, true)] as const;
  const pong = [write(p.b, bufB, bufA, false), write(p.b, bufB, bufA, true)] as const;
  const samples: number[] = [];
  // Receives are posted ahead in lists of 100 (one call each), outside the timed part.
  const recvs = Array.from({ length: 100 }, () => ({ sgList: [] }));
  for (let i = 0; i < ITERATIONS + 50; i++) {
    if (i % 100 === 0) {
      p.b.postRecv(recvs);
      p.a.postRecv(recvs);
    }
    const signaled = i % 64 === 63 ? 1 : 0;
    const t0 = process.hrtime.bigint();
    ping[signaled].post();
    waitRecv(p.cq, p.b.qpNum);
    pong[signaled].post();
    waitRecv(p.cq, p.a.qpNum);
    if (i >= 50) samples.push(Number(process.hrtime.bigint() - t0) / 2000);
  }
  for (const prepared of [...ping, ...pong]) prepared.release();
  bufA.close();
  bufB.close();
  return median(samples);
}

function waitRecv(cq: Cq, qpNum: number): void {
  for (;;) {
    const [wc] = cq.pollUntil(1);
    if (wc !== undefined && wc.qpNum === qpNum && wc.opcode === 'RECV_RDMA_WITH_IMM') return;
  }
}

const rawOutputs: string[] = [];

/** Runs a perftest server and client on DEVICE and returns the client's stdout. */
async function perftest(tool: string, args: string[], port: number): Promise<string> {
  const common = ['-d', DEVICE, '-x', '1', '-F', '-p', String(port), ...args];
  const server = spawn(tool, common, { stdio: ['ignore', 'pipe', 'pipe'] });
  await sleep(1500);
  const client = spawn(tool, [...common, '127.0.0.1'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  client.stdout.on('data', (d: Buffer) => {
    out += d.toString();
  });
  const code = await new Promise<number | null>((resolve) => client.on('close', resolve));
  await new Promise((resolve) => {
    if (server.exitCode !== null) resolve(null);
    else server.on('close', resolve);
    setTimeout(() => {
      server.kill();
      resolve(null);
    }, 5000).unref();
  });
  if (code !== 0) throw new Error(`${tool} exited ${code}: ${out}`);
  rawOutputs.push(`${tool}:\n${out}`);
  return out;
}

/**
 * The columns of perftest's result line (the one after the header starting `#bytes`).
 * Header names may contain one space (`BW peak[MB/sec]`, `99% percentile[usec]`), so they
 * are matched as tokens, not split on whitespace.
 */
export function perftestColumns(out: string): Map<string, number> {
  const lines = out.split('\n').map((l) => l.trim());
  const h = lines.findIndex((l) => l.startsWith('#bytes'));
  const header = (lines[h] ?? '').match(/#\w+|[\w.%]+(?: \w+)?\[[^\]]+\]/g) ?? [];
  const values = (lines[h + 1] ?? '').split(/\s+/).map(Number);
  const cols = new Map<string, number>();
  header.forEach((name, i) => {
    const v = values[i];
    if (v !== undefined) cols.set(name, v);
  });
  return cols;
}

function column(cols: Map<string, number>, prefix: string): number {
  for (const [name, v] of cols) if (name.startsWith(prefix)) return v;
  return Number.NaN;
}

/**
 * Runs a perftest pair, retrying (up to twice, on the next port) when the wanted column
 * is not a finite number: under TCG perftest sometimes reports `inf` (its cycle-counter
 * calibration fails), which is a measurement failure, not a result.
 */
async function anchor(
  tool: string,
  args: string[],
  port: number,
  wanted: string,
): Promise<Map<string, number>> {
  let cols = new Map<string, number>();
  for (let attempt = 0; attempt < 3; attempt++) {
    cols = perftestColumns(await perftest(tool, args, port + 10 * attempt));
    if (Number.isFinite(column(cols, wanted))) return cols;
  }
  return cols;
}

/** Prints each of our figures with its perftest anchor and the ratio. */
export async function runBenchmark(): Promise<void> {
  if (!listDevices().some((d) => d.name === DEVICE)) {
    process.stdout.write(
      `bench verbs: skipped, no ${DEVICE} here (run: node dist/cli/main.js vm -- node dist/cli/main.js bench verbs)\n`,
    );
    return;
  }
  const p = loopback();
  let ours: { faLat: number; faLatPrepared: number; faRate: number; immLat: number };
  try {
    ours = {
      faLat: fetchAddLatency(p, false),
      faLatPrepared: fetchAddLatency(p, true),
      faRate: fetchAddRate(p),
      immLat: writeImmLatency(p),
    };
  } finally {
    p.close();
  }
  const atomicLat = await anchor(
    'ib_atomic_lat',
    ['-A', 'FETCH_AND_ADD', '-n', String(ITERATIONS)],
    18515,
    't_typical',
  );
  const atomicBw = await anchor(
    'ib_atomic_bw',
    ['-A', 'FETCH_AND_ADD', '-n', '3200'],
    18516,
    'MsgRate',
  );
  const writeLat = await anchor('ib_write_lat', ['-n', String(ITERATIONS)], 18517, 't_typical');
  const rows: [string, number, string, number, boolean][] = [
    [
      'FetchAdd latency (us, typical)',
      ours.faLat,
      'ib_atomic_lat t_typical',
      column(atomicLat, 't_typical'),
      false,
    ],
    [
      'FetchAdd latency, prepared (us)',
      ours.faLatPrepared,
      'ib_atomic_lat t_typical',
      column(atomicLat, 't_typical'),
      false,
    ],
    [
      'FetchAdd rate (Mpps, lists of 16)',
      ours.faRate,
      'ib_atomic_bw MsgRate',
      column(atomicBw, 'MsgRate'),
      true,
    ],
    [
      'write-with-imm latency (us, typical)',
      ours.immLat,
      'ib_write_lat t_typical',
      column(writeLat, 't_typical'),
      false,
    ],
  ];
  process.stdout.write(
    `bench verbs on ${DEVICE} (ratio = ours / perftest; latency: lower is better)\n`,
  );
  if (rows.some((r) => Number.isNaN(r[3])))
    process.stdout.write(`  (perftest output not parsed; raw:)\n${rawOutputs.join('\n')}\n`);
  for (const [name, value, anchorName, anchor, higherBetter] of rows) {
    const ratio = value / anchor;
    process.stdout.write(
      `  ${name.padEnd(38)} ${value.toFixed(3).padStart(10)}   ${anchorName.padEnd(24)} ${anchor.toFixed(3).padStart(10)}   ratio ${ratio.toFixed(2)}${higherBetter ? ' (higher is better)' : ''}\n`,
    );
  }
}
