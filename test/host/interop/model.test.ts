import { describe, expect, it } from 'vitest';
import { WC_OPCODE } from '../../../src/ibverbs/wc-opcode.js';
import { WR_OPCODE } from '../../../src/ibverbs/wr-opcode.js';
import { engineWorkRequest, expectedOutcome } from '../../../src/interop/expected.js';
import { OPERATION_TRAITS, operandsOf, traitsOf } from '../../../src/interop/operations.js';
import { orderingField } from '../../../src/interop/ordering-trace.js';
import {
  connectionOf,
  initialBuffer,
  payloadBytes,
  type Scenario,
  watchedOffsets,
  wordAt,
  wrName,
} from '../../../src/interop/scenario.js';
import { SCENARIOS } from '../../../src/interop/scenarios.js';

function scenario(id: string): Scenario {
  const found = SCENARIOS.find((s) => s.id === id);
  if (found === undefined) throw new Error(`no scenario ${id}`);
  return found;
}

describe('the operation-traits table', () => {
  it('names libibverbs opcodes that exist, for requests and for their completions', () => {
    for (const [kind, traits] of Object.entries(OPERATION_TRAITS)) {
      expect(traits.opcode).toBe(kind);
      expect(WR_OPCODE).toHaveProperty(traits.opcode);
      expect(WC_OPCODE).toHaveProperty(traits.completes);
    }
  });

  it('atomics fetch and report byte_len; only sends and write-with-immediate consume receives', () => {
    expect(traitsOf('ATOMIC_FETCH_AND_ADD')).toMatchObject({
      atomic: true,
      fetches: true,
      reportsByteLen: true,
    });
    const consumers = Object.values(OPERATION_TRAITS)
      .filter((t) => t.consumesReceive)
      .map((t) => t.opcode)
      .sort();
    expect(consumers).toEqual(['RDMA_WRITE_WITH_IMM', 'SEND', 'SEND_WITH_IMM', 'SEND_WITH_INV']);
  });

  it('bring-up needs are traits: QP creation flags, QP-gated rights, what the local SGE holds', () => {
    const rows = Object.values(OPERATION_TRAITS);
    expect(rows.filter((t) => t.createFlag !== null).map((t) => [t.opcode, t.createFlag])).toEqual([
      ['SEND_WITH_INV', 'memoryWindowOps'],
      ['ATOMIC_WRITE', 'atomicWrite'],
      ['FLUSH', 'flush'],
    ]);
    // Only Send with Invalidate carries the window's rkey to invalidate.
    expect(rows.filter((t) => t.invalidatesWindow).map((t) => t.opcode)).toEqual(['SEND_WITH_INV']);
    expect(traitsOf('FLUSH').qpGatedRights).toEqual(['FLUSH_GLOBAL', 'FLUSH_PERSISTENT']);
    for (const t of rows)
      expect(t.fetches).toBe(t.localData === 'read-data' || t.localData === 'atomic-original');
    expect(traitsOf('RDMA_WRITE_WITH_IMM').consumesReceive).toBe('write-imm');
  });

  it('copies exactly the operands the row names, and refuses a missing one', () => {
    expect(
      operandsOf('ATOMIC_CMP_AND_SWP', { compare: 1n, swap: 2n, add: 3n, immData: 4 }),
    ).toEqual({ compare: 1n, swap: 2n });
    expect(() => operandsOf('ATOMIC_FETCH_AND_ADD', {})).toThrow(/needs its operand 'add'/);
  });

  it('the engine work request is built from the row alone', () => {
    expect(
      engineWorkRequest(
        {
          kind: 'ATOMIC_CMP_AND_SWP',
          compare: 0x0123456789abcdefn,
          swap: 0x0fedcba987654321n,
          target: 16,
        },
        2,
      ),
    ).toMatchObject({
      wrId: 0x5703n,
      opcode: 'ATOMIC_CMP_AND_SWP',
      compare: 0x0123456789abcdefn,
      swap: 0x0fedcba987654321n,
    });
    const write = engineWorkRequest(
      {
        kind: 'RDMA_WRITE_WITH_IMM',
        payload: 0x8877665544332211n,
        immData: 0x12345678,
        length: 16,
      },
      0,
    );
    expect(write).toMatchObject({ opcode: 'RDMA_WRITE_WITH_IMM', immData: 0x12345678 });
    expect('payload' in write && Buffer.from(write.payload).toString('hex')).toBe(
      '1122334455667788eeddccbbaa998877',
    );
  });
});

