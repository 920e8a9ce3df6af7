/**
 * Issue 25: calls every runtime export of every entry point with the plain-JavaScript
 * misuse TypeScript would have stopped (undefined, null, NaN, -1, 1.5, a string, a number
 * where a bigint belongs, an object with an unknown name, a huge length, ...) and reports
 * what each call did, one JSON line per case, so that a hang shows as a case that started
 * and never ended. Run by test/host/package/misuse.test.ts in a child process with a time
 * limit (a synchronous hang cannot be stopped from inside).
 *
 * Outcomes: `returned` (a value without NaN or the text of a stray `undefined`/`NaN` in
 * it: a checked result), `unchecked` (a value that has one), `typed` (one of the package's
 * errors: an RdmaInteropError), `raw` (anything else thrown: a raw TypeError/RangeError),
 * `timeout` (a promise still pending after 3 s).
 *
 * Usage: node dist/testing/misuse.js [seed]
 */
import fc from 'fast-check';
import { RdmaInteropError } from '../errors.js';

/** The entry points, as package.json "exports" names them, and their built modules. */
const ENTRY_POINTS: Readonly<Record<string, string>> = {
  '.': '../index.js',
  './codec': '../codec/index.js',
  './engine': '../engine/index.js',
  './verbs': '../verbs/index.js',
  './runtime': '../runtime/index.js',
  './interop': '../interop/index.js',
};

/** The misuse values, each with the name reports give it. */
export const MISUSE: readonly (readonly [string, () => unknown])[] = [
  ['undefined', () => undefined],
  ['null', () => null],
  ['NaN', () => Number.NaN],
  ['-1', () => -1],
  ['1.5', () => 1.5],
  ['Infinity', () => Number.POSITIVE_INFINITY],
  ['a string', () => 'x'],
  ['a number for a bigint', () => 5],
  ['a negative bigint', () => -1n],
  ['an object with an unknown name', () => ({ bogus: 1, name: 'NO_SUCH_NAME', opcode: 'NOPE' })],
  ['a huge length', () => 2 ** 40],
  ['true', () => true],
  ['an empty array', () => []],
  ['an array of unknown names', () => ['NO_SUCH_NAME']],
  ['an empty Uint8Array', () => new Uint8Array(0)],
  ['a function', () => () => 0],
];

/**
 * Exports that touch the machine (boot a guest, run the set-up, write files, open
 * devices, install signal handlers, change the cache directory): called only with
 * arguments that cannot be valid (no undefined, no object, no string, no array), so each
 * must refuse them before doing anything.
 */
const GUARDED = new Set([
  './runtime.runInGuest',
  './runtime.setupGuestAssets',
  './runtime.useCacheDir',
  './runtime.abortOnSignals',
  './interop.runScenario',
  './interop.runScenarios',
  './interop.writeReport',
]);
const GUARDED_MISUSE = new Set([
  'null',
  'NaN',
  '-1',
  '1.5',
  'Infinity',
  'a number for a bigint',
  'a huge length',
  'true',
]);

export interface CaseReport {
  readonly id: string;
  readonly outcome: 'returned' | 'unchecked' | 'typed' | 'raw' | 'timeout';
  /** The error's name and first line, or what was wrong with the value. */
  readonly detail?: string;
}

/** A NaN, or the text `NaN`/`undefined`, somewhere in a returned value (depth 4). */
function uncheckedIn(value: unknown, depth = 0, seen = new Set<unknown>()): string | undefined {
  if (typeof value === 'number' && Number.isNaN(value)) return 'NaN';
  if (typeof value === 'string') {
    const m = /\bNaN\b|\bundefined\b/.exec(value);
    return m === null ? undefined : `text '${m[0]}'`;
  }
  if (depth >= 4 || typeof value !== 'object' || value === null || seen.has(value))
    return undefined;
  if (ArrayBuffer.isView(value)) return undefined;
  seen.add(value);
  for (const v of Array.isArray(value) ? value.slice(0, 64) : Object.values(value).slice(0, 64)) {
    const found = uncheckedIn(v, depth + 1, seen);
    if (found !== undefined) return found;
  }
  return undefined;
}

function classify(id: string, error: unknown): CaseReport {
  const name = error instanceof Error ? error.name : typeof error;
  const first = error instanceof Error ? (error.message.split('\n')[0] ?? '') : String(error);
  return {
    id,
    outcome: error instanceof RdmaInteropError ? 'typed' : 'raw',
    detail: `${name}: ${first.slice(0, 160)}`,
  };
}

