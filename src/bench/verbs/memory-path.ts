/**
 * What the memory path without external buffers costs (issue 36, native/js_memory.h):
 * the same operations on the V8-allocated path against the external path, measured in the
 * same process in alternating rounds (the path set before each, a loopback pair per path
 * so that the bound post and poll memory of its QP and CQ are of that path too):
 * - `allocMr(n)` + `close()` (4 KiB and 1 MiB): V8's zeroed allocation, a page larger, the
 *   untransferable mark, against posix_memalign + memset and an external ArrayBuffer;
 * - a FetchAdd round trip (`run()`): its block looked up from its reference at every call;
 * - FetchAdd through `postSend` + `pollUntil`: the bound post and poll words, each
 *   looked up at every call.
 * Ratio = V8-allocated / external (lower is better; 1 is free).
 */
import { type MemoryPath, memoryPath, setMemoryPath } from '../../verbs/index.js';
import { type Figure, figure, percentile, printFigures } from '../report.js';
import { fetchAddLatencyGeneral, fetchAddLatencyRoundTrip } from './fetch-add.js';
import { type Latency, loopback, type Pair } from './loopback.js';

/** Rounds of each figure, the order of the two paths swapped every round. */
const MEMORY_ROUNDS = 5;

/** allocMr + close: batches per round and iterations per batch, by size. */
const ALLOC_SIZES = [
  { bytes: 4096, batch: 100, label: '4 KiB' },
  { bytes: 1 << 20, batch: 10, label: '1 MiB' },
] as const;
const ALLOC_BATCHES = 3;

interface PathSamples {
  alloc: number[][];
  roundTrip: Latency[];
  general: Latency[];
}

/** Microseconds per allocMr(bytes) + close(), the median of a few batches. */
function allocMrCost(p: Pair, bytes: number, batch: number): number {
  const perBatch: number[] = [];
  for (let b = 0; b < ALLOC_BATCHES; b++) {
    const t0 = performance.now();
    for (let i = 0; i < batch; i++) p.pd.allocMr(bytes, ['LOCAL_WRITE', 'REMOTE_WRITE']).close();
    perBatch.push(((performance.now() - t0) * 1000) / batch);
  }
  return percentile(perBatch, 50);
}

function measure(path: MemoryPath, p: Pair, into: PathSamples): void {
  setMemoryPath(path);
  ALLOC_SIZES.forEach((s, i) => {
    into.alloc[i]?.push(allocMrCost(p, s.bytes, s.batch));
  });
  into.roundTrip.push(fetchAddLatencyRoundTrip(p));
  into.general.push(fetchAddLatencyGeneral(p, 'post'));
}

const median = (xs: number[]): number => percentile(xs, 50);

/** The smallest and largest per-round ratio (V8-allocated / external, same round). */
function spread(ours: number[], anchor: number[]): readonly [number, number] {
  const ratios = ours.map((v, i) => v / (anchor[i] ?? Number.NaN)).filter(Number.isFinite);
  return ratios.length === 0
    ? [Number.NaN, Number.NaN]
    : [Math.min(...ratios), Math.max(...ratios)];
}

/**
 * The figures (suite `verbs`), or none where external buffers are unavailable (then there
 * is nothing to compare against: the V8-allocated path is the only one).
 */
export function memoryPathFigures(): Figure[] {
  const before = memoryPath();
  if (!before.externalAvailable) return [];
  const pairs: Record<MemoryPath, Pair> = {} as Record<MemoryPath, Pair>;
  const samples: Record<MemoryPath, PathSamples> = {
    external: { alloc: ALLOC_SIZES.map(() => []), roundTrip: [], general: [] },
    v8: { alloc: ALLOC_SIZES.map(() => []), roundTrip: [], general: [] },
  };
  try {
    for (const path of ['external', 'v8'] as const) {
      setMemoryPath(path);
      pairs[path] = loopback();
      // Warm-up: the JIT, and the QP's bound post memory (made at its first post).
      fetchAddLatencyGeneral(pairs[path], 'post');
      fetchAddLatencyRoundTrip(pairs[path]);
    }
    for (let r = 0; r < MEMORY_ROUNDS; r++) {
      const order: MemoryPath[] = r % 2 === 0 ? ['external', 'v8'] : ['v8', 'external'];
      for (const path of order) measure(path, pairs[path], samples[path]);
    }
  } finally {
    for (const p of Object.values(pairs)) p.close();
    setMemoryPath(before.path);
  }
  const suite = 'verbs';
  const v8 = samples.v8;
  const ext = samples.external;
  const latencyFigure = (name: string, pick: (s: PathSamples) => Latency[]) => {
    const ours = pick(v8);
    const anchor = pick(ext);
    return figure({
      suite,
      name: `${name}, V8-allocated memory (no external buffers)`,
      unit: 'us',
      value: median(ours.map((l) => l.median)),
      p99: median(ours.map((l) => l.p99)),
      anchorName: 'external buffers',
      anchor: median(anchor.map((l) => l.median)),
      anchorP99: median(anchor.map((l) => l.p99)),
      rounds: MEMORY_ROUNDS,
      ratioSpread: spread(
        ours.map((l) => l.median),
        anchor.map((l) => l.median),
      ),
    });
  };
  return [
    ...ALLOC_SIZES.map((s, i) =>
      figure({
        suite,
        name: `allocMr(${s.label}) + close, V8-allocated memory (no external buffers)`,
        unit: 'us',
        value: median(v8.alloc[i] ?? []),
        anchorName: 'external buffers',
        anchor: median(ext.alloc[i] ?? []),
        rounds: MEMORY_ROUNDS,
        ratioSpread: spread(v8.alloc[i] ?? [], ext.alloc[i] ?? []),
      }),
    ),
    latencyFigure('FetchAdd latency, round trip (run + fetched)', (s) => s.roundTrip),
    latencyFigure('FetchAdd latency, postSend + pollUntil', (s) => s.general),
  ];
}

/** Measures and prints the figures (part of `bench verbs`; runnable alone in a guest). */
export function runMemoryPathBenchmark(): void {
  const figures = memoryPathFigures();
  if (figures.length === 0) {
    process.stdout.write(
      `bench verbs, memory paths: external buffers unavailable here (${memoryPath().reason}): nothing to compare\n`,
    );
    return;
  }
  printFigures(
    'bench verbs, memory without external buffers (ratio = V8-allocated / external, same process, alternating rounds)',
    figures,
  );
}
