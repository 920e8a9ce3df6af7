/**
 * The two halves of a link scenario, each in its own guest: the requester (guest A) posts
 * the program's work requests, the responder (guest B) owns the target MR and the
 * receives. rxe QPs are connected by hand with the peer's GID, QPN and PSN from the
 * control channel (protocol.ts); siw QPs through rdma_cm across the iWARP link.
 */
import { writeFileSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { type CmId, EventChannel } from '../../verbs/cm.js';
import type { WorkCompletion } from '../../verbs/completion.js';
import { connectRcByHand, type PairSideParams } from '../../verbs/connect.js';
import type { Cq } from '../../verbs/cq.js';
import { type Context, openDevice } from '../../verbs/device.js';
import { closeQuietly } from '../../verbs/lifetime.js';
import type { Mr } from '../../verbs/mr.js';
import type { Pd } from '../../verbs/pd.js';
import type { Qp } from '../../verbs/qp.js';
import { DeviceSide, requesterMemory } from '../kernel/device-side.js';
import { traitsOf } from '../operations.js';
import { type HammerObservation, planOf, runProgram } from '../program.js';
import {
  type DeviceName,
  GUARD,
  initialBuffer,
  MR_LENGTH,
  receiveSgeOf,
  recvIdOf,
  type Scenario,
  workRequestsOf,
  wrIdOf,
  writeImmediateReceiveLength,
} from '../scenario.js';
import { lostWireOf, writeStreamOf } from './fault-scenarios.js';
import { hammerCqe, hammerStepOf, linkHammer } from './hammer.js';
import { connectControl, LinkRefusedError, type PairPlace, pairPlace, sourceOf } from './place.js';
import {
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
import { requestStream, STREAM_DONE_TIMEOUT_MS, StreamReceiver } from './write-stream.js';

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

/** A faulty-wire program (fault-scenarios.ts): many requests, where each loss costs a timeout. */
function isFaultProgram(scenario: Scenario): boolean {
  return scenario.family === 'link-faults';
}

/** The requester's CQ: a hammer's windows, a stream's window or the program's requests twice. */
function requesterCqe(scenario: Scenario): number {
  const hammer = hammerStepOf(scenario);
  if (hammer !== undefined) return hammerCqe(hammer.qps);
  const outstanding = writeStreamOf(scenario)?.window ?? workRequestsOf(scenario).length;
  return Math.max(16, outstanding * 2);
}

/** The first PSN of the `i`-th further QP of a hammer program (0 = the scenario's own). */
function hammerPsn(first: number, i: number): number {
  return (first + 0x1000 * i) & 0xffffff;
}

/**
 * Connects `qp`, the `index`th QP of this end (0 its own, then the hammer's extras, whose
 * PSNs `hammerPsn` spreads), by hand to the peer's QP `qpNum`, announced in `peer` (its
 * setup or ready message), with the link's IRD/ORD and this end's `side` attributes.
 */
function connectToPeer(
  qp: Qp,
  peer: { readonly psn?: number; readonly gid?: string },
  qpNum: number,
  at: { readonly index: number; readonly localPsn: number; readonly sgidIndex: number },
  side: PairSideParams,
): void {
  connectRcByHand(qp, {
    remote: {
      qpNum,
      psn: hammerPsn(peer.psn ?? 0, at.index),
      gid: Buffer.from(peer.gid ?? '', 'hex'),
    },
    localPsn: hammerPsn(at.localPsn, at.index),
    sgidIndex: at.sgidIndex,
    maxRdAtomic: IRD_ORD,
    maxDestRdAtomic: IRD_ORD,
    ...side,
  });
}

/** How many QPs beyond the scenario's own its hammer step needs. */
function extraQpsOf(scenario: Scenario): number {
  return Math.max(0, (hammerStepOf(scenario)?.qps ?? 1) - 1);
}
const COMPLETION_TIMEOUT_MS = 10_000;
const MESSAGE_TIMEOUT_MS = 60_000;

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
  timeoutMs = MESSAGE_TIMEOUT_MS,
): Promise<Extract<ControlMessage, { type: T }>> {
  const message = await lines.next(timeoutMs);
  if (message.type === 'refused' && type !== 'refused')
    throw new LinkRefusedError(`the responder refused ${message.id}: ${message.reason}`);
  if (message.type !== type) throw new Error(`expected '${type}', got '${message.type}'`);
  return message as Extract<ControlMessage, { type: T }>;
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

/**
 * The responder (guest B, or A when the roles swap): serves scenarios until the requester
 * says `bye`. `serves` says which targets this end has a device for (default: both); a
 * setup for another is refused (a `refused` message), and the requester stops there.
 */
export async function serveResponder(
  place: PairPlace = pairPlace('B'),
  serves: readonly DeviceName[] = ['rxe0', 'siw0'],
  onListening?: (port: number) => void,
): Promise<void> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(place.control.port, place.control.listen, () => resolve());
  });
  const address = server.address();
  onListening?.(typeof address === 'object' && address !== null ? address.port : 0);
  const waitMs = place.serveMs ?? 10 * MESSAGE_TIMEOUT_MS;
  let timer: NodeJS.Timeout | undefined;
  const socket = await new Promise<Socket>((resolve, reject) => {
    timer = setTimeout(() => {
      server.close();
      reject(new Error(`no requester connected within ${Math.round(waitMs / 1000)} s`));
    }, waitMs);
    server.once('connection', resolve);
  }).finally(() => clearTimeout(timer));
  server.close();
  const lines = new MessageLines();
  socket.on('data', (chunk: Buffer) => lines.push(chunk));
  try {
    for (;;) {
      const message = await lines.next(waitMs);
      if (message.type === 'bye') break;
      if (message.type !== 'setup') throw new Error(`expected 'setup', got '${message.type}'`);
      const scenario = linkScenarioById(message.id);
      if (scenario === undefined || !serves.includes(scenario.device)) {
        send(socket, {
          type: 'refused',
          id: message.id,
          reason:
            scenario === undefined
              ? `${message.id} is no link scenario this end knows (another version of rdma-interop?)`
              : `this end serves ${serves.map((d) => place.devices[d]).join(', ')}, no ${scenario.device === 'rxe0' ? 'RoCE' : 'iWARP'} device`,
        });
        continue;
      }
      if (scenario.device === 'rxe0') {
        await respondRxe(scenario, message, socket, lines, place);
      } else {
        await respondSiw(scenario, socket, lines, place);
      }
    }
  } finally {
    socket.end();
  }
}

