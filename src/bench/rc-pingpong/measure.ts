/**
 * The Send/Receive ping-pong figures (issue 34): `ibv_rc_pingpong` against itself (the
 * anchor) and the wrapper's ping-pong (peer.ts) against `ibv_rc_pingpong`, each as the
 * client, the figure being the client's `usec/iter` (from its first post to its last
 * completion, over `iters` exchanges), busy poll or with completion events (`-e`).
 *
 * Run directly (`node dist/bench/rc-pingpong/measure.js <size> <iters> <poll|events>
 * [rounds] [device] [exchange|everyday]`) it prints both forms and the C pair (or the one
 * form named), for profiling in the guest; `profile <size> <iters> [rounds]` times each
 * call of the everyday loop, `events-profile <size> <iters> [rounds]` the event forms.
 */
import { performance } from 'node:perf_hooks';
import { openDevice } from '../../verbs/index.js';
import { watchedStep } from '../stall/stall-watch.js';
import { rcPingPongArgs, startExample, usecPerIter } from './c-example.js';
import { type LoopForm, rcPingPong, type WaitMode } from './peer.js';

export const RC_PINGPONG = 'ibv_rc_pingpong';

/** The RoCEv2 GID index of `device` (the one the wrapper's side uses too). */
export function roceGidIndex(device: string): number {
  const ctx = openDevice(device);
  try {
    return ctx.findGid({ type: 'RoCEv2' }).index;
  } finally {
    ctx.close();
  }
}

export interface PingPongCase {
  readonly device: string;
  readonly size: number;
  readonly iters: number;
  readonly mode: WaitMode;
  readonly port: number;
  /** The wrapper's loop (default `everyday`: postRecv, postSend, pollUntil / cq.next). */
  readonly form?: LoopForm;
}

/**
 * How long one ping-pong (its C sides and the wrapper's) may run before the stall watch
 * kills its C programs (TCG, host load 1: 1 to 5 s each).
 */
const PINGPONG_LIMIT_MS = 90_000;

const caseLabel = (c: PingPongCase) =>
  `${c.size} B, ${c.mode}, ${c.iters} iterations, port ${c.port}`;

/** `ibv_rc_pingpong` against itself: the client's usec/iter (NaN when a side failed). */
export function cWithC(c: PingPongCase, gidIndex: number): Promise<number> {
  return watchedStep(`ibv_rc_pingpong pair (${caseLabel(c)})`, PINGPONG_LIMIT_MS, () =>
    cPair(c, gidIndex),
  );
}

async function cPair(c: PingPongCase, gidIndex: number): Promise<number> {
  const common = { ...c, gidIndex, events: c.mode === 'events' };
  const server = startExample(RC_PINGPONG, rcPingPongArgs(common));
  // The client retries nothing: give the server time to listen (under TCG, a second).
  await new Promise((r) => setTimeout(r, 1500));
  const client = startExample(RC_PINGPONG, rcPingPongArgs({ ...common, server: '127.0.0.1' }));
  const [s, k] = await Promise.all([server.done, client.done]);
  if (s.code !== 0 || k.code !== 0) {
    process.stderr.write(`ibv_rc_pingpong pair failed: ${s.err}${k.err}\n`);
    return Number.NaN;
  }
  return usecPerIter(k.out);
}

/**
 * How long the C server may take to exit once the wrapper's client has done its last
 * exchange. Its last step is one completion of its own; under load on rxe0 a server on
 * completion events (-e) was seen blocked in ib_uverbs_event_read for good after a
 * 500-iteration 4 KiB exchange (s43, 6.1, host load 1-7), which hung `bench verbs` until
 * the guest's time limit. The figure is then not measured (NaN), as cWithC's failed pairs.
 */
const SERVER_EXIT_GRACE_MS = 20_000;

/**
 * The wrapper's ping-pong as the client of `ibv_rc_pingpong`: its usec/iter (NaN when
 * the C server did not exit after the last exchange, or was killed by the stall watch).
 */
