/**
 * The one interpreter of a scenario's program. It owns the step switch, the counters,
 * which observation fields a step writes (`postN`, `side.wcN.*`, `qN.side.state`,
 * `modifyN`, `hammerN.*`, `eventN.side`, `bindN`, `invN`, `srqLimitN`, `srqEventN`,
 * `attachN`, `detachN`,
 * `mem[*]`, `ordering`, `wire`: their names are keys of judge/observation.ts) and the
 * wait accounting; a
 * {@link ProgramSide} does the steps: the engine (expected.ts, one engine-session call a step)
 * or a device (kernel/device-side.ts, for the one-guest suite and the link requester
 * alike).
 *
 * Adding a step kind: a `Step` member (scenario.ts), one case below (the switch is
 * exhaustive: a forgotten case does not compile) and one method on each side (the
 * interface makes a forgotten one a compile error too).
 */
import { fieldName, type WindowStep } from '../judge/observation.js';
import type { Access } from '../verbs/mr.js';
import { formatValue } from './compare-format.js';
import {
  completionFields,
  hammerFields,
  missingCompletionField,
  type ObservedCompletion,
} from './observe.js';
import { type ReceiveUse, traitsOf } from './operations.js';
import { orderingField } from './ordering-trace.js';
import type { TimerClass } from './rnr-timing.js';
import {
  type Operation,
  type Outcome,
  type RequesterQp,
  type Scenario,
  type Side,
  type Step,
  watchedOffsets,
  wordAt,
  workRequestsOf,
  wrIdOf,
} from './scenario.js';

/** How long a wait step waits by default; generous, since the guest runs under TCG. */
export const COMPLETION_TIMEOUT_MS = 10_000;
/**
 * How long a wait waits for a completion nothing accepted can produce (a refused post, a
 * receive no accepted request consumes): long enough to see a stray one.
 */
export const GRACE_MS = 200;

type Maybe<T> = T | Promise<T>;

/** What a post returned: `ok` or the errno's name, and the request bad_wr names. */
export interface PostResult {
  readonly result: string;
  /** Index in the posted list of the request ibv_post_send refused (bad_wr). */
  readonly badWr?: number;
  /** Why the post was refused, shown with the outcome (not compared). */
  readonly note?: string;
}

/** One polled completion. */
export interface Polled {
  /** The completion, without the fetched word (see {@link Polled.fetched}). */
  readonly completion: Omit<ObservedCompletion, 'fetched'>;
  /** The 8 bytes a successful fetching request `op` (the `index`-th) brought back. */
  fetched(index: number, op: Operation): bigint | undefined;
}

/** The class of timer a timed wait's completion came in, and what showed it. */
export interface TimedCompletion {
  /** `not-measured`: the device keeps no evidence this project reads (timer-witness.ts). */
  readonly timer: TimerClass | 'not-measured';
  /** The evidence, for the outcome's note (a device's counter deltas); not compared. */
  readonly evidence?: string;
}

/** What a `hammer` step observed. */
export interface HammerObservation {
  /** `ok`, or the errno the first refused post got. */
  readonly post: string;
  readonly succeeded: number;
  readonly fetched: readonly bigint[];
  /** The target word before the step. */
  readonly before: bigint;
}

export type HammerStep = Extract<Step, { do: 'hammer' }>;
export type BindMwStep = Extract<Step, { do: 'bind-mw' }>;
export type McastStepOf = Extract<Step, { do: 'attach-mcast' | 'detach-mcast' }>;

/** What a memory-window step (`bind-mw`, `local-invalidate`) observed. */
export interface WindowStepResult {
  /** What the post (ibv_bind_mw, ibv_post_send) returned: `ok` or the errno's name. */
  readonly result: string;
  /** Its completion's status, undefined when none came. */
  readonly status?: string;
}

