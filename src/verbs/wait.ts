/**
 * The one way the wrapper waits for an event from the libuv loop (a completion, an
 * rdma_cm event): a promise that ends on the event, on an AbortSignal or on a timeout,
 * and unregisters itself exactly once whichever comes first.
 */
import { performance } from 'node:perf_hooks';
import { VerbsError } from './errors.js';

/** Options of every asynchronous wait. */
export interface WaitOptions {
  /** Rejects with the signal's reason when aborted. */
  readonly signal?: AbortSignal;
  /** Rejects with a VerbsError ETIMEDOUT after this many milliseconds. */
  readonly timeoutMs?: number;
}

/** The two ways the event source ends a wait. */
export interface Pending<T> {
  resolve(value: T): void;
  reject(error: unknown): void;
}

/**
 * Waits: `register` hooks `pending` into the event source and returns how to unhook it.
 * It may settle `pending` at once (an event already queued, a failing arm); the unhook
 * still runs, once.
 */
/** What a wait waits for, for its ETIMEDOUT: "no `what` in N ms" from `call` on `device`. */
export interface WaitingFor {
  readonly call: string;
  readonly device: string | undefined;
  readonly what: string;
  /**
   * The object whose event source ends the wait (a CQ, an exchange, an rdma_cm id):
   * held strongly while the wait is pending (see {@link waiting}).
   */
  readonly owner: object;
}

/**
 * The owners of pending waits, each with its count of waits. An event source's watcher
 * holds its owner weakly, so that a forgotten CQ or exchange is collected; but while a wait
 * is pending, the owner may be reachable only from the awaiting function, whose frame is
 * reachable only from the wait's own promise, which the owner holds: a cycle with no root,
 * which V8 collects. The wait then never ends and its promise is dropped unsettled: a
 * process with nothing else on its loop exits (13: unsettled top-level await), any other
 * process idles for good (s44: `bench verbs` hung with the guest idle; a Node client of
 * `ibv_rc_pingpong -e` stopped at a random exchange in 3 of 27 runs of 500 exchanges, and in
 * none of 80 runs while a global held the exchange). Held here, the owner is a root until its wait ends.
 */
const waiting = new Map<object, number>();

/** How many owners have a pending wait (tests: none once every wait has ended). */
export function pendingWaitOwners(): number {
  return waiting.size;
}

function hold(owner: object): void {
  waiting.set(owner, (waiting.get(owner) ?? 0) + 1);
}

function release(owner: object): void {
  const n = (waiting.get(owner) ?? 1) - 1;
  if (n <= 0) waiting.delete(owner);
  else waiting.set(owner, n);
}

export function waitFor<T>(
  options: WaitOptions,
  waitingFor: WaitingFor,
  register: (pending: Pending<T>) => () => void,
): Promise<T> {
  const { call, device, what } = waitingFor;
  const timeoutError = (ms: number) =>
    new VerbsError('ETIMEDOUT', 110, call, device, `no ${what} in ${ms} ms`);
  const { signal, timeoutMs } = options;
  if (signal?.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    hold(waitingFor.owner);
    let unregister: (() => void) | undefined;
    let deadline: Deadline | undefined;
    const finish = (): void => {
      settled = true;
      release(waitingFor.owner);
      if (deadline !== undefined) dropDeadline(deadline);
      signal?.removeEventListener('abort', onAbort);
      unregister?.();
    };
    const pending: Pending<T> = {
      resolve: (value) => {
        if (settled) return;
        finish();
        resolve(value);
      },
      reject: (error) => {
        if (settled) return;
        finish();
        reject(error);
      },
    };
    const onAbort = (): void => pending.reject(signal?.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
    if (timeoutMs !== undefined)
      deadline = addDeadline(timeoutMs, () => pending.reject(timeoutError(timeoutMs)));
    let unhook: () => void;
    try {
      unhook = register(pending);
    } catch (e) {
      // As the executor throwing would, but with the owner released.
      pending.reject(e);
      return;
    }
    if (settled) unhook();
    else unregister = unhook;
  });
}

