/**
 * One process of a concurrency step that runs across processes (hammer.ts): its own
 * device context, PD, CQ and requester QP, connected by hand to a responder QP of the
 * suite's process, posting FetchAdds to the suite's memory region with a window of
 * requests outstanding. Started by the suite with `node hammer-process.js`; speaks one
 * JSON object per line: it prints its endpoint, reads the peer and the job, prints the
 * result (or the errno a post got).
 */
import { createInterface } from 'node:readline';
import { EventChannel } from '../../verbs/cm.js';
import { connectRcByHand } from '../../verbs/connect.js';
import { openDevice } from '../../verbs/device.js';
import { VerbsError } from '../../verbs/errors.js';
import { DEVICES, type DeviceName } from '../scenario.js';
import { pollCompletions } from './poll-completions.js';

/** What the suite's process sends once it has connected its responder QP. */
export interface HammerJob {
  readonly qpNum: number;
  readonly psn: number;
  /** The target word's address and the region's rkey (hex / number). */
  readonly addr: string;
  readonly rkey: number;
  readonly count: number;
  /** The addend, hex. */
  readonly add: string;
  readonly window: number;
  readonly postPath: 'legacy' | 'ex';
  readonly timeoutMs: number;
}

/** The child's endpoint (first line). */
export interface HammerEndpoint {
  readonly qpNum: number;
  readonly psn: number;
}

/** The child's result (last line): the fetched values of its successful requests, hex. */
export type HammerProcessResult =
  | { readonly succeeded: number; readonly fetched: readonly string[] }
  | { readonly post: string };

async function main(): Promise<void> {
  const [
    device = 'rxe0',
    psnText = '0',
    extended = 'legacy',
    connect = 'by-hand',
    addressArg = '',
    gidIndexText = '-1',
  ] = process.argv.slice(2);
  const gidIndex = Number(gidIndexText);
  const psn = Number(psnText);
  // rdma_cm: connect to the suite's listener on the device's address first; its context
  // is the device's.
  const cm = connect.startsWith('rdma-cm:') ? new EventChannel() : undefined;
  const id = cm?.createId();
  if (id !== undefined) {
    // The suite passes the bound device's address; a reference target's is in DEVICES.
    if (addressArg === '' && !(device in DEVICES)) throw new Error(`unknown device ${device}`);
    const address = addressArg !== '' ? addressArg : DEVICES[device as DeviceName].address;
    await id.resolveAddr(address, Number(connect.slice('rdma-cm:'.length)), { src: address });
    await id.resolveRoute();
  }
  const ctx = id === undefined ? openDevice(device) : id.context();
  const pd = ctx.allocPd();
  const cq = ctx.createCq({ cqe: 256 });
  const qp =
    id === undefined
      ? pd.createQp({ sendCq: cq, extended: extended === 'ex' })
      : id.createQp(pd, { sendCq: cq });
  if (id !== undefined) await id.connect({ initiatorDepth: 4, responderResources: 4 });
  const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
  // Resolves once the line is handed to the pipe (a pipe write is asynchronous).
  const say = (value: unknown) =>
    new Promise<void>((resolve) =>
      process.stdout.write(`${JSON.stringify(value)}\n`, () => resolve()),
    );
  await say({ qpNum: qp.qpNum, psn } satisfies HammerEndpoint);
  const next = await lines.next();
  if (next.done === true) throw new Error('the suite closed stdin before sending the job');
  const job = JSON.parse(next.value) as HammerJob;
  if (id === undefined) {
    const gid =
      gidIndex < 0
        ? ctx.findGid()
        : (ctx.gidTable(1).find((g) => g.index === gidIndex) ?? ctx.findGid());
    connectRcByHand(qp, {
      sgidIndex: gid.index,
      remote: { qpNum: job.qpNum, psn: job.psn, gid: gid.gid },
      localPsn: psn,
      maxRdAtomic: 4,
      maxDestRdAtomic: 4,
    });
  }
  const mr = pd.allocMr(job.count * 8, ['LOCAL_WRITE']);
  const ok: boolean[] = Array.from({ length: job.count }, () => false);
  let posted = 0;
  let outstanding = 0;
  const post = (): void => {
    const room = Math.min(job.window - outstanding, job.count - posted);
    if (room <= 0) return;
    qp.postSend(
      Array.from({ length: room }, (_, k) => ({
        wrId: BigInt(posted + k),
        opcode: 'ATOMIC_FETCH_AND_ADD' as const,
        sgList: [mr.sge((posted + k) * 8, 8)],
        remote: { addr: BigInt(job.addr), rkey: job.rkey },
        add: BigInt(job.add),
      })),
      job.postPath,
    );
    posted += room;
    outstanding += room;
  };
  try {
    post();
  } catch (error) {
    if (!(error instanceof VerbsError)) throw error;
    await say({ post: error.code } satisfies HammerProcessResult);
    return;
  }
  await pollCompletions(cq, job.count, Date.now() + job.timeoutMs, (wcs) => {
    for (const wc of wcs) {
      outstanding -= 1;
      if (wc.ok) ok[Number(wc.wrId)] = true;
    }
    post();
  });
  const fetched = ok.flatMap((good, i) =>
    good ? [`0x${mr.buffer.readBigUInt64LE(i * 8).toString(16)}`] : [],
  );
  await say({ succeeded: fetched.length, fetched } satisfies HammerProcessResult);
  // No rdma_cm disconnect: the suite's end answers it only while it waits on its channel,
  // and one end disconnecting after the other can stall (kernel-runtime.md); the exit
  // tears the connection down.
  // The context closes its PD (the QP, then the MR) and the CQ (the verbs cascade); with
  // rdma_cm it is the CM's, whose own close is a no-op: the exit closes the id.
  ctx.close();
}

// Exit once the result is out: an rdma_cm channel or stdin would keep the process alive.
main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
