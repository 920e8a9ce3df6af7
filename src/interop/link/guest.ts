/**
 * The two halves of a link scenario, each in its own guest: the requester (guest A) posts
 * the program's work requests, the responder (guest B) owns the target MR and the
 * receives. rxe QPs are connected by hand with the peer's GID, QPN and PSN from the
 * control channel (protocol.ts); siw QPs through rdma_cm across the iWARP link.
 */
import { writeFileSync } from 'node:fs';
import { connect as connectTcp, createServer, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { type CmId, EventChannel } from '../../verbs/cm.js';
import type { WorkCompletion } from '../../verbs/completion.js';
import { connectRcByHand } from '../../verbs/connect.js';
import type { Cq } from '../../verbs/cq.js';
import { type Context, openDevice } from '../../verbs/device.js';
import type { Mr } from '../../verbs/mr.js';
import type { Pd } from '../../verbs/pd.js';
import type { Qp } from '../../verbs/qp.js';
import { DeviceSide, requesterMemory } from '../kernel/device-side.js';
import { traitsOf } from '../operations.js';
import { type HammerObservation, runProgram } from '../program.js';
import {
  GUARD,
  initialBuffer,
  MR_LENGTH,
  receiveSgeOf,
  recvIdOf,
  type Scenario,
  workRequestsOf,
  wrIdOf,
} from '../scenario.js';
import { lostWireOf } from './fault-scenarios.js';
import { hammerCqe, hammerStepOf, linkHammer } from './hammer.js';
import {
  CONTROL_PORT,
  type ControlMessage,
  encodeMessage,
  type LinkCompletion,
  type LinkObservation,
  MessageLines,
  type ReadyMessage,
} from './protocol.js';
import {
  LINK_MIN_RNR_TIMER,
  LINK_REQUESTER_PSN,
  LINK_RESPONDER_PSN,
  linkScenarioById,
} from './scenarios.js';

/** The guests' addresses on each link (src/runtime/pair.ts PAIR_LINKS). */
export const LINK_ADDRESSES = {
  rxe0: ['192.0.2.1', '192.0.2.2'],
  siw0: ['198.51.100.1', '198.51.100.2'],
} as const;

const IRD_ORD = 4;
/**
 * The requester's local ACK timeout (IBTA 4.096 us x 2^18, about 1.07 s). The default 14
 * (67 ms) is shorter than a round trip between two TCG guests on a loaded host (perftest
 * measured up to 57 ms), so rxe retransmitted requests the responder had already answered.
 */
const ACK_TIMEOUT = 18;
/**
 * A hammer program's ACK timeout (IBTA 4.096 us x 2^16, about 268 ms): still four times
 * the slowest round trip measured, short enough that the losses of a faulty wire (each
 * costs one timeout) keep 1000 FetchAdds within a minute. A premature retry is only one
 * more duplicate, which the responder must answer from its saved result anyway.
 */
const HAMMER_ACK_TIMEOUT = 16;

/** The first PSN of the `i`-th further QP of a hammer program (0 = the scenario's own). */
function hammerPsn(first: number, i: number): number {
  return (first + 0x1000 * i) & 0xffffff;
}

/** How many QPs beyond the scenario's own its hammer step needs. */
function extraQpsOf(scenario: Scenario): number {
  return Math.max(0, (hammerStepOf(scenario)?.qps ?? 1) - 1);
}
const COMPLETION_TIMEOUT_MS = 10_000;
const MESSAGE_TIMEOUT_MS = 60_000;
/** How long guest A keeps trying to reach guest B's control port (B may boot later). */
const CONTROL_CONNECT_MS = 180_000;

function completionOf(wc: WorkCompletion, fetched?: bigint, elapsedMs?: number): LinkCompletion {
  return {
    ...(elapsedMs === undefined ? {} : { elapsedMs: Math.round(elapsedMs) }),
    wrId: wc.wrId.toString(),
    status: wc.status,
    ...(wc.ok && wc.opcode !== undefined ? { opcode: wc.opcode } : {}),
    byteLen: wc.byteLen,
    ...(wc.immData === undefined ? {} : { imm: wc.immData }),
    ...(fetched === undefined ? {} : { fetched: fetched.toString() }),
  };
}

async function poll(cq: Cq, count: number, timeoutMs: number): Promise<WorkCompletion[]> {
  const got: WorkCompletion[] = [];
  const deadline = Date.now() + timeoutMs;
  while (got.length < count && Date.now() < deadline) {
    got.push(...cq.poll(count - got.length));
    if (got.length < count) await sleep(1);
  }
  return got;
}

function send(socket: Socket, message: ControlMessage): void {
  socket.write(encodeMessage(message));
}

async function expect<T extends ControlMessage['type']>(
  lines: MessageLines,
  type: T,
): Promise<Extract<ControlMessage, { type: T }>> {
  const message = await lines.next(MESSAGE_TIMEOUT_MS);
  if (message.type !== type) throw new Error(`expected '${type}', got '${message.type}'`);
  return message as Extract<ControlMessage, { type: T }>;
}

/** Closers in reverse order, errors ignored (an earlier error is the one to report). */
class Teardown {
  readonly #steps: (() => unknown)[] = [];
  add<T>(resource: T, close: (r: T) => unknown): T {
    this.#steps.push(() => close(resource));
    return resource;
  }
  async run(): Promise<void> {
    for (const step of this.#steps.splice(0).reverse()) {
      try {
        await step();
      } catch {
        // best effort
      }
    }
  }
}

function scenarioOf(id: string): Scenario {
  const scenario = linkScenarioById(id);
  if (scenario === undefined) throw new Error(`unknown link scenario ${id}`);
  return scenario;
}

/** Receives the program posts, in order: where each lands and how long it is. */
function receivesOf(scenario: Scenario): { at: number; length: number }[] {
  return scenario.program.flatMap((s) =>
    s.do === 'post-recv' ? [receiveSgeOf(scenario.device, s.for)] : [],
  );
}

// ---------------------------------------------------------------- guest B: the responder

/** Guest B: serves scenarios until guest A says `bye`. */
export async function serveResponder(): Promise<void> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(CONTROL_PORT, LINK_ADDRESSES.rxe0[1], () => resolve());
  });
  const socket = await new Promise<Socket>((resolve) => server.once('connection', resolve));
  server.close();
  const lines = new MessageLines();
  socket.on('data', (chunk: Buffer) => lines.push(chunk));
  let rxe: { context: Context; pd: Pd } | undefined;
  try {
    for (;;) {
      const message = await lines.next(10 * MESSAGE_TIMEOUT_MS);
      if (message.type === 'bye') break;
      if (message.type !== 'setup') throw new Error(`expected 'setup', got '${message.type}'`);
      const scenario = scenarioOf(message.id);
      if (scenario.device === 'rxe0') {
        if (rxe === undefined) {
          const context = openDevice('rxe0');
          rxe = { context, pd: context.allocPd() };
        }
        await respondRxe(scenario, message, rxe, socket, lines);
      } else {
        await respondSiw(scenario, socket, lines);
      }
    }
  } finally {
    rxe?.pd.close();
    rxe?.context.close();
    socket.end();
  }
}

