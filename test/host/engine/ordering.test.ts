import { describe, expect, it } from 'vitest';
import { checkOrdering, type TracedEvent } from '../../../src/engine/ordering/checker.js';
import {
  ORDERING_RULES,
  type OrderedOperation,
  RFC7306_ORDERING_TABLE,
  SINGLE_OPERATION_RULES,
} from '../../../src/engine/ordering/rules.js';

const KINDS: readonly OrderedOperation[] = ['send', 'immediate', 'write', 'read', 'atomic'];

describe('ordering rules as data (RFC 7306 §7, RFC 5040 §5.5)', () => {
  it('the RFC 7306 §7 table has its 15 rows (the "Immediate Data or Send / Immediate Data" row as two entries) and every ordered pair has exactly one table or base rule', () => {
    expect(RFC7306_ORDERING_TABLE).toHaveLength(16);
    for (const first of KINDS)
      for (const second of KINDS) {
        const base = ORDERING_RULES.filter(
          (r) => r.first === first && r.second === second && r.source !== 'RFC 7306 §5.4',
        );
        expect(base, `${first} then ${second}`).toHaveLength(1);
      }
  });

  // Every constraint of every pair rule: the trace in order passes, reversed fails naming the rule.
  for (const rule of ORDERING_RULES) {
    for (const [n, constraint] of rule.constraints.entries()) {
      it(`[R7306-7-table] ${rule.id} #${n}: "${constraint.text}" — obeyed passes, broken is reported`, () => {
        const operations = [
          { id: 'A', kind: rule.first },
          { id: 'B', kind: rule.second },
        ];
        const id = (which: 'first' | 'second') => (which === 'first' ? 'A' : 'B');
        const earlier: TracedEvent = {
          op: id(constraint.earlier.op),
          event: constraint.earlier.event,
        };
        const later: TracedEvent = { op: id(constraint.later.op), event: constraint.later.event };
        const good = checkOrdering(operations, [earlier, later]);
        expect(good.ok && good.violations.filter((v) => v.constraint === constraint)).toEqual([]);
        const bad = checkOrdering(operations, [later, earlier]);
        if (!bad.ok) throw new Error('trace rejected');
        expect(
          bad.violations.filter((v) => v.constraint === constraint).map((v) => v.ruleId),
        ).toEqual([rule.id]);
        const missing = checkOrdering(operations, [later]);
        expect(missing.ok && missing.violations.some((v) => v.constraint === constraint)).toBe(
          true,
        );
      });
    }
  }

  it('[R7306-7-table] rows without guarantees accept either order (e.g. Atomic then Send: Send MAY complete first)', () => {
    const operations = [
      { id: 'atomic', kind: 'atomic' as const },
      { id: 'send', kind: 'send' as const },
    ];
    const verdict = checkOrdering(operations, [
      { op: 'send', event: 'placed@remote' },
      { op: 'send', event: 'delivered@remote' },
      { op: 'send', event: 'completed@remote' },
      { op: 'atomic', event: 'delivered@remote' },
      { op: 'atomic', event: 'processed@remote' },
      { op: 'atomic', event: 'response-generated@remote' },
      { op: 'atomic', event: 'placed@local' },
      { op: 'atomic', event: 'completed@local' },
    ]);
    expect(verdict).toEqual({ ok: true, violations: [] });
  });

  for (const rule of SINGLE_OPERATION_RULES) {
    it(`[R7306-5.4-3] [R7306-5.4-5] [R7306-5.4-1] ${rule.id}: obeyed passes, broken is reported`, () => {
      const operations = [{ id: 'X', kind: rule.operation }];
      const good = checkOrdering(operations, [
        { op: 'X', event: rule.earlier },
        { op: 'X', event: rule.later },
      ]);
      expect(good.ok && good.violations.filter((v) => v.ruleId === rule.id)).toEqual([]);
      const bad = checkOrdering(operations, [
        { op: 'X', event: rule.later },
        { op: 'X', event: rule.earlier },
      ]);
      expect(bad.ok && bad.violations.map((v) => v.ruleId)).toContain(rule.id);
    });
  }

  it('[R7306-5.4-4] an Atomic Request processed before an earlier Send was Delivered breaks RFC 7306 §5.4', () => {
    const verdict = checkOrdering(
      [
        { id: 's', kind: 'send' },
        { id: 'a', kind: 'atomic' },
      ],
      [
        { op: 'a', event: 'delivered@remote' },
        { op: 'a', event: 'processed@remote' },
        { op: 's', event: 'delivered@remote' },
      ],
    );
    expect(verdict.ok && verdict.violations.map((v) => v.ruleId)).toEqual([
      'S54-send-atomic-delivered',
    ]);
  });

  it('a realistic Write, Immediate Data, Atomic, Atomic trace obeys every rule', () => {
    const operations = [
      { id: 'w', kind: 'write' as const },
      { id: 'i', kind: 'immediate' as const },
      { id: 'a1', kind: 'atomic' as const },
      { id: 'a2', kind: 'atomic' as const },
    ];
    const events: TracedEvent[] = [
      { op: 'w', event: 'placed@remote' },
      { op: 'w', event: 'delivered@remote' },
      { op: 'i', event: 'placed@remote' },
      { op: 'i', event: 'delivered@remote' },
      { op: 'i', event: 'completed@remote' },
      { op: 'a1', event: 'delivered@remote' },
      { op: 'a1', event: 'processed@remote' },
      { op: 'a1', event: 'placed@remote' },
      { op: 'a1', event: 'response-generated@remote' },
      { op: 'a2', event: 'delivered@remote' },
      { op: 'a2', event: 'processed@remote' },
      { op: 'a2', event: 'placed@remote' },
      { op: 'a2', event: 'response-generated@remote' },
      { op: 'a1', event: 'placed@local' },
      { op: 'a1', event: 'completed@local' },
      { op: 'a2', event: 'placed@local' },
      { op: 'a2', event: 'completed@local' },
    ];
    expect(checkOrdering(operations, events)).toEqual({ ok: true, violations: [] });
    // Second atomic processed before the first's response: T7-atomic-atomic.
    const swapped = [...events];
    const at = swapped.findIndex((e) => e.op === 'a1' && e.event === 'response-generated@remote');
    const [moved] = swapped.splice(at, 1);
    swapped.push(moved!);
    const verdict = checkOrdering(operations, swapped);
    expect(verdict.ok && verdict.violations.map((v) => v.ruleId)).toContain('T7-atomic-atomic');
  });

  it('bad traces are typed errors, not exceptions', () => {
    expect(
      checkOrdering([{ id: 'a', kind: 'send' }], [{ op: 'zz', event: 'placed@remote' }]),
    ).toEqual({
      ok: false,
      error: { reason: 'unknown-operation', detail: 'zz' },
    });
    expect(
      checkOrdering(
        [
          { id: 'a', kind: 'send' },
          { id: 'a', kind: 'write' },
        ],
        [],
      ),
    ).toEqual({ ok: false, error: { reason: 'duplicate-operation', detail: 'a' } });
  });
});