/** What runs the steps: one method per step kind, plus the memory and wire read at the end. */
export interface ProgramSide {
  /**
   * Posts `wrs` on `side`, numbered from `first` (the requester's work requests:
   * wrIdOf(first + i); the responder's Writes back: responderWrIdOf(first + i)).
   */
  postSend(
    side: Side,
    wrs: readonly Operation[],
    first: number,
    qp: RequesterQp,
  ): Maybe<PostResult>;
  /**
   * Posts the `index`-th receive on the responder, for a Send or a write-with-immediate
   * (a `ud` scenario: on its receiving QP `qp`).
   */
  postRecv(index: number, use: ReceiveUse, qp: RequesterQp): Maybe<void>;
  /**
   * The side's next completion, or undefined when none comes within `timeoutMs` (a `ud`
   * scenario's responder: from receiving QP `qp`'s CQ).
   */
  nextCompletion(side: Side, timeoutMs: number, qp: RequesterQp): Maybe<Polled | undefined>;
  /**
   * The class of timer (rnr-timing.ts) the completion `side` just polled came in, counted
   * from the side's last post (a `timed` wait): the engine from its own clock, a device
   * from its own evidence (kernel/timer-witness.ts), never from the guest's wall clock.
   */
  timerOf(side: Side): Maybe<TimedCompletion>;
  /** The QP state's name. */
  queryState(side: Side): Maybe<string>;
  /** Sets the side's remote access at RTS: `ok` or the errno's name. */
  modify(side: Side, access: readonly Access[]): Maybe<string>;
  sleep(ms: number): Maybe<void>;
  /** Arms the side's CQ for its next solicited completion (an `arm-solicited` step). */
  armSolicited(side: Side, timeoutMs: number): Maybe<void>;
  /** Whether the armed CQ's event came; the completion that woke it stays for a wait. */
  cqEvent(side: Side): Maybe<boolean>;
  hammer(step: HammerStep): Maybe<HammerObservation>;
  /** Binds the scenario's window on `side`'s QP (the `index`-th window request). */
  bindMw(step: BindMwStep, index: number): Maybe<WindowStepResult>;
  /** Posts a LOCAL_INV of the window's rkey on `side`'s QP (the `index`-th window request). */
  localInvalidate(side: Side, index: number): Maybe<WindowStepResult>;
  /** Arms the SRQ's limit: `ok` or the errno's name. */
  srqLimit(limit: number): Maybe<string>;
  /** Reregisters the responder's MR with `access`: `ok` or the errno's name. */
  reregMr(access: readonly Access[]): Maybe<string>;
  /** ibv_attach_mcast / ibv_detach_mcast of the responder's QP: `ok` or the errno's name. */
  mcast(step: McastStepOf): Maybe<string>;
  /**
   * Whether SRQ_LIMIT_REACHED came within `timeoutMs`, and the srq_limit read after it
   * (a number, or the errno's name of a refused ibv_query_srq).
   */
  srqEvent(timeoutMs: number): Maybe<{ readonly reached: boolean; readonly limit: string }>;
  /**
   * The responder's buffer after the program (guards included), or undefined where this
   * side does not hold it (the link requester: the responder's guest reports it).
   */
  memory(): Maybe<Uint8Array | undefined>;
  /** The program's messages on the wire as lines (wire.ts), or undefined if not captured. */
  wire(): Maybe<string | undefined>;
}

/** A side whose every step completes at once (the engine). */
export type ImmediateSide = {
  readonly [K in keyof ProgramSide]: (
    ...args: Parameters<ProgramSide[K]>
  ) => Awaited<ReturnType<ProgramSide[K]>>;
};

/** One request of the interpreter to its side; the driver hands back its result. */
type Ask = (side: ProgramSide) => unknown;

function* ask<T>(call: (side: ProgramSide) => T): Generator<Ask, Awaited<T>, unknown> {
  return (yield call) as Awaited<T>;
}

/**
 * What both sides read from the whole program before its first step, in one pass: the
 * requester's work requests in posting order (one LOCAL_SLOT of the requester's buffer
 * each), and whether one is a Send with Invalidate (then the program's receives report
 * the invalidated rkey: ibv_wc.invalidated_rkey shares imm_data's union, verbs.h).
 */
export interface ProgramPlan {
  readonly requests: readonly Operation[];
  /** Slots of the requester's buffer: one per work request, at least one. */
  readonly requesterSlots: number;
  readonly invalidatesRemotely: boolean;
}

