/**
 * The wrapper's side of rdma-core's `rping` exchange (librdmacm/examples/rping.c), over
 * rdma_cm, for test/kernel/verbs/interop-rping.test.ts. Per ping (rping.c
 * rping_test_client / rping_test_server):
 * 1. the client fills its start buffer (`rdma-ping-<n>: ` then letters, NUL at the end)
 *    and Sends its address, rkey and size (struct rping_rdma_info: __be64 buf, __be32
 *    rkey, __be32 size: 16 bytes);
 * 2. the server RDMA Reads that buffer, then Sends a go-ahead (16 bytes);
 * 3. the client Sends the same for its sink buffer; the server RDMA Writes what it read
 *    there (strlen + 1 bytes) and Sends a second go-ahead;
 * 4. the client compares sink and start buffer (`-V`).
 * Every receive is reposted before the next message can come (rping_cq_event_handler).
 */
import type { Cq } from '../../../src/verbs/cq.js';
import {
  type CmId,
  EventChannel,
  type Mr,
  type Pd,
  type Qp,
  VerbsError,
  type WorkCompletion,
} from '../../../src/verbs/index.js';
import { waitFor } from '../../helpers/wait-for.js';

/** sizeof(struct rping_rdma_info). */
const INFO_BYTES = 16;
const TIMEOUT_MS = 20_000;

/** The start buffer rping's client fills for ping `n` (rping.c rping_test_client). */
export function rpingPattern(n: number, size: number): Buffer {
  const b = Buffer.alloc(size);
  const head = `rdma-ping-${n}: `;
  b.write(head, 'latin1');
  // `start` begins at 65 ('A') and moves on one letter per ping, 'z' (122) wrapping to 'A'.
  let c = 65 + (n % 58);
  for (let i = head.length; i < size; i++) {
    b[i] = c;
    c = c === 122 ? 65 : c + 1;
  }
  b[size - 1] = 0;
  return b;
}

/** What one side saw: the buffers it checked, per ping. */
export interface RpingResult {
  readonly pings: number;
  /** Per ping, the sink buffer after the exchange (client) or what was read (server). */
  readonly data: Buffer[];
}

interface Side {
  readonly qp: Qp;
  readonly cq: Cq;
  readonly recv: Mr;
  readonly send: Mr;
  readonly early: WorkCompletion[];
}

/**
 * One end's PD, CQ and QP on `id`, with the registered buffers of rping's info message
 * (rping.c struct rping_rdma_info), and one receive for it posted.
 */
function openSide(id: CmId): { side: Side; pd: Pd } {
  const pd = id.context().allocPd();
  const cq = id.context().createCq({ cqe: 16 });
  const qp = id.createQp(pd, { sendCq: cq, maxSendWr: 8, maxRecvWr: 8 });
  const side: Side = {
    qp,
    cq,
    recv: pd.allocMr(INFO_BYTES, ['LOCAL_WRITE']),
    send: pd.allocMr(INFO_BYTES, []),
    early: [],
  };
  qp.postRecv({ sgList: [side.recv.sge(0, INFO_BYTES)] });
  return { side, pd };
}

/**
 * The next successful completion of `opcode`: the peer's next message may complete before
 * our Send's completion is polled (its ACK), so completions of other opcodes wait in
 * `early` for their turn. A failed completion throws.
 */
async function expectCompletion(s: Side, opcode: string): Promise<WorkCompletion> {
  for (;;) {
    const i = s.early.findIndex((wc) => wc.opcode === opcode);
    if (i >= 0) return s.early.splice(i, 1)[0] as WorkCompletion;
    const wc = await s.cq.next({ timeoutMs: TIMEOUT_MS });
    if (!wc.ok) throw new Error(`rping: a ${wc.opcode} completed with ${wc.status}`);
    s.early.push(wc);
  }
}

/** Waits for the peer's message (a 16-byte Send), reposts the receive, returns a copy. */
async function receiveInfo(s: Side): Promise<{ addr: bigint; rkey: number; size: number }> {
  const wc = await expectCompletion(s, 'RECV');
  if (wc.byteLen !== INFO_BYTES) throw new Error(`rping: a message of ${wc.byteLen} bytes`);
  const b = Buffer.from(s.recv.buffer.subarray(0, INFO_BYTES));
  s.qp.postRecv({ sgList: [s.recv.sge(0, INFO_BYTES)] });
  return { addr: b.readBigUInt64BE(0), rkey: b.readUInt32BE(8), size: b.readUInt32BE(12) };
}

/** Sends the info of `mr` (or, without it, a go-ahead) and waits for its completion. */
async function sendInfo(s: Side, mr?: Mr, size = 0): Promise<void> {
  const b = s.send.buffer;
  b.fill(0, 0, INFO_BYTES);
  if (mr !== undefined) {
    b.writeBigUInt64BE(mr.addr, 0);
    b.writeUInt32BE(mr.rkey, 8);
    b.writeUInt32BE(size, 12);
  }
  s.qp.postSend({ opcode: 'SEND', sgList: [s.send.sge(0, INFO_BYTES)] });
  await expectCompletion(s, 'SEND');
}

