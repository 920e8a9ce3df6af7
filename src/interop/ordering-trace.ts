/**
 * The ordering checker (src/engine/ordering/) applied to what a program observed: the
 * completions on both sides, in the order the program polled them, as an ordering trace.
 * Both sides build the trace from their observation fields with this one function, so the
 * engine's run and the device's run are judged by the same rules (RFC 7306 §7, RFC 5040
 * §5.5, RFC 7306 §5.4).
 *
 * A program sees completions, not the Remote Peer's internal events, so the trace holds
 * what each completion implies: a requester completion of a Read or an Atomic means its
 * request was delivered and processed and its response generated and placed locally,
 * just before it completed; a receive completion means the message was placed and
 * delivered at the Remote Peer. The data effects (which value a Read or an Atomic saw)
 * are compared exactly through the fetched fields. Only the order within one CQ means
 * something: a program polls the two CQs when it chooses, so an event seen on the
 * responder's CQ is never judged against one seen on the requester's.
 */
import {
  checkOrdering,
  type TracedEvent,
  type TracedOperation,
} from '../engine/ordering/checker.js';
import type { OrderingEventKind } from '../engine/ordering/rules.js';
import { type CompletionPart, fieldName } from '../judge/observation.js';
import { traitsOf } from './operations.js';
import { type Scenario, workRequestsOf } from './scenario.js';

/** The trace a program's observations imply. */
export function observedTrace(
  scenario: Scenario,
  fields: Readonly<Record<string, string>>,
): { operations: TracedOperation[]; events: TracedEvent[]; sourceOf: Map<string, string> } {
  const ops = workRequestsOf(scenario);
  const operations = ops.map((op, i) => ({ id: `wr${i + 1}`, kind: traitsOf(op.kind).ordering }));
  const consumers = ops.flatMap((op, i) =>
    traitsOf(op.kind).consumesReceive ? [`wr${i + 1}`] : [],
  );
  const events: TracedEvent[] = [];
  // Which CQ showed each (operation, event) first.
  const sourceOf = new Map<string, string>();
  let source = 'requester';
  const push = (op: string, ...kinds: OrderingEventKind[]) => {
    for (const event of kinds) {
      events.push({ op, event });
      if (!sourceOf.has(`${op} ${event}`)) sourceOf.set(`${op} ${event}`, source);
    }
  };
  const taken = { requester: 0, responder: 0 };
  for (const step of scenario.program) {
    if (step.do !== 'wait') continue;
    for (let k = 0; k < step.count; k++) {
      const n = ++taken[step.side];
      const part = (p: CompletionPart) =>
        fieldName({ kind: 'completion', side: step.side, n, part: p });
      if (fields[part('status')] !== 'SUCCESS') continue;
      const wr = fields[part('wr')] ?? '';
      source = step.side;
      if (step.side === 'requester') {
        const index = Number(wr.slice(2)) - 1;
        const op = ops[index];
        if (op === undefined) continue;
        if (traitsOf(op.kind).fetches)
          push(
            wr,
            'delivered@remote',
            'processed@remote',
            'response-generated@remote',
            'placed@local',
          );
        push(wr, 'completed@local');
      } else {
        const consumer = consumers[Number(wr.slice(4)) - 1];
        if (consumer !== undefined)
          push(consumer, 'placed@remote', 'delivered@remote', 'completed@remote');
      }
    }
  }
  return { operations, events, sourceOf };
}

/**
 * `ok`, or the broken rules' ids (with the operations) the observed trace shows. A rule
 * whose earlier event a program cannot observe (e.g. when a Write was Placed at the
 * Remote Peer) is not judged: the checker would report it as never having happened.
 */
export function orderingField(
  scenario: Scenario,
  fields: Readonly<Record<string, string>>,
): string {
  const { operations, events, sourceOf } = observedTrace(scenario, fields);
  const verdict = checkOrdering(operations, events);
  if (!verdict.ok) return `trace error: ${verdict.error.reason} ${verdict.error.detail}`;
  // Judged: both events observed, on the same CQ.
  const sameCq = (
    earlier: [string, OrderingEventKind],
    later: [string, OrderingEventKind],
  ): boolean => {
    const a = sourceOf.get(earlier.join(' '));
    return a !== undefined && a === sourceOf.get(later.join(' '));
  };
  const observable = verdict.violations.filter((v) => {
    if (v.constraint === undefined)
      return (
        'earlier' in v.rule &&
        sameCq(
          [v.first, v.rule.earlier as OrderingEventKind],
          [v.first, v.rule.later as OrderingEventKind],
        )
      );
    const pick = (which: 'first' | 'second') => (which === 'first' ? v.first : v.second);
    return sameCq(
      [pick(v.constraint.earlier.op), v.constraint.earlier.event],
      [pick(v.constraint.later.op), v.constraint.later.event],
    );
  });
  if (observable.length === 0) return 'ok';
  return [...new Set(observable.map((v) => `${v.ruleId}(${v.first},${v.second})`))].join(' ');
}