export function nodeWithC(c: PingPongCase, gidIndex: number): Promise<number> {
  return watchedStep(
    `${c.form ?? 'everyday'} loop, client of ibv_rc_pingpong (${caseLabel(c)})`,
    PINGPONG_LIMIT_MS,
    () => nodeClient(c, gidIndex),
  );
}

async function nodeClient(c: PingPongCase, gidIndex: number): Promise<number> {
  const server = startExample(
    RC_PINGPONG,
    rcPingPongArgs({ ...c, gidIndex, events: c.mode === 'events' }),
  );
  const notMeasured = (why: string) => {
    server.child.kill('SIGKILL');
    process.stderr.write(
      `ibv_rc_pingpong server (${caseLabel(c)}), ${c.form ?? 'everyday'} client: ${why}: this figure not measured\n`,
    );
    return Number.NaN;
  };
  let r: Awaited<ReturnType<typeof rcPingPong>>;
  try {
    r = await rcPingPong({ ...c, server: '127.0.0.1' });
  } catch (e) {
    // A wait of ours that timed out, or a server the stall watch killed: a figure not
    // measured, with its reason, rather than the end of every other figure.
    return notMeasured(e instanceof Error ? e.message : String(e));
  }
  let grace: NodeJS.Timeout | undefined;
  const s = await Promise.race([
    server.done,
    new Promise<undefined>((resolve) => {
      grace = setTimeout(() => resolve(undefined), SERVER_EXIT_GRACE_MS);
    }),
  ]);
  clearTimeout(grace);
  if (s === undefined)
    return notMeasured(
      `still running ${SERVER_EXIT_GRACE_MS / 1000} s after the Node client's last exchange: killed`,
    );
  if (s.code !== 0) return notMeasured(`exited ${s.code ?? 'on a signal'}: ${s.err.trim()}`);
  // The data is the wrapper's correctness, not a measurement: a wrong byte ends the run.
  for (let i = 0; i < c.size; i++)
    if (r.received[i] !== 0x7b) throw new Error(`byte ${i} of the last message is not 0x7b`);
  return r.usecPerIter;
}

/**
 * What one N-API crossing costs here: an empty `cq.poll(1)` (one bound call, nothing
 * polled) timed over `n` calls, in us per call.
 */
function crossingCost(device: string, n: number): number {
  const ctx = openDevice(device);
  try {
    const cq = ctx.createCq({ cqe: 4 });
    for (let i = 0; i < n; i++) cq.poll(1);
    const t0 = performance.now();
    for (let i = 0; i < n; i++) cq.poll(1);
    return ((performance.now() - t0) * 1000) / n;
  } finally {
    ctx.close();
  }
}

/** The profile: where the time of an exchange goes (us per exchange). */
async function profileRun(c: PingPongCase, gidIndex: number): Promise<void> {
  const acc = new Float64Array(4);
  const server = startExample(RC_PINGPONG, rcPingPongArgs({ ...c, gidIndex, events: false }));
  const r = await rcPingPong({ ...c, server: '127.0.0.1', profile: acc });
  await server.done;
  const per = Array.from(acc, (v) => (v / c.iters).toFixed(2));
  const rest = r.usecPerIter - acc.reduce((a, b) => a + b, 0) / c.iters;
  process.stdout.write(
    `profile size ${c.size}: ${r.usecPerIter.toFixed(2)} us/exchange = postSend ${per[0]} + postRecv ${per[1]} + poll to Send wc ${per[2]} + poll to Recv wc ${per[3]} + rest ${rest.toFixed(2)}\n`,
  );
}

/**
 * The event path's profile: the exchange on events with every send signaled and one in
 * two, with and without a timeout per wait, the everyday loop, and `ibv_rc_pingpong -e`:
 * us per exchange and the channel's wake-ups per exchange.
 */