interface Closable {
  close(): void;
}

/** The channel (its ids and their QPs), then what was made on them, children first. */
function closeAll(channel: EventChannel, made: Closable[]): void {
  channel.close();
  for (const r of made.reverse()) r.close();
}

/** The wrapper as rping's client of `rping -s` at `address`:`port`. */
export async function rpingClient(o: {
  address: string;
  port: number;
  size: number;
  count: number;
}): Promise<RpingResult> {
  const channel = new EventChannel();
  const made: Closable[] = [];
  try {
    const { id, side, start, sink } = await connected(channel, o, made);
    const data: Buffer[] = [];
    for (let n = 0; n < o.count; n++) {
      start.buffer.set(rpingPattern(n, o.size));
      sink.buffer.fill(0);
      await sendInfo(side, start, o.size);
      await receiveInfo(side); // the server read it
      await sendInfo(side, sink, o.size);
      await receiveInfo(side); // the server wrote it back
      data.push(Buffer.from(sink.buffer.subarray(0, o.size)));
    }
    await id.disconnect();
    return { pings: o.count, data };
  } finally {
    closeAll(channel, made);
  }
}

/**
 * A client id connected to the C server, its QP's first receive posted. rping prints
 * "rdma_listen" (-d) just before it listens, so a first connect may still be refused
 * (REJECTED): each refused id is closed and a new one tried, until the deadline.
 */
async function connected(
  channel: EventChannel,
  o: { address: string; port: number; size: number },
  made: Closable[],
): Promise<{ id: CmId; side: Side; start: Mr; sink: Mr }> {
  return waitFor(
    `the rping server at ${o.address}:${o.port}`,
    async () => {
      const id = channel.createId();
      await id.resolveAddr(o.address, o.port, { src: o.address });
      await id.resolveRoute();
      const { side, pd } = openSide(id);
      const { qp, cq } = side;
      // The server reads the start buffer and writes the sink (rping.c rping_setup_buffers).
      const start = pd.allocMr(o.size, ['LOCAL_WRITE', 'REMOTE_READ', 'REMOTE_WRITE']);
      const sink = pd.allocMr(o.size, ['LOCAL_WRITE', 'REMOTE_READ', 'REMOTE_WRITE']);
      try {
        // rping.c rping_init_conn_param: one RDMA Read each way.
        await id.connect({ initiatorDepth: 1, responderResources: 1 });
        made.push(pd, cq, start, sink, side.recv, side.send);
        return { id, side, start, sink };
      } catch (e) {
        if (!(e instanceof VerbsError)) throw e;
        qp.close();
        id.close();
        for (const r of [start, sink, side.recv, side.send, cq, pd]) r.close();
        return undefined;
      }
    },
    { intervalMs: 50 },
  );
}

/**
 * The wrapper as rping's server at `address`:`port` for one `rping -c` client, which
 * `started` launches once the id listens; serves until `count` pings are done.
 */
export async function rpingServer(o: {
  address: string;
  port: number;
  count: number;
  started: () => void;
}): Promise<RpingResult> {
  const channel = new EventChannel();
  const made: Closable[] = [];
  try {
    const listener = channel.createId();
    listener.bindAddr(o.address, o.port);
    listener.listen(1);
    o.started();
    const request = await listener.nextConnectRequest({ timeoutMs: TIMEOUT_MS });
    const id = request.id;
    const { side, pd } = openSide(id);
    const { qp } = side;
    made.push(pd, side.cq, side.recv, side.send);
    await id.accept({ initiatorDepth: 1, responderResources: 1 });
    let sink: Mr | undefined;
    const data: Buffer[] = [];
    for (let n = 0; n < o.count; n++) {
      const source = await receiveInfo(side);
      if (sink === undefined) {
        sink = pd.allocMr(source.size, ['LOCAL_WRITE', 'REMOTE_READ', 'REMOTE_WRITE']);
        made.push(sink);
      }
      qp.postSend({
        opcode: 'RDMA_READ',
        sgList: [sink.sge(0, source.size)],
        remote: { addr: source.addr, rkey: source.rkey },
      });
      await expectCompletion(side, 'RDMA_READ');
      data.push(Buffer.from(sink.buffer.subarray(0, source.size)));
      await sendInfo(side);
      const target = await receiveInfo(side);
      // strlen(rdma_buf) + 1, as rping.c's server writes.
      const length = sink.buffer.indexOf(0) + 1;
      qp.postSend({
        opcode: 'RDMA_WRITE',
        sgList: [sink.sge(0, length)],
        remote: { addr: target.addr, rkey: target.rkey },
      });
      await expectCompletion(side, 'RDMA_WRITE');
      await sendInfo(side);
    }
    await id.disconnect().catch(() => undefined); // the client may have disconnected first
    return { pings: o.count, data };
  } finally {
    closeAll(channel, made);
  }
}