/**
 * Runs `fn` on the next turn of the loop (one setImmediate for all the callbacks of a
 * turn). A wait that ends and is followed at once by the next one (the usual
 * `await cq.next()` loop) should not pay for what only an idle wrapper needs.
 */
export function onNextTurn(fn: () => void): void {
  if (turnQueue.push(fn) === 1) setImmediate(runTurn);
}

let turnQueue: (() => void)[] = [];

function runTurn(): void {
  const fns = turnQueue;
  turnQueue = [];
  let failure: { error: unknown } | undefined;
  for (const fn of fns) {
    try {
      fn();
    } catch (error) {
      failure ??= { error };
    }
  }
  if (failure !== undefined) throw failure.error;
}

/*
 * Timed waits share one Node timer, armed for the earliest deadline. A setTimeout and a
 * clearTimeout per wait cost a timer list made and dropped, a priority-queue insert and
 * removal, a read of the loop's clock and two ref toggles of the uv timer (native calls):
 * about 0.5 us on a host, several under emulation, per `await cq.next({ timeoutMs })`.
 * Here a wait costs a clock read and an append (deadlines in a loop of waits with one
 * timeout come in order). The timer keeps the loop alive while a timed wait is pending,
 * as a wait's own timer did, and is dropped on the first turn of the loop without one.
 */
interface Deadline {
  /** performance.now() at which the wait times out. */
  readonly at: number;
  readonly expire: () => void;
  pending: boolean;
}

/** Pending deadlines in order of `at`, with ended ones among them (dropped lazily). */
let deadlines: Deadline[] = [];
let pendingDeadlines = 0;
let timer: NodeJS.Timeout | undefined;
let timerAt = Number.POSITIVE_INFINITY;
let idleCheck = false;
// setTimeout's range: Node runs a delay outside it after 1 ms.
const MAX_DELAY = 2 ** 31 - 1;

function addDeadline(timeoutMs: number, expire: () => void): Deadline {
  const ms = timeoutMs >= 1 && timeoutMs <= MAX_DELAY ? timeoutMs : 1;
  const d: Deadline = { at: performance.now() + ms, expire, pending: true };
  let i = deadlines.length;
  while (i > 0 && (deadlines[i - 1] as Deadline).at > d.at) i--;
  if (i === deadlines.length) deadlines.push(d);
  else deadlines.splice(i, 0, d);
  pendingDeadlines++;
  if (d.at < timerAt) armTimer(d.at);
  return d;
}

function dropDeadline(d: Deadline): void {
  if (!d.pending) return;
  d.pending = false;
  pendingDeadlines--;
  // Ended ones at the front go now; the rest when they outnumber the pending ones.
  let head = 0;
  while (head < deadlines.length && !(deadlines[head] as Deadline).pending) head++;
  if (head === deadlines.length) deadlines.length = 0;
  else if (head > 0) deadlines.splice(0, head);
  if (deadlines.length > 64 && deadlines.length > 2 * pendingDeadlines)
    deadlines = deadlines.filter((e) => e.pending);
  if (pendingDeadlines === 0 && !idleCheck) {
    idleCheck = true;
    onNextTurn(() => {
      idleCheck = false;
      if (pendingDeadlines === 0) disarmTimer();
    });
  }
}

function armTimer(at: number): void {
  if (timer !== undefined) clearTimeout(timer);
  timerAt = at;
  timer = setTimeout(onTimer, Math.min(MAX_DELAY, Math.max(1, Math.ceil(at - performance.now()))));
}

function disarmTimer(): void {
  if (timer !== undefined) clearTimeout(timer);
  timer = undefined;
  timerAt = Number.POSITIVE_INFINITY;
}

function onTimer(): void {
  timer = undefined;
  timerAt = Number.POSITIVE_INFINITY;
  // A Node timer may fire up to a millisecond before our clock says (it counts from the
  // loop's cached time): what is not due yet waits for the timer armed again below.
  const now = performance.now();
  const due: Deadline[] = [];
  for (const d of deadlines) {
    if (d.at > now) break;
    if (d.pending) due.push(d);
  }
  for (const d of due) d.expire();
  const next = deadlines.find((d) => d.pending);
  if (next !== undefined) armTimer(next.at);
}