/** The plan of `scenario`'s program (see {@link ProgramPlan}). */
export function planOf(scenario: Scenario): ProgramPlan {
  const requests = workRequestsOf(scenario);
  return {
    requests,
    requesterSlots: Math.max(1, requests.length),
    invalidatesRemotely: requests.some((op) => traitsOf(op.kind).invalidatesWindow),
  };
}

/** Runs `scenario`'s program on `side`. */
export async function runProgram(scenario: Scenario, side: ProgramSide): Promise<Outcome> {
  const steps = interpret(scenario);
  let next = steps.next();
  while (next.done !== true) next = steps.next(await next.value(side));
  return next.value;
}

/** Runs `scenario`'s program on a side that does every step at once. */
export function runProgramNow(scenario: Scenario, side: ImmediateSide): Outcome {
  const steps = interpret(scenario);
  let next = steps.next();
  while (next.done !== true) next = steps.next(next.value(side));
  return next.value;
}

function* interpret(scenario: Scenario): Generator<Ask, Outcome, unknown> {
  const operations = workRequestsOf(scenario);
  const fields: Record<string, string> = {};
  const notes: string[] = [];
  // Completions named so far (`wcN`) and actually polled (a wait that got none took none).
  const taken: Record<Side, number> = { requester: 0, responder: 0 };
  const gotten: Record<Side, number> = { requester: 0, responder: 0 };
  let posted = 0;
  let responderPosted = 0;
  // What the accepted posts can produce: a wait for more gets the grace time only.
  let accepted = 0;
  let acceptedConsumers = 0;
  let responderAccepted = 0;
  let received = 0;
  let postStep = 0;
  let queryStep = 0;
  let modifyStep = 0;
  let hammerStep = 0;
  let eventStep = 0;
  let windowRequests = 0;
  let srqLimitStep = 0;
  let srqEventStep = 0;
  let reregStep = 0;
  const mcastStep = { attach: 0, detach: 0 };
  const windowStep = { bind: 0, inv: 0 };
  const windowFields = (name: WindowStep, result: WindowStepResult): void => {
    const n = ++windowStep[name];
    fields[fieldName({ kind: 'window', step: name, n })] = result.result;
    if (result.result === 'ok')
      fields[fieldName({ kind: 'window', step: name, n, status: true })] = result.status ?? 'none';
  };
  for (const step of scenario.program) {
    switch (step.do) {
      case 'post-send': {
        postStep += 1;
        const side = step.side ?? 'requester';
        const first = side === 'responder' ? responderPosted : posted;
        if (side === 'responder') responderPosted += step.wrs.length;
        else posted += step.wrs.length;
        const post = yield* ask((s) => s.postSend(side, step.wrs, first, step.qp ?? 'first'));
        fields[fieldName({ kind: 'post', n: postStep })] = post.result;
        if (post.note !== undefined) notes.push(post.note);
        if (side === 'responder') {
          if (post.result === 'ok') responderAccepted += step.wrs.length;
        } else if (post.result === 'ok') {
          accepted += step.wrs.length;
          acceptedConsumers += step.wrs.filter((op) => traitsOf(op.kind).consumesReceive).length;
        } else if (post.badWr !== undefined) {
          fields[fieldName({ kind: 'post', n: postStep, badWr: true })] =
            `wr${first + post.badWr + 1}`;
          accepted += post.badWr; // those before bad_wr were posted
        }
        break;
      }
      case 'post-recv':
        yield* ask((s) => s.postRecv(received++, step.for, step.qp ?? 'first'));
        break;
      case 'wait':
        for (let k = 0; k < step.count; k++) {
          const n = ++taken[step.side];
          // A UD Send to a group consumes a receive on every member: any receive may come.
          const producible =
            step.side === 'requester'
              ? accepted
              : scenario.ud === true
                ? received
                : Math.min(received, acceptedConsumers) + responderAccepted;
          const timeout =
            gotten[step.side] >= producible ? GRACE_MS : (step.timeoutMs ?? COMPLETION_TIMEOUT_MS);
          const polled = yield* ask((s) =>
            s.nextCompletion(step.side, timeout, step.qp ?? 'first'),
          );
          if (polled === undefined) {
            Object.assign(fields, missingCompletionField(step.side, n));
            // Later completions of this wait cannot come either.
            for (let rest = k + 1; rest < step.count; rest++)
              Object.assign(fields, missingCompletionField(step.side, ++taken[step.side]));
            break;
          }
          gotten[step.side] += 1;
          const wc = polled.completion;
          const index = operations.findIndex((_, i) => wrIdOf(i) === wc.wrId);
          const op = step.side === 'requester' ? operations[index] : undefined;
          const fetches = op !== undefined && wc.status === 'SUCCESS' && traitsOf(op.kind).fetches;
          const fetched = fetches ? polled.fetched(index, op) : undefined;
          Object.assign(fields, completionFields(step.side, n, { ...wc, fetched }, op));
          if (step.timed === true) {
            const timed = yield* ask((s) => s.timerOf(step.side));
            const timer = fieldName({ kind: 'completion', side: step.side, n, part: 'timer' });
            fields[timer] = timed.timer;
            if (timed.evidence !== undefined) notes.push(`${timer}: ${timed.evidence}`);
          }
        }
        break;
      case 'query':
        queryStep += 1;
        fields[fieldName({ kind: 'state', n: queryStep, side: step.side })] = yield* ask((s) =>
          s.queryState(step.side),
        );
        break;
      case 'modify':
        modifyStep += 1;
        fields[fieldName({ kind: 'modify', n: modifyStep })] = yield* ask((s) =>
          s.modify(step.side, step.access),
        );
        break;
      case 'sleep':
        yield* ask((s) => s.sleep(step.ms));
        break;
      case 'arm-solicited':
        yield* ask((s) => s.armSolicited(step.side, step.timeoutMs));
        break;
      case 'cq-event': {
        eventStep += 1;
        const woken = yield* ask((s) => s.cqEvent(step.side));
        fields[fieldName({ kind: 'event', n: eventStep, side: step.side })] = woken
          ? 'woken'
          : 'none';
        break;
      }
      case 'hammer': {
        hammerStep += 1;
        const result = yield* ask((s) => s.hammer(step));
        Object.assign(
          fields,
          hammerFields(
            hammerStep,
            result.post,
            result.succeeded,
            result.fetched,
            result.before,
            step.add,
          ),
        );
        break;
      }
      case 'bind-mw':
        windowFields('bind', yield* ask((s) => s.bindMw(step, windowRequests++)));
        break;
      case 'local-invalidate':
        windowFields('inv', yield* ask((s) => s.localInvalidate(step.side, windowRequests++)));
        break;
      case 'srq-limit':
        fields[fieldName({ kind: 'srq-limit', n: ++srqLimitStep })] = yield* ask((s) =>
          s.srqLimit(step.limit),
        );
        break;
      case 'srq-event': {
        const n = ++srqEventStep;
        const seen = yield* ask((s) => s.srqEvent(step.timeoutMs));
        fields[fieldName({ kind: 'srq-event', n })] = seen.reached ? 'limit-reached' : 'none';
        fields[fieldName({ kind: 'srq-event', n, limit: true })] = seen.limit;
        break;
      }
      case 'attach-mcast':
      case 'detach-mcast': {
        const name = step.do === 'attach-mcast' ? 'attach' : 'detach';
        const n = ++mcastStep[name];
        fields[fieldName({ kind: 'mcast', step: name, n })] = yield* ask((s) => s.mcast(step));
        break;
      }
      case 'rereg-mr':
        fields[fieldName({ kind: 'rereg', n: ++reregStep })] = yield* ask((s) =>
          s.reregMr(step.access),
        );
        break;
      default:
        return unknownStep(step);
    }
  }
  const memory = yield* ask((s) => s.memory());
  if (memory !== undefined)
    for (const offset of watchedOffsets(scenario))
      fields[fieldName({ kind: 'memory', offset })] = formatValue(wordAt(memory, offset));
  if (operations.length > 1)
    fields[fieldName({ kind: 'ordering' })] = orderingField(scenario, fields);
  const wire = yield* ask((s) => s.wire());
  if (wire !== undefined) fields[fieldName({ kind: 'wire' })] = wire;
  return notes.length === 0 ? { fields } : { fields, note: notes.join('; ') };
}

/** The exhaustiveness check: a step kind without a case above does not compile. */
function unknownStep(step: never): never {
  throw new RangeError(`unknown step kind ${JSON.stringify(step)}`);
}