/**
 * The responder's memory: the scenario's initial bytes, of which the middle MR_LENGTH are
 * registered and a guard word sits on each side (addon-owned, so safe on every Node).
 */
function targetMemory(scenario: Scenario, pd: Pd, teardown: Teardown): { mr: Mr; buffer: Buffer } {
  const initial = initialBuffer(scenario);
  const mr = teardown.add(
    pd.allocMr(initial.length, scenario.remoteAccess, { offset: GUARD, length: MR_LENGTH }),
    (m) => m.close(),
  );
  mr.allocation.set(initial);
  return { mr, buffer: mr.allocation };
}

function postReceives(scenario: Scenario, qp: Qp, mr: Mr): number {
  const receives = receivesOf(scenario);
  receives.forEach((r, i) => {
    qp.postRecv({ wrId: recvIdOf(i), sgList: r.length === 0 ? [] : [mr.sge(r.at, r.length)] });
  });
  return receives.length;
}

async function finish(
  scenario: Scenario,
  socket: Socket,
  lines: MessageLines,
  cq: Cq,
  receives: number,
  buffer: Buffer,
): Promise<void> {
  const done = await expect(lines, 'done');
  // siw completes a Send at the requester once TCP has it, before the responder has placed
  // it: wait (up to the completion timeout) for every receive the requester's successful
  // requests consumed; a short wait beyond them shows a stray completion.
  const consumed = Math.min(done.consumed ?? 0, receives);
  const wcs = await poll(cq, consumed, COMPLETION_TIMEOUT_MS);
  wcs.push(...(await poll(cq, Math.max(receives, 1) - wcs.length, 200)));
  send(socket, {
    type: 'finished',
    id: scenario.id,
    completions: wcs.map((wc) => completionOf(wc)),
    memory: buffer.toString('hex'),
  });
}

