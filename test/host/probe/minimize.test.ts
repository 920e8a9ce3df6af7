import { describe, expect, it } from 'vitest';
import type { GuidedStep } from '../../../src/coverage/guided-input.js';
import { guidedStepReductions } from '../../../src/coverage/guided-minimize.js';
import { MinimizeError, minimizeSequence } from '../../../src/probe/minimize.js';

const range = (n: number): number[] => Array.from({ length: n }, (_, i) => i);

describe('minimizeSequence: dropping items (ddmin)', () => {
  it('reduces a finding that needs packets 3 and 7 of 20 to exactly those two', async () => {
    const r = await minimizeSequence(range(20), async (s) => s.includes(3) && s.includes(7));
    expect(r.minimal).toEqual([3, 7]);
    expect(r.originalLength).toBe(20);
    expect(r.exhausted).toBe(false);
    expect(r.calls).toBe(r.trace.length);
    expect(r.calls).toBeLessThan(60);
    expect(r.trace.every((t) => t.phase === 'drop')).toBe(true);
  });

  it('keeps the order of what stays (a finding needing 9 before 2 is not one of 2 before 9)', async () => {
    const input = [5, 9, 1, 2, 8];
    const r = await minimizeSequence(
      input,
      async (s) => s.indexOf(9) >= 0 && s.indexOf(9) < s.indexOf(2),
    );
    expect(r.minimal).toEqual([9, 2]);
  });

  it('is deterministic: the same input and predicate give the same calls, result and trace', async () => {
    const predicate = async (s: readonly number[]) => s.filter((x) => x % 5 === 1).length >= 2;
    const a = await minimizeSequence(range(37), predicate);
    const b = await minimizeSequence(range(37), predicate);
    expect(a).toEqual(b);
    // 1-minimal: two items, both 1 mod 5 (which two is ddmin's order, fixed by the equality above).
    expect(a.minimal).toEqual([31, 36]);
    expect(a.trace.map((t) => t.reproduced)).toEqual(b.trace.map((t) => t.reproduced));
  });

  it('returns the best so far when the budget runs out', async () => {
    const r = await minimizeSequence(range(20), async (s) => s.includes(3) && s.includes(7), {
      budget: 3,
    });
    expect(r.exhausted).toBe(true);
    expect(r.calls).toBe(3);
    expect(r.minimal.length).toBeLessThan(20);
    expect(r.minimal).toContain(3);
    expect(r.minimal).toContain(7);
    const none = await minimizeSequence(range(4), async () => true, { budget: 0 });
    expect(none).toMatchObject({ minimal: [0, 1, 2, 3], calls: 0, exhausted: true });
  });

  it('counts a predicate that throws as not reproduced and records why', async () => {
    const r = await minimizeSequence([1, 2], async (s) => {
      if (s.length === 1) throw new Error('replay failed');
      return true;
    });
    expect(r.minimal).toEqual([1, 2]);
    expect(r.trace.map((t) => t.error)).toEqual(['replay failed', 'replay failed']);
  });

  it('refuses a bad budget and an empty input with a MinimizeError', async () => {
    await expect(minimizeSequence([1], async () => true, { budget: -1 })).rejects.toThrow(
      MinimizeError,
    );
    await expect(minimizeSequence([1], async () => true, { budget: 1.5 })).rejects.toThrow(
      /non-negative integer/,
    );
    await expect(minimizeSequence([], async () => true)).rejects.toThrow(/empty/);
  });
});

describe('minimizeSequence: reducing each item (fields and bytes)', () => {
  const step = (edits: GuidedStep['edits'], more: Partial<GuidedStep> = {}): GuidedStep => ({
    base: 3,
    psnOffset: 0,
    edits,
    icrcXor: 0,
    ...more,
  });

  it('drops the edits, cut, extension and wrong ICRC a finding does not need', async () => {
    // The finding: a step whose bytes at offset 28 are 0xff 0xff (the RETH address's top).
    const needed = (s: GuidedStep): boolean =>
      s.edits.some((e) => e.bytes.some((b, k) => e.at + k === 28 && b === 0xff));
    const input: GuidedStep[] = [
      step([{ at: 0, bytes: [0x1f] }], { icrcXor: 0x1234567 }),
      step(
        [
          { at: 1, bytes: [0x40] },
          { at: 26, bytes: [0x01, 0x02, 0xff, 0xff, 0x05, 0x06, 0x07, 0x08] },
        ],
        { cut: 30, extra: [1, 2, 3, 4], icrcXor: 0x89abcdef },
      ),
    ];
    const r = await minimizeSequence(input, async (s) => s.some(needed), {
      reduceItem: guidedStepReductions,
    });
    expect(r.exhausted).toBe(false);
    expect(r.minimal).toEqual([step([{ at: 28, bytes: [0xff] }], { icrcXor: 0 })]);
    expect(r.trace.some((t) => t.phase === 'reduce' && t.reproduced)).toBe(true);
  });

  it('offers only strictly smaller steps, and none for a step with no changes', () => {
    expect(guidedStepReductions(step([]))).toEqual([]);
    const s = step([{ at: 4, bytes: [1, 2] }], { extra: [9, 9, 9] });
    const weights = (x: GuidedStep) =>
      x.edits.reduce((n, e) => n + e.bytes.length, 0) +
      (x.extra?.length ?? 0) +
      (x.cut === undefined ? 0 : 1);
    for (const c of guidedStepReductions(s)) expect(weights(c)).toBeLessThan(weights(s));
  });
});