describe('the engine obeys its own ordering rules', () => {
  it('[R7306-7-table] [R7306-5.4-3] a mixed run (write, write+imm, send, read, atomics) traced from the engine has no violation', async () => {
    const { projectIwarp } = await import('../../../src/engine/projection/project.js');
    const { accessMask } = await import('../../../src/ibverbs/access-flags.js');
    const va = 0x10000n;
    const outcome = projectIwarp({
      responder: {
        buffers: [
          {
            stag: 5,
            baseTaggedOffset: va,
            length: 64,
            access: accessMask(['REMOTE_WRITE', 'REMOTE_READ', 'REMOTE_ATOMIC']),
            protectionDomain: 1,
          },
        ],
        receives: [
          { id: 1n, length: 16 },
          { id: 2n, length: 16 },
        ],
      },
      requester: {
        ord: 1,
        localBuffers: [
          { stag: 6, baseTaggedOffset: 0n, length: 16, access: 1, protectionDomain: 1 },
        ],
      },
      workRequests: [
        {
          opcode: 'RDMA_WRITE',
          wrId: 1n,
          remoteAddr: va,
          rkey: 5,
          payload: new Uint8Array([1]),
        },
        {
          opcode: 'RDMA_WRITE_WITH_IMM',
          wrId: 2n,
          remoteAddr: va + 8n,
          rkey: 5,
          payload: new Uint8Array([2]),
          immData: 7,
        },
        {
          opcode: 'ATOMIC_FETCH_AND_ADD',
          wrId: 3n,
          remoteAddr: va + 16n,
          rkey: 5,
          add: 3n,
        },
        { opcode: 'SEND', wrId: 4n, payload: new Uint8Array([4]) },
        {
          opcode: 'RDMA_READ',
          wrId: 5n,
          remoteAddr: va,
          rkey: 5,
          length: 8,
          localSTag: 6,
          localAddr: 0n,
        },
        {
          opcode: 'ATOMIC_CMP_AND_SWP',
          wrId: 6n,
          remoteAddr: va + 16n,
          rkey: 5,
          compare: 3n,
          swap: 9n,
        },
      ],
    });
    expect(outcome.failure).toBeUndefined();
    expect(outcome.trace.operations.map((o) => o.kind)).toEqual([
      'write',
      'write',
      'immediate',
      'atomic',
      'send',
      'read',
      'atomic',
    ]);
    expect(checkOrdering(outcome.trace.operations, outcome.trace.events)).toEqual({
      ok: true,
      violations: [],
    });
    // The same trace with the second atomic's processing moved first is caught.
    const events = [...outcome.trace.events];
    const at = events.findIndex((e) => e.op === 'wr5.atomic' && e.event === 'processed@remote');
    const [moved] = events.splice(at, 1);
    events.unshift(moved!);
    const verdict = checkOrdering(outcome.trace.operations, events);
    expect(verdict.ok && verdict.violations.length).toBeGreaterThan(0);
  });
});