async function respondRxe(
  scenario: Scenario,
  setup: Extract<ControlMessage, { type: 'setup' }>,
  device: { context: Context; pd: Pd },
  socket: Socket,
  lines: MessageLines,
): Promise<void> {
  const teardown = new Teardown();
  try {
    const cq = teardown.add(device.context.createCq({ cqe: 16 }), (c) => c.close());
    const qp = teardown.add(device.pd.createQp({ sendCq: cq }), (q) => q.close());
    const { mr, buffer } = targetMemory(scenario, device.pd, teardown);
    const gid = device.context.findGid({ ipv4: LINK_ADDRESSES.rxe0[1] });
    const extras = (setup.extraQpNums ?? []).map((qpNum, i) => {
      const extra = teardown.add(device.pd.createQp({ sendCq: cq }), (q) => q.close());
      connectRcByHand(extra, {
        remote: {
          qpNum,
          psn: hammerPsn(setup.psn ?? 0, i + 1),
          gid: Buffer.from(setup.gid ?? '', 'hex'),
        },
        localPsn: hammerPsn(LINK_RESPONDER_PSN, i + 1),
        sgidIndex: gid.index,
        maxRdAtomic: IRD_ORD,
        maxDestRdAtomic: IRD_ORD,
        minRnrTimer: LINK_MIN_RNR_TIMER,
      });
      return extra;
    });
    connectRcByHand(qp, {
      remote: {
        qpNum: setup.qpNum ?? 0,
        psn: setup.psn ?? 0,
        gid: Buffer.from(setup.gid ?? '', 'hex'),
      },
      localPsn: LINK_RESPONDER_PSN,
      sgidIndex: gid.index,
      maxRdAtomic: IRD_ORD,
      maxDestRdAtomic: IRD_ORD,
      minRnrTimer: LINK_MIN_RNR_TIMER,
    });
    const receives = postReceives(scenario, qp, mr);
    send(socket, {
      type: 'ready',
      id: scenario.id,
      qpNum: qp.qpNum,
      psn: LINK_RESPONDER_PSN,
      gid: gid.gid.toString('hex'),
      addr: mr.addr.toString(),
      rkey: mr.rkey,
      ...(extras.length === 0 ? {} : { extraQpNums: extras.map((q) => q.qpNum) }),
    });
    await finish(scenario, socket, lines, cq, receives, buffer);
  } finally {
    await teardown.run();
  }
}

async function respondSiw(scenario: Scenario, socket: Socket, lines: MessageLines): Promise<void> {
  const teardown = new Teardown();
  try {
    const channel = teardown.add(new EventChannel(), (c) => c.close());
    const listener = teardown.add(channel.createId(), (id) => id.close());
    listener.bindAddr(LINK_ADDRESSES.siw0[1], 0);
    listener.listen();
    const context = listener.context();
    const pd = teardown.add(context.allocPd(), (p) => p.close());
    const cq = teardown.add(context.createCq({ cqe: 16 }), (c) => c.close());
    const { mr, buffer } = targetMemory(scenario, pd, teardown);
    send(socket, {
      type: 'ready',
      id: scenario.id,
      port: listener.localPort,
      addr: mr.addr.toString(),
      rkey: mr.rkey,
    });
    const request = await listener.nextConnectRequest({ timeoutMs: MESSAGE_TIMEOUT_MS });
    const id: CmId = teardown.add(request.id, (i) => i.close());
    const qp = teardown.add(id.createQp(pd, { sendCq: cq }), (q) => q.close());
    const receives = postReceives(scenario, qp, mr);
    await id.accept({ initiatorDepth: IRD_ORD, responderResources: IRD_ORD });
    await finish(scenario, socket, lines, cq, receives, buffer);
    // The requester disconnects on `finished` too: both ends at once (kernel-runtime.md).
    await id.disconnect().catch(() => {});
  } finally {
    await teardown.run();
  }
}

// ---------------------------------------------------------------- guest A: the requester

async function connectControl(): Promise<Socket> {
  const deadline = Date.now() + CONTROL_CONNECT_MS;
  for (;;) {
    try {
      return await new Promise<Socket>((resolve, reject) => {
        const socket = connectTcp(CONTROL_PORT, LINK_ADDRESSES.rxe0[1]);
        socket.once('connect', () => resolve(socket));
        socket.once('error', reject);
      });
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await sleep(250);
    }
  }
}