async function settle(id: string, call: () => unknown, describesOnly = false): Promise<CaseReport> {
  let result: unknown;
  try {
    result = call();
  } catch (error) {
    return classify(id, error);
  }
  if (result instanceof Promise) {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), 3000);
    });
    try {
      const settled = await Promise.race([result, timeout]);
      if (settled === 'timeout') return { id, outcome: 'timeout' };
      result = settled;
    } catch (error) {
      return classify(id, error);
    } finally {
      clearTimeout(timer);
    }
  }
  const unchecked = describesOnly ? undefined : uncheckedIn(result);
  return unchecked === undefined
    ? { id, outcome: 'returned' }
    : { id, outcome: 'unchecked', detail: unchecked };
}

/** Any callable export, as the walker calls it (Reflect.apply / Reflect.construct). */
// biome-ignore lint/suspicious/noExplicitAny: the walker calls every export with any arguments.
type AnyCallable = (...args: any[]) => unknown;

function isClass(f: AnyCallable): boolean {
  return /^class\b/.test(Function.prototype.toString.call(f));
}

/** The argument lists for one callable of `arity` parameters. */
function argumentLists(
  arity: number,
  guarded: boolean,
  seed: number,
): (readonly [string, unknown[]])[] {
  const pool = MISUSE.filter(([name]) => !guarded || GUARDED_MISUSE.has(name));
  const n = Math.min(Math.max(arity, 1), 4);
  const lists: (readonly [string, unknown[]])[] = [];
  if (!guarded) lists.push(['()', []]);
  for (const [name, make] of pool) {
    lists.push([`all ${name}`, Array.from({ length: n }, make)]);
    if (guarded) continue;
    for (let p = 1; p < n; p++) {
      const args: unknown[] = Array.from({ length: n }, () => undefined);
      args[p] = make();
      lists.push([`argument ${p + 1} ${name}`, args]);
    }
  }
  // A few random mixes (fast-check), the same for a given seed.
  const mixes = fc.sample(
    fc.array(fc.integer({ min: 0, max: pool.length - 1 }), { minLength: n, maxLength: n }),
    { seed, numRuns: guarded ? 0 : 6 },
  );
  for (const picks of mixes) {
    const names = picks.map((i) => pool[i]?.[0] ?? '');
    lists.push([`mix ${names.join(' | ')}`, picks.map((i) => pool[i]?.[1]())]);
  }
  return lists;
}

/** Every callable export: functions, and classes (constructed with `new`) and their statics. */
function callables(
  entry: string,
  module: Record<string, unknown>,
): (readonly [string, AnyCallable, 'call' | 'new', AnyCallable | undefined])[] {
  const out: (readonly [string, AnyCallable, 'call' | 'new', AnyCallable | undefined])[] = [];
  for (const [name, value] of Object.entries(module).sort(([a], [b]) => a.localeCompare(b))) {
    if (typeof value !== 'function') continue;
    const id = `${entry}.${name}`;
    if (!isClass(value as AnyCallable)) {
      out.push([id, value as AnyCallable, 'call', undefined]);
      continue;
    }
    out.push([id, value as AnyCallable, 'new', undefined]);
    for (const key of Object.getOwnPropertyNames(value)) {
      if (['length', 'name', 'prototype'].includes(key)) continue;
      const member = (value as unknown as Record<string, unknown>)[key];
      if (typeof member === 'function')
        out.push([`${id}.${key}`, member as AnyCallable, 'call', value as AnyCallable]);
    }
  }
  return out;
}

async function main(): Promise<void> {
  const seed = Number(process.argv[2] ?? 25);
  const write = (line: object) => process.stdout.write(`${JSON.stringify(line)}\n`);
  for (const [entry, path] of Object.entries(ENTRY_POINTS)) {
    const module = (await import(path)) as Record<string, unknown>;
    for (const [id, fn, how, self] of callables(entry, module)) {
      // The root's namespaces are the layers, walked under their own entry point.
      const guarded = GUARDED.has(id);
      const lists = argumentLists(fn.length, guarded, seed);
      write({ export: id, cases: lists.length });
      for (const [label, args] of lists) {
        const caseId = `${id} ${label}`;
        write({ start: caseId });
        const report = await settle(
          caseId,
          () => (how === 'new' ? Reflect.construct(fn, args) : Reflect.apply(fn, self, args)),
          // An error object built from bad fields only describes them: no result to check.
          how === 'new' && fn.prototype instanceof Error,
        );
        write(report);
      }
    }
  }
  write({ done: true });
}

await main();
