/**
 * Issue 8: fuzzing in CI. Every public decoder of rdma-interop/codec and the engine's
 * receiveSegment get random and mutated inputs from valid seeds, 10^5 in all: half from a
 * fixed seed, half from a seed that changes every run (FUZZ_SEED=<n> repeats one; the log
 * prints it). `npm run fuzz` runs the same generators for 10^6 inputs and more.
 */
import { describe, expect, it } from 'vitest';
import * as codec from '../../../src/codec/index.js';
import { rotatingSeed } from '../../../src/fuzz/random.js';
import { type FuzzFailure, fuzzTarget, rerunCommand, runFuzz } from '../../../src/fuzz/run.js';
import {
  engineProblems,
  FUZZED_FUNCTIONS,
  type FuzzTarget,
  fuzzTargets,
  observe,
} from '../../../src/fuzz/targets.js';

const FIXED_SEED = 0x5eed8a11;
const ROTATING_SEED =
  process.env.FUZZ_SEED !== undefined ? Number(process.env.FUZZ_SEED) >>> 0 : rotatingSeed();
const INPUTS_PER_RUN = 50_000;

function describeFailure(f: FuzzFailure): string {
  const input = f.inputHex.length > 400 ? `${f.inputHex.slice(0, 400)}…` : f.inputHex;
  return `${f.target} #${f.index} (variant ${f.variant}): ${f.problem}\n  input ${input}\n  rerun: ${rerunCommand(f.seed, f.target)}`;
}

describe('fuzzing every public decoder and the engine (issue 8)', () => {
  it('covers every decode* that rdma-interop/codec exports', () => {
    const exported = Object.entries(codec)
      // `decoded` builds a DecodeResult; it decodes nothing.
      .filter(
        ([name, v]) => typeof v === 'function' && name.startsWith('decode') && name !== 'decoded',
      )
      .map(([name]) => name);
    expect(exported.filter((n) => !FUZZED_FUNCTIONS.includes(n))).toEqual([]);
    expect(FUZZED_FUNCTIONS.filter((n) => !(n in codec))).toEqual([]);
  });

  for (const [label, seed] of [
    ['fixed', FIXED_SEED],
    ['rotating', ROTATING_SEED],
  ] as const) {
    // One title whatever the seed (the closing line counts tests by name); the seed is in
    // the log with the command that repeats it.
    it(`${label} seed${label === 'fixed' ? ` ${seed}` : ' (printed; FUZZ_SEED=<n> repeats it)'}: typed results only, no read past the input, memory unchanged unless accepted`, () => {
      console.log(`fuzz: ${label} seed ${seed}; to repeat: ${rerunCommand(seed)}`);
      const report = runFuzz({ seed, inputs: INPUTS_PER_RUN });
      const seconds = report.milliseconds / 1000;
      console.log(
        `fuzz: ${label} seed ${seed}: ${report.inputs} inputs over ${report.targets.length} targets in ${seconds.toFixed(1)} s (${Math.round(report.inputs / seconds)}/s), ${report.errorKinds.size} distinct error kinds, ${report.failures.length} failures`,
      );
      expect(report.failures.map(describeFailure)).toEqual([]);
      expect(report.inputs).toBeGreaterThanOrEqual(INPUTS_PER_RUN);
      // The inputs reach both sides of every decoder: some accepted, some refused.
      for (const t of report.targets) {
        expect(t.accepted, `${t.target} accepted nothing`).toBeGreaterThan(0);
        expect(t.accepted, `${t.target} refused nothing`).toBeLessThan(t.inputs);
      }
      expect(report.errorKinds.size).toBeGreaterThan(60);
    }, 180_000);
  }

  // The harness finds what it claims to find (each of these would pass a harness that
  // checked nothing).
  describe('the harness', () => {
    const base = fuzzTargets().find((t) => t.name === 'bth')!;
    const broken = (name: string, run: FuzzTarget['run']): FuzzTarget => ({ ...base, name, run });

    it('reports a decoder that throws', () => {
      const f = fuzzTarget(
        broken('throws', (b) => {
          if (b.length > 20) throw new RangeError('boom');
          return base.run(b, 0);
        }),
        1,
        200,
        1,
      );
      expect(f.failures[0]?.problem).toBe('threw RangeError: boom');
    });

    it('reports a decoder that reads past the end of its input', () => {
      const f = fuzzTarget(
        broken('reads past', (b) =>
          // The RoCE decoder reads the ICRC from the last 4 bytes it is given.
          observe(
            codec.decodeRocePacket(new Uint8Array(b.buffer, b.byteOffset, b.length + 1)),
            b.length,
          ),
        ),
        1,
        200,
        1,
      );
      expect(f.failures[0]?.problem).toMatch(/depends on bytes outside the input/);
    });

    it('reports an untyped error in a result and an offset outside the input', () => {
      const untyped = fuzzTarget(
        broken('untyped', () => observe({ ok: false, error: new Error('x') }, 0)),
        1,
        10,
        1,
      );
      expect(untyped.failures[0]?.problem).toMatch(/not a DecodeError/);
      const offset = fuzzTarget(
        broken('offset', (b) =>
          observe(
            { ok: false, error: new codec.DecodeError('bth', 'x', b.length + 1, 'truncated', '') },
            b.length,
          ),
        ),
        1,
        10,
        1,
      );
      expect(offset.failures[0]?.problem).toMatch(/outside the input/);
    });

    it('reports engine memory changed by a segment that was not accepted', () => {
      const before = Uint8Array.of(1, 2, 3);
      const after = Uint8Array.of(1, 9, 3);
      expect(
        engineProblems({ outcome: 'terminated', failure: 'invalid-stag' }, before, after),
      ).toEqual(['memory changed although the outcome is terminated']);
      expect(engineProblems({ outcome: 'accepted', failure: undefined }, before, after)).toEqual(
        [],
      );
      expect(engineProblems({ outcome: 'terminated', failure: undefined }, before, before)).toEqual(
        ['terminated without a failure'],
      );
    });
  });
});