/**
 * The responder's memory: the scenario's initial bytes, of which the middle MR_LENGTH are
 * registered and a guard word sits on each side (addon-owned, so safe on every Node).
 */
function targetMemory(scenario: Scenario, pd: Pd): { mr: Mr; buffer: Buffer } {
  const stream = writeStreamOf(scenario);
  if (stream !== undefined) {
    // A stream's buffer starts zeroed: a 0 is a byte never placed (write-stream.ts).
    const mr = pd.allocMr(stream.bytes, scenario.remoteAccess);
    mr.allocation.fill(0);
    return { mr, buffer: mr.allocation };
  }
  const initial = initialBuffer(scenario);
  const mr = pd.allocMr(initial.length, scenario.remoteAccess, {
    offset: GUARD,
    length: MR_LENGTH,
  });
  mr.allocation.set(initial);
  return { mr, buffer: mr.allocation };
}

/** The responder's receives: the program's, or a stream's first window (its receiver). */
function postReceives(scenario: Scenario, qp: Qp, mr: Mr, cq: Cq): number | StreamReceiver {
  const stream = writeStreamOf(scenario);
  if (stream !== undefined) {
    const slots =
      writeImmediateReceiveLength(scenario.device) === 0
        ? undefined
        : qp.pd.allocMr((stream.bytes / stream.chunk) * 8, ['LOCAL_WRITE']);
    const receiver = new StreamReceiver(stream, qp, cq, slots);
    receiver.postInitial();
    return receiver;
  }
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
  receives: number | StreamReceiver,
  buffer: Buffer,
): Promise<void> {
  if (receives instanceof StreamReceiver) {
    // The receives are reposted while the stream runs, until A is done and they came.
    const serving = receives.serve();
    // Awaited below; a failure meanwhile must not count as an unhandled rejection.
    serving.catch(() => {});
    // A sends `done` when its stream ended: every write completed, one failed, or no
    // completion came for STALL_MS (a stalled stream); its deadline is STREAM_TIMEOUT_MS.
    // A 64 MiB soak stream, or one that stalls, takes longer than MESSAGE_TIMEOUT_MS.
    const done = await expect(lines, 'done', STREAM_DONE_TIMEOUT_MS);
    receives.stop(done.consumed ?? 0);
    await serving;
    send(socket, {
      type: 'finished',
      id: scenario.id,
      completions: [],
      memory: '',
      stream: receives.observe(buffer),
    });
    return;
  }
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

/** The responder's CQ and receive queue: a stream's every receive, else the defaults. */
function responderCqe(scenario: Scenario): number {
  const stream = writeStreamOf(scenario);
  return stream === undefined ? 16 : stream.bytes / stream.chunk + 16;
}

function responderQueues(scenario: Scenario): { maxRecvWr?: number } {
  const stream = writeStreamOf(scenario);
  return stream === undefined ? {} : { maxRecvWr: stream.bytes / stream.chunk + 1 };
}

// Each scenario's resources hang off one root, a context of its own (rxe) or the rdma_cm
// event channel and the CM's context (siw), and close with it (the verbs cascade,
// src/verbs/lifetime.ts): QPs before their memory, CQs and PD.

async function respondRxe(
  scenario: Scenario,
  setup: Extract<ControlMessage, { type: 'setup' }>,
  socket: Socket,
  lines: MessageLines,
  place: PairPlace,
): Promise<void> {
  const context = openDevice(place.devices.rxe0);
  try {
    const pd = context.allocPd();
    const cq = context.createCq({ cqe: responderCqe(scenario) });
    const qp = pd.createQp({ sendCq: cq, ...responderQueues(scenario) });
    const { mr, buffer } = targetMemory(scenario, pd);
    const gid = context.findGid({ ipv4: place.addresses.rxe0.me });
    const at = (index: number) => ({ index, localPsn: LINK_RESPONDER_PSN, sgidIndex: gid.index });
    const side = { minRnrTimer: LINK_MIN_RNR_TIMER };
    const extras = (setup.extraQpNums ?? []).map((qpNum, i) => {
      const extra = pd.createQp({ sendCq: cq });
      connectToPeer(extra, setup, qpNum, at(i + 1), side);
      return extra;
    });
    connectToPeer(qp, setup, setup.qpNum ?? 0, at(0), side);
    const receives = postReceives(scenario, qp, mr, cq);
    send(socket, {
      type: 'ready',
      id: scenario.id,
      qpNum: qp.qpNum,
      psn: LINK_RESPONDER_PSN,
      gid: gid.gid.toString('hex'),
      addr: mr.addr.toString(),
      rkey: mr.rkey,
      ...(extras.length === 0 ? {} : { extraQpNums: extras.map((q) => q.qpNum) }),
      ...(place.environment === undefined ? {} : { environment: place.environment }),
    });
    await finish(scenario, socket, lines, cq, receives, buffer);
  } finally {
    closeQuietly(context);
  }
}

async function respondSiw(
  scenario: Scenario,
  socket: Socket,
  lines: MessageLines,
  place: PairPlace,
): Promise<void> {
  const channel = new EventChannel();
  let context: Context | undefined;
  try {
    const listener = channel.createId();
    listener.bindAddr(place.addresses.siw0.me, 0);
    listener.listen();
    context = listener.context();
    const pd = context.allocPd();
    const cq = context.createCq({ cqe: responderCqe(scenario) });
    const { mr, buffer } = targetMemory(scenario, pd);
    send(socket, {
      type: 'ready',
      id: scenario.id,
      port: listener.localPort,
      ip: place.addresses.siw0.me,
      addr: mr.addr.toString(),
      rkey: mr.rkey,
      ...(place.environment === undefined ? {} : { environment: place.environment }),
    });
    const request = await listener.nextConnectRequest({ timeoutMs: MESSAGE_TIMEOUT_MS });
    const id: CmId = request.id;
    const qp = id.createQp(pd, { sendCq: cq, ...responderQueues(scenario) });
    const receives = postReceives(scenario, qp, mr, cq);
    await id.accept({ initiatorDepth: IRD_ORD, responderResources: IRD_ORD });
    // A hammer program's further QPs: one more connection each (iWARP connects through
    // rdma_cm, not by hand as rxe does), in the order the requester connects them.
    const extras: CmId[] = [];
    for (let i = 0; i < extraQpsOf(scenario); i++) {
      const more = await listener.nextConnectRequest({ timeoutMs: MESSAGE_TIMEOUT_MS });
      more.id.createQp(pd, { sendCq: cq });
      await more.id.accept({ initiatorDepth: IRD_ORD, responderResources: IRD_ORD });
      extras.push(more.id);
    }
    send(socket, { type: 'accepted', id: scenario.id });
    await finish(scenario, socket, lines, cq, receives, buffer);
    // The requester disconnects on `finished` too: both ends at once (kernel-runtime.md).
    await id.disconnect().catch(() => {});
    for (const more of extras) await more.disconnect().catch(() => {});
  } finally {
    closeQuietly(channel, context);
  }
}

// ---------------------------------------------------------------- guest A: the requester

/**
 * The requester (guest A, or B when the roles swap): runs `ids` against its partner and
 * writes the observations to `outFile`.
 */
export async function driveRequester(
  ids: readonly string[],
  outFile: string,
  place: PairPlace = pairPlace('A'),
): Promise<void> {
  const socket = await connectControl(place);
  const lines = new MessageLines();
  socket.on('data', (chunk: Buffer) => lines.push(chunk));
  const observations: LinkObservation[] = [];
  try {
    for (const id of ids) {
      const scenario = scenarioOf(id);
      process.stderr.write(`link: ${id}\n`);
      try {
        observations.push(
          scenario.device === 'rxe0'
            ? await requestRxe(scenario, socket, lines, place)
            : await requestSiw(scenario, socket, lines, place),
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
    socket.end();
  }
}

/** How many of the requester's successful requests consumed a receive at the responder. */
function consumedBy(
  scenario: Scenario,
  observed: Pick<LinkObservation, 'requester' | 'stream'>,
): number {
  // A stream's every successful Write with immediate consumed a receive.
  if (observed.stream !== undefined) return observed.stream.requester.succeeded;
  const operations = workRequestsOf(scenario);
  return observed.requester.filter((wc) => {
    const op = operations.find((_, i) => wrIdOf(i).toString() === wc.wrId);
    return (
      wc.status === 'SUCCESS' && op !== undefined && traitsOf(op.kind).consumesReceive !== null
    );
  }).length;
}

/** A stream's observation with what B saw of it added. */
function withResponderStream(
  observed: Pick<LinkObservation, 'stream'>,
  finished: Extract<ControlMessage, { type: 'finished' }>,
): Pick<LinkObservation, 'stream'> {
  if (observed.stream === undefined) return {};
  return {
    stream: {
      requester: observed.stream.requester,
      ...(finished.stream === undefined ? {} : { responder: finished.stream }),
    },
  };
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
): Promise<Pick<LinkObservation, 'local' | 'post' | 'badWr' | 'requester' | 'hammer' | 'stream'>> {
  const stream = writeStreamOf(scenario);
  if (stream !== undefined) {
    const requester = await requestStream(
      stream,
      end.qp,
      end.cq,
      (length) => end.pd.allocMr(length, ['LOCAL_WRITE']),
      { addr: BigInt(ready.addr), rkey: ready.rkey },
    );
    return {
      local: { addr: '0', lkey: 0 },
      post: requester.post,
      requester: [],
      stream: { requester },
    };
  }
  const plan = planOf(scenario);
  const local = requesterMemory(plan, (length, access) => end.pd.allocMr(length, access), [
    'LOCAL_WRITE',
  ]);
  const remote = { addr: BigInt(ready.addr), rkey: ready.rkey };
  let hammered: HammerObservation | undefined;
  const side = new DeviceSide({
    scenario,
    plan,
    requester: { qp: end.qp, cq: end.cq },
    local,
    remote,
    hammer: async (step) => {
      hammered = await linkHammer(
        scenario,
        step,
        [end.qp, ...(end.extras ?? [])],
        end.cq,
        (length) => end.pd.allocMr(length, ['LOCAL_WRITE']),
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
  socket: Socket,
  lines: MessageLines,
  place: PairPlace,
): Promise<LinkObservation> {
  const context = openDevice(place.devices.rxe0);
  try {
    const pd = context.allocPd();
    const cqe = requesterCqe(scenario);
    const cq = context.createCq({ cqe });
    const createQp = () => pd.createQp({ sendCq: cq, extended: scenario.postPath === 'ex' });
    const qp = createQp();
    const extras = Array.from({ length: extraQpsOf(scenario) }, createQp);
    const gid = context.findGid({ ipv4: place.addresses.rxe0.me });
    send(socket, {
      type: 'setup',
      id: scenario.id,
      qpNum: qp.qpNum,
      psn: LINK_REQUESTER_PSN,
      gid: gid.gid.toString('hex'),
      ...(extras.length === 0 ? {} : { extraQpNums: extras.map((q) => q.qpNum) }),
    });
    const ready = await expect(lines, 'ready');
    if (ready.environment !== undefined) place.onPeerEnvironment?.(ready.environment);
    const lost = lostWireOf(scenario);
    const timeout = lost?.timeout ?? (isFaultProgram(scenario) ? HAMMER_ACK_TIMEOUT : ACK_TIMEOUT);
    const at = (index: number) => ({ index, localPsn: LINK_REQUESTER_PSN, sgidIndex: gid.index });
    const side = { timeout, rnrRetry: scenario.rnrRetry ?? 7 };
    extras.forEach((extra, i) => {
      connectToPeer(extra, ready, ready.extraQpNums?.[i] ?? 0, at(i + 1), side);
    });
    const retry = lost === undefined ? {} : { retryCnt: lost.retryCnt };
    connectToPeer(qp, ready, ready.qpNum ?? 0, at(0), { ...side, ...retry });
    const observed = await runRequests(scenario, { qp, cq, pd, extras }, ready);
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
      ...withResponderStream(observed, finished),
    };
  } finally {
    closeQuietly(context);
  }
}

async function requestSiw(
  scenario: Scenario,
  socket: Socket,
  lines: MessageLines,
  place: PairPlace,
): Promise<LinkObservation> {
  let channel: EventChannel | undefined;
  let context: Context | undefined;
  try {
    send(socket, { type: 'setup', id: scenario.id });
    const ready = await expect(lines, 'ready');
    if (ready.environment !== undefined) place.onPeerEnvironment?.(ready.environment);
    channel = new EventChannel();
    const client = channel.createId();
    await client.resolveAddr(
      ready.ip ?? place.addresses.siw0.peer,
      ready.port ?? 0,
      sourceOf(place),
    );
    await client.resolveRoute();
    context = client.context();
    const pd = context.allocPd();
    const cq = context.createCq({ cqe: requesterCqe(scenario) });
    const qp = client.createQp(pd, { sendCq: cq });
    await client.connect({ initiatorDepth: IRD_ORD, responderResources: IRD_ORD });
    // A hammer program's further QPs, each its own rdma_cm connection on the same channel.
    const clients: CmId[] = [];
    const extras: Qp[] = [];
    for (let i = 0; i < extraQpsOf(scenario); i++) {
      const more = channel.createId();
      await more.resolveAddr(
        ready.ip ?? place.addresses.siw0.peer,
        ready.port ?? 0,
        sourceOf(place),
      );
      await more.resolveRoute();
      extras.push(more.createQp(pd, { sendCq: cq }));
      await more.connect({ initiatorDepth: IRD_ORD, responderResources: IRD_ORD });
      clients.push(more);
    }
    // Not before B's side is established (protocol.ts AcceptedMessage: siw_accept's window).
    await expect(lines, 'accepted');
    const observed = await runRequests(scenario, { qp, cq, pd, extras }, ready);
    send(socket, { type: 'done', id: scenario.id, consumed: consumedBy(scenario, observed) });
    const finished = await expect(lines, 'finished');
    await client.disconnect().catch(() => {});
    for (const more of clients) await more.disconnect().catch(() => {});
    return {
      id: scenario.id,
      serverPort: ready.port ?? 0,
      remote: { addr: ready.addr, rkey: ready.rkey },
      ...observed,
      responder: finished.completions,
      memory: finished.memory,
      ...withResponderStream(observed, finished),
    };
  } finally {
    closeQuietly(channel, context);
  }
}
