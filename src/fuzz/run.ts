/**
 * The fuzz harness shared by the CI test (test/host/fuzz) and `npm run fuzz`
 * (src/fuzz/main.ts). For every target: valid seeds, random bytes and mutated seeds; each
 * input is decoded twice, placed inside two larger buffers whose bytes around it differ,
 * and the property is
 *   - a typed result: the call returns (a value or a DecodeError; the engine a typed
 *     outcome), anything thrown is a failure;
 *   - no read past the input: both placements give the same fingerprint;
 *   - the target's own checks (error offsets inside the input, the engine's memory
 *     unchanged unless the segment was accepted).
 * Every target draws from its own generator seeded by (seed, target name), so a failing
 * input is reproduced by the same seed and the target's name alone, whatever the count.
 */
import { mutate } from './mutate.js';
import { FuzzRandom } from './random.js';
import { type FuzzTarget, fuzzTargets, type Observation } from './targets.js';

/** Seeds per target from which mutations start. */
const SEED_POOL = 48;

export interface FuzzOptions {
  readonly seed: number;
  /** Inputs in total, split evenly over the targets. */
  readonly inputs: number;
  /** Only targets whose name includes one of these. */
  readonly only?: readonly string[];
  /** Stop a target after this many failures [3]. */
  readonly maxFailuresPerTarget?: number;
  /** Called after each target. */
  readonly onTarget?: (figures: TargetFigures) => void;
}

export interface FuzzFailure {
  readonly target: string;
  readonly seed: number;
  /** Index of the input within its target's sequence. */
  readonly index: number;
  readonly variant: number;
  readonly inputHex: string;
  readonly problem: string;
}

export interface TargetFigures {
  readonly target: string;
  readonly inputs: number;
  /** Inputs the decoder accepted (an ok result, or an engine outcome 'accepted'). */
  readonly accepted: number;
  readonly errorKinds: ReadonlySet<string>;
  readonly failures: readonly FuzzFailure[];
  readonly milliseconds: number;
}

export interface FuzzReport {
  readonly seed: number;
  readonly inputs: number;
  readonly milliseconds: number;
  readonly targets: readonly TargetFigures[];
  readonly failures: readonly FuzzFailure[];
  /** Distinct error kinds over all targets. */
  readonly errorKinds: ReadonlySet<string>;
}

/** A 32-bit hash of a target's name (FNV-1a), mixed into its generator's seed. */
function nameHash(name: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}

/** The input placed at `before` bytes into a buffer filled with `fill`, as a view of exactly its bytes. */
function placed(input: Uint8Array, before: number, after: number, fill: number): Uint8Array {
  const big = new Uint8Array(before + input.length + after).fill(fill);
  big.set(input, before);
  return big.subarray(before, before + input.length);
}

function runOnce(target: FuzzTarget, bytes: Uint8Array, variant: number): Observation | string {
  try {
    return target.run(bytes, variant);
  } catch (e) {
    const what = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
    return `threw ${what}`;
  }
}

function hex(b: Uint8Array): string {
  return Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex');
}

/** The `index`-th input of `target` under `seed` (what a failure report points at). */
export function* targetInputs(
  target: FuzzTarget,
  seed: number,
): Generator<{ bytes: Uint8Array; variant: number }> {
  const rng = new FuzzRandom((seed ^ nameHash(target.name)) >>> 0);
  const pool = Array.from({ length: SEED_POOL }, () => target.seed(rng));
  const poolBytes = pool.map((c) => c.bytes);
  for (;;) {
    const roll = rng.below(16);
    const base = rng.pick(pool);
    let bytes: Uint8Array;
    if (roll === 0) bytes = base.bytes.slice();
    else if (roll === 1) bytes = rng.bytes(rng.below(rng.oneIn(4) ? 2048 : 96));
    else bytes = mutate(rng, base.bytes, poolBytes);
    const variant = rng.oneIn(16) ? rng.u32() : base.variant;
    yield { bytes, variant };
  }
}

/** Runs one target for `count` inputs. */
export function fuzzTarget(
  target: FuzzTarget,
  seed: number,
  count: number,
  maxFailures = 3,
): TargetFigures {
  const started = performance.now();
  const errorKinds = new Set<string>();
  const failures: FuzzFailure[] = [];
  let accepted = 0;
  let index = 0;
  const inputs = targetInputs(target, seed);
  for (; index < count && failures.length < maxFailures; index++) {
    const { bytes, variant } = inputs.next().value as { bytes: Uint8Array; variant: number };
    const fail = (problem: string) =>
      failures.push({ target: target.name, seed, index, variant, inputHex: hex(bytes), problem });
    // Two placements: different offsets into the backing buffer, different bytes around.
    const a = runOnce(target, placed(bytes, 0, 64, 0x00), variant);
    const b = runOnce(target, placed(bytes, 13, 64, 0xff), variant);
    if (typeof a === 'string' || typeof b === 'string') {
      fail(typeof a === 'string' ? a : (b as string));
      continue;
    }
    if (a.problems.length > 0) {
      fail(a.problems.join('; '));
      continue;
    }
    if (a.fingerprint !== b.fingerprint) {
      fail('the result depends on bytes outside the input (read past its end or before its start)');
      continue;
    }
    for (const k of a.errorKinds) errorKinds.add(k);
    if (a.fingerprint.startsWith('{ok:true') || a.fingerprint.includes('outcome:"accepted"'))
      accepted++;
  }
  return {
    target: target.name,
    inputs: index,
    accepted,
    errorKinds,
    failures,
    milliseconds: performance.now() - started,
  };
}

/** Runs every (selected) target. */
export function runFuzz(options: FuzzOptions): FuzzReport {
  const started = performance.now();
  const targets = fuzzTargets().filter(
    (t) => options.only === undefined || options.only.some((o) => t.name.includes(o)),
  );
  const perTarget = Math.ceil(options.inputs / Math.max(targets.length, 1));
  const figures: TargetFigures[] = [];
  for (const t of targets) {
    const f = fuzzTarget(t, options.seed, perTarget, options.maxFailuresPerTarget ?? 3);
    figures.push(f);
    options.onTarget?.(f);
  }
  const errorKinds = new Set<string>();
  for (const f of figures) for (const k of f.errorKinds) errorKinds.add(k);
  return {
    seed: options.seed,
    inputs: figures.reduce((n, f) => n + f.inputs, 0),
    milliseconds: performance.now() - started,
    targets: figures,
    failures: figures.flatMap((f) => f.failures),
    errorKinds,
  };
}

/** The command that repeats a run with `seed` (printed with every run and failure). */
export function rerunCommand(seed: number, target?: string): string {
  return `FUZZ_SEED=${seed} npx vitest run --project host test/host/fuzz   # or: npm run fuzz -- --seed ${seed}${target === undefined ? '' : ` --only '${target}'`}`;
}
