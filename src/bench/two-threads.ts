/**
 * The worker-thread plumbing of the benchmarks that run one side per thread, as perftest
 * runs one side per process (write-imm-pingpong.ts, srq-rate.ts): start a side, take its
 * next message (its error or early exit as a rejection), connect a pair, run it as often as
 * wanted, and end it.
 */
import { Worker } from 'node:worker_threads';

/** When each side's thread exited (listened for from the start: it may exit early). */
const exits = new WeakMap<Worker, Promise<void>>();

/** Starts the side script `script` with `workerData`. */
function startSide(script: URL, workerData: unknown): Worker {
  const worker = new Worker(script, { workerData });
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
      reject(new Error(`a benchmark side exited (${code}) before answering`));
    };
    worker.on('message', onMessage);
    worker.on('error', onError);
    worker.on('exit', onExit);
  });
}

/** `run`, or a rejection naming `what` once `limitMs` passed. */
async function withLimit<T>(run: Promise<T>, limitMs: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`${what} did not finish within ${limitMs / 1000} s`)),
      limitMs,
    );
  });
  try {
    return await Promise.race([run, limit]);
  } finally {
    clearTimeout(timer);
  }
}

/** Ends every side (endSide): `finished` ones may exit by themselves first. */
async function endSides(sides: readonly Worker[], finished: boolean): Promise<void> {
  await Promise.all(sides.map((side) => endSide(side, finished)));
}

/** How long a side that answered may take to close its resources and exit by itself. */
const EXIT_MS = 30_000;

/**
 * A side that answered closes its verbs objects and then exits by itself (its listeners
 * were `once`): let it, rather than terminating it in the middle of those native calls;
 * terminate one that failed or does not exit in time.
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

/**
 * The two sides' protocol: each tells what its peer needs (its first message), gets the
 * peer's (`{ peer }`), connects and answers 'ready'; then, as often as wanted, both get a
 * run message and answer with their results; at the end both get 'end', close their
 * verbs objects and exit by themselves.
 */
export interface SidePair<Run, Result> {
  /** Both sides' answers to `run`, in the order the sides were given. */
  run(run: Run): Promise<[Result, Result]>;
  close(): Promise<void>;
}

/** Starts `script` twice (`configs`), connects the two, and returns the pair. */
export async function openSidePair<Run, Result>(
  script: URL,
  configs: readonly [unknown, unknown],
  limitMs: number,
  what: string,
): Promise<SidePair<Run, Result>> {
  const sides: [Worker, Worker] = [startSide(script, configs[0]), startSide(script, configs[1])];
  const [a, b] = sides;
  try {
    await withLimit(connectSides(a, b), limitMs, `${what} set-up`);
  } catch (e) {
    await endSides(sides, false);
    throw e;
  }
  let failed = false;
  return {
    async run(run: Run): Promise<[Result, Result]> {
      try {
        return await withLimit(goSides<Result>(a, b, run), limitMs, what);
      } catch (e) {
        failed = true;
        throw e;
      }
    },
    async close(): Promise<void> {
      if (!failed) for (const side of sides) side.postMessage('end');
      await endSides(sides, !failed);
    },
  };
}

/** Both sides connected and 'ready'. */
async function connectSides(a: Worker, b: Worker): Promise<void> {
  const [wireA, wireB] = await Promise.all([next<unknown>(a), next<unknown>(b)]);
  const readyA = next<string>(a);
  const readyB = next<string>(b);
  a.postMessage({ peer: wireB });
  b.postMessage({ peer: wireA });
  await Promise.all([readyA, readyB]);
}

/** Sends both sides `go` and returns their answers, in the order of the sides. */
async function goSides<R>(a: Worker, b: Worker, go: unknown): Promise<[R, R]> {
  const doneA = next<R>(a);
  const doneB = next<R>(b);
  a.postMessage(go);
  b.postMessage(go);
  return Promise.all([doneA, doneB]);
}
