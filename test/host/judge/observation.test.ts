/**
 * Issue 31: observation field names as one type (src/judge/observation.ts). Every name
 * the engine side produces, for every scenario of the suite, the link and the faulty
 * wire (and each siw scenario against a stock responder), reads back to a key that
 * formats to the same bytes; a malformed name is refused with a FieldNameError.
 */
import { describe, expect, it } from 'vitest';
import { ArgumentError } from '../../../src/errors.js';
import { expectedOutcome } from '../../../src/interop/expected.js';
import { FAULT_LINK_SCENARIOS } from '../../../src/interop/link/fault-scenarios.js';
import { expectedLinkOutcome, isLinkVerbsField } from '../../../src/interop/link/predict.js';
import { withReadWindows } from '../../../src/interop/link/read-window.js';
import { LINK_SCENARIOS } from '../../../src/interop/link/scenarios.js';
import type { Scenario } from '../../../src/interop/scenario.js';
import { SCENARIOS } from '../../../src/interop/scenarios.js';
import {
  type FieldKey,
  FieldNameError,
  fieldName,
  parseField,
  tryParseField,
} from '../../../src/judge/observation.js';

const stock = (s: Scenario): Scenario => ({
  ...s,
  responderExtensions: { atomics: false, immediateData: false },
});

/** Every field name the engine side gives, over every scenario it predicts. */
function engineFieldNames(): Set<string> {
  const names = new Set<string>();
  const add = (fields: Readonly<Record<string, string>>) => {
    for (const name of Object.keys(fields)) names.add(name);
  };
  for (const s of SCENARIOS) {
    add(expectedOutcome(s).fields);
    if (s.device === 'siw0') add(expectedOutcome(stock(s)).fields);
  }
  for (const s of [...LINK_SCENARIOS, ...FAULT_LINK_SCENARIOS])
    for (const v of s.device === 'siw0' ? [s, stock(s)] : [s]) {
      add(expectedOutcome(v).fields);
      add(withReadWindows(v, expectedLinkOutcome(v)).fields);
    }
  return names;
}

/** Names only a device side writes (a refused post, a refused bring-up, a timed wait). */
const DEVICE_ONLY = [
  'post2.bad_wr',
  'bringup',
  'requester.wc3.timer',
  'responder.wc1.qp',
  'event2.requester',
  'mem[-8]',
  'mem[0]',
];

describe('observation field names (judge/observation.ts)', () => {
  it('every engine field name parses and formats back to the same bytes', () => {
    const names = [...engineFieldNames(), ...DEVICE_ONLY];
    // The suite's fields, all kinds: a shrinking list would make this test say less.
    expect(names.length).toBeGreaterThan(150);
    const kinds = new Set<string>();
    for (const name of names) {
      const key = parseField(name);
      kinds.add(key.kind);
      expect(fieldName(key), name).toBe(name);
      expect(parseField(fieldName(key)), name).toEqual(key);
    }
    expect([...kinds].sort()).toEqual([
      'bringup',
      'completion',
      'event',
      'hammer',
      'mcast',
      'memory',
      'modify',
      'ordering',
      'packet',
      'packet-count',
      'post',
      'rereg',
      'srq-event',
      'srq-limit',
      'state',
      'stream',
      'window',
      'wire',
    ]);
  });

  it('reads a name into its parts', () => {
    expect(parseField('requester.wc12.fetched')).toEqual({
      kind: 'completion',
      side: 'requester',
      n: 12,
      part: 'fetched',
    });
    expect(parseField('q2.responder.state')).toEqual({ kind: 'state', n: 2, side: 'responder' });
    expect(parseField('post1.bad_wr')).toEqual({ kind: 'post', n: 1, badWr: true });
    expect(parseField('mem[-8]')).toEqual({ kind: 'memory', offset: -8 });
    expect(parseField('wire.resp3.aeth')).toEqual({
      kind: 'packet',
      direction: 'resp',
      n: 3,
      part: 'aeth',
    });
    expect(parseField('inv2.status')).toEqual({ kind: 'window', step: 'inv', n: 2, status: true });
    expect(parseField('srqEvent1.limit')).toEqual({ kind: 'srq-event', n: 1, limit: true });
  });

  it('refuses a malformed name with a typed error naming it', () => {
    const malformed = [
      '',
      'post',
      'post0',
      'post01',
      'post1.',
      'post1.badwr',
      'requester.wc1',
      'requester.wc0.status',
      'requester.wc1.colour',
      'initiator.wc1.status',
      'q1.requester',
      'q1.requester.status',
      'mem[08]',
      'mem[-0]',
      'mem[8',
      'mem[x]',
      'hammer1',
      'hammer1.total',
      'modify1.status',
      'bind1.limit',
      'wire.req1',
      'wire.req1.crc',
      'wire.request',
      'stream.bytes',
      'ordering.ok',
      ' post1',
      'post1 ',
    ];
    for (const name of malformed) {
      expect(() => parseField(name), name).toThrow(FieldNameError);
      expect(tryParseField(name), name).toBeUndefined();
    }
    try {
      parseField('requester.wc1.colour');
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(ArgumentError);
      expect((e as FieldNameError).fieldName).toBe('requester.wc1.colour');
      expect((e as FieldNameError).reason).toBe("no completion part 'colour'");
    }
    expect(() => parseField(8 as unknown as string)).toThrow(FieldNameError);
  });

  it('refuses a key that has no name (a counter below 1, an unknown side, part or kind)', () => {
    const bad = [
      { kind: 'post', n: 0 },
      { kind: 'completion', side: 'requester', n: 1.5, part: 'wr' },
      { kind: 'completion', side: 'initiator', n: 1, part: 'wr' },
      { kind: 'completion', side: 'requester', n: 1, part: 'colour' },
      { kind: 'packet', direction: 'ack', n: 1, part: 'psn' },
      { kind: 'window', step: 'unbind', n: 1 },
      { kind: 'post', n: 1, badWr: false },
      { kind: 'memory', offset: 0.5 },
      { kind: 'memory', offset: -0 },
      { kind: 'colour' },
      undefined,
      'post1',
    ] as unknown as FieldKey[];
    for (const key of bad) expect(() => fieldName(key), JSON.stringify(key)).toThrow(ArgumentError);
    expect(() => fieldName({ kind: 'colour' } as unknown as FieldKey)).toThrow(
      /unknown field kind 'colour' \(known: post, completion,/,
    );
  });

  it('the link keeps the verbs fields it observes and no other (link/predict.ts)', () => {
    const kept = [
      'post1',
      'post1.bad_wr',
      'requester.wc2.wr',
      'requester.wc2.status',
      'requester.wc2.fetched',
      'requester.wc1.after',
      'mem[-8]',
      'hammer1.sequence',
      'ordering',
    ];
    const dropped = [
      'post2',
      'requester.wc1.opcode',
      'requester.wc1.timer',
      'responder.wc1.status',
      'q1.requester.state',
      'wire',
      'srqLimit1',
      'not a field',
    ];
    expect(kept.filter(isLinkVerbsField)).toEqual(kept);
    expect(dropped.filter(isLinkVerbsField)).toEqual([]);
  });
});