async function eventsProfile(size: number, iters: number, rounds: number): Promise<void> {
  const gid = roceGidIndex('rxe0');
  let port = 19700;
  const base = { device: 'rxe0', size, iters, mode: 'events' as const };
  for (let r = 0; r < rounds; r++) {
    const parts: string[] = [];
    for (const [label, extra] of [
      ['exchange every send signaled', { signalEvery: 1 }],
      ['exchange signalEvery 8 (its default here)', {}],
      ['exchange signalEvery 8, no timeout', { waitTimeoutMs: 0 }],
    ] as const) {
      const server = startExample(
        RC_PINGPONG,
        rcPingPongArgs({ ...base, gidIndex: gid, port, events: true }),
      );
      const res = await rcPingPong({
        ...base,
        ...extra,
        form: 'exchange',
        port: port++,
        server: '127.0.0.1',
      });
      await server.done;
      parts.push(
        `${label} ${res.usecPerIter.toFixed(1)} us (${((res.wakeUps ?? 0) / iters).toFixed(2)} wake-ups)`,
      );
    }
    const everyday = await nodeWithC({ ...base, port: port++ }, gid);
    const cc = await cWithC({ ...base, port: port++ }, gid);
    process.stdout.write(
      `events ${size} B: ${parts.join(', ')}, everyday ${everyday.toFixed(1)} us, C -e pair ${cc.toFixed(1)} us\n`,
    );
  }
}

async function main(): Promise<void> {
  if (process.argv[2] === 'events-profile') {
    const [, size = '64', iters = '500', rounds = '3'] = process.argv.slice(2);
    await eventsProfile(Number(size), Number(iters), Number(rounds));
    return;
  }
  if (process.argv[2] === 'profile') {
    const [, size = '64', iters = '3000', rounds = '4'] = process.argv.slice(2);
    const gid = roceGidIndex('rxe0');
    for (let r = 0; r < Number(rounds); r++) {
      const c: PingPongCase = {
        device: 'rxe0',
        size: Number(size),
        iters: Number(iters),
        mode: 'poll',
        port: 19500 + 3 * r,
      };
      await profileRun(c, gid);
      const ex = await nodeWithC({ ...c, form: 'exchange', port: c.port + 1 }, gid);
      const cc = await cWithC({ ...c, port: c.port + 2 }, gid);
      process.stdout.write(
        `profile size ${size}: exchange.run() ${ex.toFixed(2)} us/exchange (one native call); ibv_rc_pingpong pair ${cc.toFixed(2)}; one N-API crossing (empty cq.poll) ${crossingCost('rxe0', 5000).toFixed(2)} us\n`,
      );
    }
    return;
  }
  const [size = '64', iters = '2000', mode = 'poll', rounds = '3', device = 'rxe0', only] =
    process.argv.slice(2);
  const m = mode === 'events' ? 'events' : 'poll';
  const gid = roceGidIndex(device);
  let port = 19000;
  for (let r = 0; r < Number(rounds); r++) {
    const c: PingPongCase = { device, size: Number(size), iters: Number(iters), mode: m, port };
    if (only === 'exchange' || only === 'everyday') {
      // One form alone (for `perf record` of it): its us per exchange.
      const us = await nodeWithC({ ...c, form: only, port: port++ }, gid);
      process.stdout.write(`size ${size} ${m}: ${only} ${us.toFixed(2)} us\n`);
      continue;
    }
    const node = await nodeWithC({ ...c, port: port++ }, gid);
    const ex = await nodeWithC({ ...c, form: 'exchange', port: port++ }, gid);
    const cc = await cWithC({ ...c, port: port++ }, gid);
    process.stdout.write(
      `size ${size} ${m}: everyday ${node.toFixed(2)} us (${(node / cc).toFixed(2)}x), exchange ${ex.toFixed(2)} us (${(ex / cc).toFixed(2)}x), C-with-C ${cc.toFixed(2)} us\n`,
    );
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
