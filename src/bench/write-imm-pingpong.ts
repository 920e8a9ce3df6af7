/**
 * The write-with-immediate ping-pong with one side per thread, as `ib_write_lat` runs one
 * side per process: each side in its own worker (write-imm-side.ts) with its own context,
 * QP and CQ, busy-polling on its own CPU, so one side's post overlaps the other's polling
 * exactly as perftest's two processes do. Its loop per side is the user loop of issue 13,
 * `run()`: post a write-with-immediate, wait for the peer's. Resolves with the initiator's
 * post stamps (us): consecutive differences are round trips.
 */
import { Worker } from 'node:worker_threads';
import type { SideConfig, SideResult, WireSide } from './write-imm-side.js';

const SIDE_SCRIPT = new URL('./write-imm-side.js', import.meta.url);
/** The whole ping-pong: set-up and a few thousand round trips take seconds under TCG. */
const LIMIT_MS = 120_000;

/** When each side's thread exited (listened for from the start: it may exit early). */
const exits = new WeakMap<Worker, Promise<void>>();

function startSide(config: SideConfig): Worker {
  const worker = new Worker(SIDE_SCRIPT, { workerData: config });
  exits.set(worker, new Promise<void>((resolve) => worker.once('exit', () => resolve())));
  return worker;
}

/** The next message of `worker`, or its error / early exit as a rejection. */
function next<T>(worker: Worker): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const cleanup = () => {
      worker.off('message', onMessage);
      worker.off('error', onError);
      worker.off('exit', onExit);
    };
    const onMessage = (m: T) => {
      cleanup();
      resolve(m);
    };
    const onError = (e: Error) => {
      cleanup();
      reject(e);
    };
    const onExit = (code: number) => {
      cleanup();
      reject(new Error(`a ping-pong side exited (${code}) before answering`));
    };
    worker.on('message', onMessage);
    worker.on('error', onError);
    worker.on('exit', onExit);
  });
}

export async function writeImmPingPong(device: string, count: number): Promise<Float64Array> {
  const initiator = startSide({ device, initiator: true, count });
  const answerer = startSide({ device, initiator: false, count });
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`the ping-pong did not finish within ${LIMIT_MS / 1000} s`)),
      LIMIT_MS,
    );
  });
  const run = async (): Promise<Float64Array> => {
    const [a, b] = await Promise.all([next<WireSide>(initiator), next<WireSide>(answerer)]);
    const readyA = next<string>(initiator);
    const readyB = next<string>(answerer);
    initiator.postMessage({ peer: b });
    answerer.postMessage({ peer: a });
    await Promise.all([readyA, readyB]);
    const doneA = next<SideResult>(initiator);
    const doneB = next<SideResult>(answerer);
    initiator.postMessage('go');
    answerer.postMessage('go');
    const [result] = await Promise.all([doneA, doneB]);
    if (result.stamps === undefined) throw new Error('the initiator sent no stamps');
    return result.stamps;
  };
  let finished = false;
  try {
    const stamps = await Promise.race([run(), limit]);
    finished = true;
    return stamps;
  } finally {
    clearTimeout(timer);
    await Promise.all([endSide(initiator, finished), endSide(answerer, finished)]);
  }
}

/** How long a side that answered may take to close its resources and exit by itself. */
const EXIT_MS = 30_000;

/**
 * A side that answered closes its QP, CQ, MR, PD and context and then exits by itself (its
 * listeners were `once`): let it, rather than terminating it in the middle of those
 * native calls; terminate one that failed or does not exit in time.
 */
async function endSide(worker: Worker, finished: boolean): Promise<void> {
  if (finished) {
    let timer: NodeJS.Timeout | undefined;
    const exited = await Promise.race([
      (exits.get(worker) ?? Promise.resolve()).then(() => true),
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(false), EXIT_MS);
      }),
    ]);
    clearTimeout(timer);
    if (exited) return;
  }
  await worker.terminate();
}
