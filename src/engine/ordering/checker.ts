/**
 * Judges an observed sequence of events against the ordering rules: for every pair of
 * operations (in issue order) it applies the pair's rule and reports each constraint
 * whose `later` event was observed before (or without) its `earlier` event.
 */
import { requireArray, requireObject } from '../../arguments.js';
import {
  type OrderedOperation,
  type OrderingConstraint,
  type OrderingEventKind,
  type OrderingRule,
  orderingRules,
  SINGLE_OPERATION_RULES,
  type SingleOperationRule,
} from './rules.js';

/** One operation of the trace, in the order the Local Peer's ULP submitted it. */
export interface TracedOperation {
  readonly id: string;
  readonly kind: OrderedOperation;
}

/** One observed event. Events are given in the order they happened. */
export interface TracedEvent {
  readonly op: string;
  readonly event: OrderingEventKind;
}

/** A broken rule: which rule, which constraint, between which two operations. */
export interface OrderingViolation {
  /** Id of the broken rule (pair rule or single-operation rule). */
  readonly ruleId: string;
  readonly rule: OrderingRule | SingleOperationRule;
  /** The pair constraint, for pair rules. */
  readonly constraint: OrderingConstraint | undefined;
  readonly first: string;
  /** The second operation; equals `first` for a single-operation rule. */
  readonly second: string;
  /** Index of the offending `later` event in the trace. */
  readonly at: number;
  readonly message: string;
}

/** Bad trace input (unknown operation id): a typed error value, not an exception. */
export interface TraceError {
  readonly reason: 'unknown-operation' | 'duplicate-operation';
  readonly detail: string;
}

/** The checker's verdict. */
export type OrderingVerdict =
  | { readonly ok: true; readonly violations: readonly OrderingViolation[] }
  | { readonly ok: false; readonly error: TraceError };

/**
 * Checks `events` against the rules for the operations `operations` (issue order).
 * `violations` is empty when the trace obeys every rule.
 */
export function checkOrdering(
  operations: readonly TracedOperation[],
  events: readonly TracedEvent[],
): OrderingVerdict {
  requireArray('engine', 'operations', operations).forEach((o, i) => {
    requireObject('engine', `operations[${i}]`, o);
  });
  requireArray('engine', 'events', events).forEach((e, i) => {
    requireObject('engine', `events[${i}]`, e);
  });
  const ids = new Set<string>();
  for (const op of operations) {
    if (ids.has(op.id))
      return { ok: false, error: { reason: 'duplicate-operation', detail: op.id } };
    ids.add(op.id);
  }
  // First index of each (op, event); an event seen twice counts from its first time.
  const firstSeen = new Map<string, number>();
  for (const [index, e] of events.entries()) {
    if (!ids.has(e.op)) return { ok: false, error: { reason: 'unknown-operation', detail: e.op } };
    const key = `${e.op}\u0000${e.event}`;
    if (!firstSeen.has(key)) firstSeen.set(key, index);
  }
  const at = (op: string, event: OrderingEventKind) => firstSeen.get(`${op}\u0000${event}`);

  const violations: OrderingViolation[] = [];
  for (const op of operations) {
    for (const rule of SINGLE_OPERATION_RULES) {
      if (rule.operation !== op.kind) continue;
      const laterAt = at(op.id, rule.later);
      if (laterAt === undefined) continue;
      const earlierAt = at(op.id, rule.earlier);
      if (earlierAt !== undefined && earlierAt < laterAt) continue;
      violations.push({
        ruleId: rule.id,
        rule,
        constraint: undefined,
        first: op.id,
        second: op.id,
        at: laterAt,
        message: `${rule.source} ${rule.id}: ${rule.text} (${op.id} ${rule.later} at event ${laterAt}, ${rule.earlier} ${earlierAt === undefined ? 'never' : `at event ${earlierAt}`})`,
      });
    }
  }
  for (let i = 0; i < operations.length; i++) {
    for (let j = i + 1; j < operations.length; j++) {
      const first = operations[i]!;
      const second = operations[j]!;
      for (const rule of orderingRules(first.kind, second.kind))
        for (const constraint of rule.constraints) {
          const pick = (which: 'first' | 'second') => (which === 'first' ? first.id : second.id);
          const laterAt = at(pick(constraint.later.op), constraint.later.event);
          if (laterAt === undefined) continue;
          const earlierAt = at(pick(constraint.earlier.op), constraint.earlier.event);
          if (earlierAt !== undefined && earlierAt < laterAt) continue;
          violations.push({
            ruleId: rule.id,
            rule,
            constraint,
            first: first.id,
            second: second.id,
            at: laterAt,
            message: `${rule.source} ${rule.id}: ${constraint.text} (${pick(constraint.later.op)} ${constraint.later.event} at event ${laterAt}, ${pick(constraint.earlier.op)} ${constraint.earlier.event} ${earlierAt === undefined ? 'never' : `at event ${earlierAt}`})`,
          });
        }
    }
  }
  return { ok: true, violations };
}