/** Guest A: runs `ids` against guest B and writes the observations to `outFile`. */
export async function driveRequester(ids: readonly string[], outFile: string): Promise<void> {
  const socket = await connectControl();
  const lines = new MessageLines();
  socket.on('data', (chunk: Buffer) => lines.push(chunk));
  const observations: LinkObservation[] = [];
  const context = openDevice('rxe0');
  const pd = context.allocPd();
  try {
    for (const id of ids) {
      const scenario = scenarioOf(id);
      process.stderr.write(`link: ${id}\n`);
      try {
        observations.push(
          scenario.device === 'rxe0'
            ? await requestRxe(scenario, { context, pd }, socket, lines)
            : await requestSiw(scenario, socket, lines),
        );
      } catch (error) {
        // The control channel is out of step after a failure: stop here.
        observations.push({
          id,
          remote: { addr: '0', rkey: 0 },
          local: { addr: '0', lkey: 0 },
          post: '—',
          requester: [],
          responder: [],
          memory: '',
          error: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
        });
        break;
      }
    }
    send(socket, { type: 'bye' });
  } finally {
    writeFileSync(outFile, `${JSON.stringify(observations, null, 2)}\n`);
    pd.close();
    context.close();
    socket.end();
  }
}

/** How many of the requester's successful requests consumed a receive at the responder. */
function consumedBy(scenario: Scenario, observed: Pick<LinkObservation, 'requester'>): number {
  const operations = workRequestsOf(scenario);
  return observed.requester.filter((wc) => {
    const op = operations.find((_, i) => wrIdOf(i).toString() === wc.wrId);
    return (
      wc.status === 'SUCCESS' && op !== undefined && traitsOf(op.kind).consumesReceive !== null
    );
  }).length;
}

interface RequesterEnd {
  readonly qp: Qp;
  readonly cq: Cq;
  readonly pd: Pd;
  /** A hammer program's further QPs (on the same CQ). */
  readonly extras?: readonly Qp[];
}

/** Guest A's half of the program: the device side with the responder in guest B. */
async function runRequests(
  scenario: Scenario,
  end: RequesterEnd,
  ready: ReadyMessage,
  teardown: Teardown,
): Promise<Pick<LinkObservation, 'local' | 'post' | 'badWr' | 'requester' | 'hammer'>> {
  const local = requesterMemory(
    scenario,
    (length, access) => teardown.add(end.pd.allocMr(length, access), (m) => m.close()),
    ['LOCAL_WRITE'],
  );
  const remote = { addr: BigInt(ready.addr), rkey: ready.rkey };
  let hammered: HammerObservation | undefined;
  const side = new DeviceSide({
    scenario,
    requester: { qp: end.qp, cq: end.cq },
    local,
    remote,
    hammer: async (step) => {
      hammered = await linkHammer(
        scenario,
        step,
        [end.qp, ...(end.extras ?? [])],
        end.cq,
        (length) => teardown.add(end.pd.allocMr(length, ['LOCAL_WRITE']), (m) => m.close()),
        remote,
      );
      return hammered;
    },
  });
  await runProgram(scenario, side);
  const [post] = side.posts;
  const hammer = hammered as HammerObservation | undefined;
  return {
    ...(hammer === undefined
      ? {}
      : {
          hammer: {
            post: hammer.post,
            succeeded: hammer.succeeded,
            fetched: hammer.fetched.map(String),
            before: hammer.before.toString(),
          },
        }),
    local: { addr: local.addr.toString(), lkey: local.lkey },
    post: post?.result ?? 'ok',
    ...(post?.badWr === undefined ? {} : { badWr: post.badWr }),
    requester: side.polled.requester.map(({ wc, fetched, elapsedMs }) =>
      completionOf(wc, fetched, elapsedMs),
    ),
  };
}

