/**
 * The messaging figures of `bench verbs` alone (issue 34), for measuring them often in a
 * short guest run: the write-with-immediate ping-pong (a thread per side) against
 * `ib_write_lat`, the SRQ receive rate (a thread per side) against
 * `ib_send_bw --use-srq`, and the Send/Receive ping-pong against `ibv_rc_pingpong`
 * (send-recv.ts), in `rounds` alternating rounds after the same warm-up as `bench verbs`,
 * printed as its figures are. `npm run bench` measures the same figures among the others;
 * this is a development tool, run in the guest:
 * `node dist/bench/verbs/messaging-run.js [rounds (default 3)]`.
 */
import { column, implausibleRate } from '../perftest-plausibility.js';
import { figure, printFigures } from '../report.js';
import { openSrqRateSides } from '../srq-rate.js';
import { openWriteImmPingPong } from '../write-imm-pingpong.js';
import { anchor, rejected } from './anchor.js';
import { cqExPollFigure } from './cq-ex-poll.js';
import { DEVICE, ITERATIONS, type Latency, WARMUP } from './loopback.js';
import { medianRound, pair, type Round, spreadOf } from './rounds.js';
import { sendRecvFigures, sendRecvRound, warmSendRecv } from './send-recv.js';
import {
  SRQ_ANCHOR_ARGS,
  SRQ_COUNT,
  SRQ_DEPTH,
  SRQ_DOORBELL,
  SRQ_FIRST_STREAMS,
  SRQ_MESSAGE,
  SRQ_STREAMS,
} from './srq.js';
import { writeImmRound } from './write-imm.js';

async function main(): Promise<void> {
  const rounds = Number(process.argv[2] ?? 3);
  const srqSides = await openSrqRateSides(DEVICE, {
    count: SRQ_COUNT,
    depth: SRQ_DEPTH,
    size: SRQ_MESSAGE,
    batch: SRQ_DOORBELL,
  });
  const pingPong = await openWriteImmPingPong(DEVICE);
  const imm: Round<Latency>[] = [];
  const srq: Round<number>[] = [];
  const sendRecv: Round<number>[][] = [];
  try {
    for (let i = 0; i < 3; i++) await pingPong.measure(ITERATIONS + WARMUP + 1);
    await warmSendRecv(1);
    for (let r = 0; r < rounds; r++) {
      const port = 18515 + 100 * r;
      const anchorFirst = r % 2 === 1;
      imm.push(await writeImmRound(pingPong, anchorFirst, port + 1));
      srq.push(
        await pair(
          anchorFirst,
          () => srqSides.measure(r === 0 ? SRQ_FIRST_STREAMS : SRQ_STREAMS),
          () => anchor('ib_send_bw', [...SRQ_ANCHOR_ARGS], port + 4, implausibleRate),
          (m, cols) => m / column(cols, 'MsgRate'),
        ),
      );
      sendRecv.push(await sendRecvRound(r, anchorFirst));
    }
  } finally {
    await srqSides.close();
    await pingPong.close();
  }
  const suite = 'verbs';
  const midImm = medianRound(imm);
  const midSrq = medianRound(srq);
  for (const line of rejected) process.stdout.write(`  implausible anchor run: ${line}\n`);
  for (const [i, r] of imm.entries())
    process.stdout.write(
      `  round ${i}: write-imm ${r.ratio.toFixed(2)}, SRQ ${srq[i]?.ratio.toFixed(2)}\n`,
    );
  printFigures(`messaging figures on ${DEVICE}, ${rounds} rounds`, [
    figure({
      suite,
      name: 'write-with-imm half round trip, a thread per side (as ib_write_lat)',
      unit: 'us',
      value: midImm.ours.median,
      p99: midImm.ours.p99,
      anchorName: 'ib_write_lat',
      anchor: column(midImm.cols, 't_typical'),
      rounds,
      ratioSpread: spreadOf(imm),
      target: { op: '<=', ratio: 1.5 },
    }),
    figure({
      suite,
      name: 'SRQ receive rate, 8-byte Sends, a thread per side (as ib_send_bw)',
      unit: 'Mpps',
      value: midSrq.ours,
      anchorName: 'ib_send_bw --use-srq',
      anchor: column(midSrq.cols, 'MsgRate'),
      rounds,
      ratioSpread: spreadOf(srq),
      target: { op: '>=', ratio: 1 },
    }),
    ...sendRecvFigures(sendRecv, suite),
    cqExPollFigure(suite),
  ]);
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