describe('the scenario model', () => {
  it('every aligned word of the responder buffer starts distinct and non-palindromic', () => {
    const buffer = initialBuffer(scenario('rxe-fetch-add'));
    const words = [-8, 0, 8, 16, 24, 32].map((o) => wordAt(buffer, o));
    expect(new Set(words).size).toBe(6);
    for (const w of words) {
      const hex = w.toString(16).padStart(16, '0');
      const swapped = Buffer.from(hex, 'hex').reverse().toString('hex');
      expect(swapped).not.toBe(hex);
    }
    expect(words[2]).toBe(0x0123456789abcdefn);
  });

  it('watches the guard words and every target, misaligned ones included', () => {
    expect(watchedOffsets(scenario('rxe-misaligned'))).toEqual([-8, 0, 8, 12, 16, 24, 32]);
  });

  it('payloads of 0, 8 and 16 bytes', () => {
    expect(payloadBytes({ kind: 'SEND', payload: 1n, length: 0 }).length).toBe(0);
    expect(Buffer.from(payloadBytes({ kind: 'SEND', payload: 0x0102n })).toString('hex')).toBe(
      '0201000000000000',
    );
    expect(payloadBytes({ kind: 'SEND', payload: 0n, length: 16 })[15]).toBe(0xff);
  });

  it('wr ids name work requests and receives the same way on both sides', () => {
    expect(wrName(0x5701n)).toBe('wr1');
    expect(wrName(0x5203n)).toBe('recv3');
    expect(wrName(0x99n)).toBe('0x99');
  });

  it('each family runs on rxe0 through both post APIs and on siw0 (no ibv_wr_* in libsiw)', () => {
    for (const family of ['atomics', 'immediate', 'ordering']) {
      const targets = new Set(
        SCENARIOS.filter((s) => s.family === family).map((s) => `${s.device}/${s.postPath}`),
      );
      expect(targets, family).toEqual(new Set(['rxe0/legacy', 'rxe0/ex', 'siw0/legacy']));
    }
  });

  it('rdma_cm-connected rxe pairs: their own ids and report rows, the same programs', () => {
    const cm = SCENARIOS.filter((s) => connectionOf(s) === 'rdma-cm' && s.device === 'rxe0');
    expect(cm.map((s) => s.id)).toContain('rxe-cm-fetch-add-ex');
    for (const s of cm) {
      expect(s.id).toMatch(/^rxe-cm-/);
      expect(s.name).toMatch(/ \(rdma_cm\)$/);
      // The same program connected by hand (through ibv_post_send where only that runs).
      const byHand = scenario(s.id.replace(/^rxe-cm-/, 'rxe-').replace(/-ex$/, ''));
      expect(connectionOf(byHand)).toBe('by-hand');
      expect(s.program).toEqual(byHand.program);
      // The engine does not see the bring-up: the same prediction.
      expect(expectedOutcome(s)).toEqual(expectedOutcome(byHand));
    }
    expect(() => expectedOutcome({ ...cm[0], connect: 'smoke-signals' } as never)).toThrow(
      /connection/,
    );
  });

  it('the solicited event: predicted for the SE Send only, the receive completes either way', () => {
    const woken = expectedOutcome(scenario('rxe-solicited-event')).fields;
    const quiet = expectedOutcome(scenario('rxe-unsolicited-no-event')).fields;
    expect(woken['event1.responder']).toBe('woken');
    expect(quiet['event1.responder']).toBe('none');
    for (const f of [woken, quiet]) expect(f['responder.wc1.status']).toBe('SUCCESS');
    // siw carries it as an RDMAP Send with Solicited Event (RFC 5040 §5.3).
    expect(expectedOutcome(scenario('siw-solicited-event')).fields.wire).toMatch(
      /^requester> send-se /,
    );
  });
});

describe('ordering judged on the observed trace', () => {
  const twoAtomics = scenario('rxe-order-two-atomics');
  const fields = expectedOutcome(twoAtomics).fields;

  it('the engine: the CmpSwap sees FetchAdd’s sum and swaps, completions in order', () => {
    expect(fields).toMatchObject({
      'requester.wc1.wr': 'wr1',
      'requester.wc2.wr': 'wr2',
      'requester.wc2.fetched': '0x12345678abcdf011',
      'mem[8]': '0x0fedcba987654321',
      ordering: 'ok',
    });
  });

  it('a device completing the second atomic first breaks RFC 7306 §7', () => {
    const swapped = {
      ...fields,
      'requester.wc1.wr': 'wr2',
      'requester.wc2.wr': 'wr1',
    };
    expect(orderingField(twoAtomics, swapped)).toMatch(/T7-atomic-atomic\(wr1,wr2\)/);
  });

  it('atomic then read: the Read returns the word after the FetchAdd', () => {
    expect(
      expectedOutcome(scenario('rxe-order-atomic-then-read')).fields['requester.wc2.fetched'],
    ).toBe('0x12345678abcdf011');
  });
});