async function requestRxe(
  scenario: Scenario,
  device: { context: Context; pd: Pd },
  socket: Socket,
  lines: MessageLines,
): Promise<LinkObservation> {
  const teardown = new Teardown();
  try {
    const hammer = hammerStepOf(scenario);
    const cqe = hammer === undefined ? 16 : hammerCqe(hammer.qps);
    const cq = teardown.add(device.context.createCq({ cqe }), (c) => c.close());
    const createQp = () =>
      teardown.add(device.pd.createQp({ sendCq: cq, extended: scenario.postPath === 'ex' }), (q) =>
        q.close(),
      );
    const qp = createQp();
    const extras = Array.from({ length: extraQpsOf(scenario) }, createQp);
    const gid = device.context.findGid({ ipv4: LINK_ADDRESSES.rxe0[0] });
    send(socket, {
      type: 'setup',
      id: scenario.id,
      qpNum: qp.qpNum,
      psn: LINK_REQUESTER_PSN,
      gid: gid.gid.toString('hex'),
      ...(extras.length === 0 ? {} : { extraQpNums: extras.map((q) => q.qpNum) }),
    });
    const ready = await expect(lines, 'ready');
    const lost = lostWireOf(scenario);
    const timeout = lost?.timeout ?? (hammer === undefined ? ACK_TIMEOUT : HAMMER_ACK_TIMEOUT);
    extras.forEach((extra, i) => {
      connectRcByHand(extra, {
        remote: {
          qpNum: ready.extraQpNums?.[i] ?? 0,
          psn: hammerPsn(ready.psn ?? 0, i + 1),
          gid: Buffer.from(ready.gid ?? '', 'hex'),
        },
        localPsn: hammerPsn(LINK_REQUESTER_PSN, i + 1),
        sgidIndex: gid.index,
        maxRdAtomic: IRD_ORD,
        maxDestRdAtomic: IRD_ORD,
        timeout,
        rnrRetry: scenario.rnrRetry ?? 7,
      });
    });
    connectRcByHand(qp, {
      remote: {
        qpNum: ready.qpNum ?? 0,
        psn: ready.psn ?? 0,
        gid: Buffer.from(ready.gid ?? '', 'hex'),
      },
      localPsn: LINK_REQUESTER_PSN,
      sgidIndex: gid.index,
      maxRdAtomic: IRD_ORD,
      maxDestRdAtomic: IRD_ORD,
      timeout,
      ...(lost === undefined ? {} : { retryCnt: lost.retryCnt }),
      rnrRetry: scenario.rnrRetry ?? 7,
    });
    const observed = await runRequests(
      scenario,
      { qp, cq, pd: device.pd, extras },
      ready,
      teardown,
    );
    send(socket, { type: 'done', id: scenario.id, consumed: consumedBy(scenario, observed) });
    const finished = await expect(lines, 'finished');
    return {
      id: scenario.id,
      requesterQpn: qp.qpNum,
      responderQpn: ready.qpNum ?? 0,
      ...(extras.length === 0
        ? {}
        : {
            extraQpns: extras.map((q, i): [number, number] => [
              q.qpNum,
              ready.extraQpNums?.[i] ?? 0,
            ]),
          }),
      remote: { addr: ready.addr, rkey: ready.rkey },
      ...observed,
      responder: finished.completions,
      memory: finished.memory,
    };
  } finally {
    await teardown.run();
  }
}

async function requestSiw(
  scenario: Scenario,
  socket: Socket,
  lines: MessageLines,
): Promise<LinkObservation> {
  const teardown = new Teardown();
  try {
    send(socket, { type: 'setup', id: scenario.id });
    const ready = await expect(lines, 'ready');
    const channel = teardown.add(new EventChannel(), (c) => c.close());
    const client = teardown.add(channel.createId(), (id) => id.close());
    await client.resolveAddr(LINK_ADDRESSES.siw0[1], ready.port ?? 0);
    await client.resolveRoute();
    const context = client.context();
    const pd = teardown.add(context.allocPd(), (p) => p.close());
    const cq = teardown.add(context.createCq({ cqe: 16 }), (c) => c.close());
    const qp = teardown.add(client.createQp(pd, { sendCq: cq }), (q) => q.close());
    await client.connect({ initiatorDepth: IRD_ORD, responderResources: IRD_ORD });
    const observed = await runRequests(scenario, { qp, cq, pd }, ready, teardown);
    send(socket, { type: 'done', id: scenario.id, consumed: consumedBy(scenario, observed) });
    const finished = await expect(lines, 'finished');
    await client.disconnect().catch(() => {});
    return {
      id: scenario.id,
      serverPort: ready.port ?? 0,
      remote: { addr: ready.addr, rkey: ready.rkey },
      ...observed,
      responder: finished.completions,
      memory: finished.memory,
    };
  } finally {
    await teardown.run();
  }
}
