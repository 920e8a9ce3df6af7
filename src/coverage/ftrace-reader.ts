/**
 * The ftrace reader (ftrace.ts starts it in the guest, as root): reads `trace_pipe`, writes
 * each new (phase, function) to its output file as `<phase> <function>` and takes the
 * function out of the filter, so that only first entries are traced. Markers written to
 * `trace_marker` steer it; each is acknowledged in the output as `#ack <token>`, once
 * everything traced before it has been written:
 * - `rdma-interop-phase <phase> <token>`: a new phase; the modules go back into the filter;
 * - `rdma-interop-remap <token>`: a module was loaded again (siw switched): the function
 *   indexes are read again and the modules put back into the filter;
 * - `rdma-interop-sync <token>`: nothing more; the writer then knows the output holds
 *   every function entered before the marker (the guided fuzz's feedback).
 * Usage: node ftrace-reader.js <output file> <sentinel function> [modules,...] [phase].
 *
 * A function leaves the filter by its index in `available_filter_functions` (`!<n>`), not
 * by its name: a name is matched against every ftrace record (45,091 on 6.12, each looked
 * up in kallsyms), which under TCG costs about 70 ms a name (measured on 6.12.95: removing
 * 50 names 3.5 s, 1,189 names 101.6 s in one write), while an index goes straight to its
 * record (kernel/trace/ftrace.c add_rec_by_index, since f79b3f338564 "ftrace: Allow
 * enabling of filters via index of available_filter_functions"; a `!` before it
 * clears, as before a name). The name cost is
 * what made the hand-over to a new phase wait behind the removals of the phase before.
 */
import { appendFileSync, createReadStream, readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { COVERED_MODULES } from './ftrace-modules.js';

const TRACEFS = '/sys/kernel/tracing';
export const PHASE_MARK = 'rdma-interop-phase';
export const SYNC_MARK = 'rdma-interop-sync';
export const REMAP_MARK = 'rdma-interop-remap';

/** What a trace line asks of the reader. */
export type ReaderAction =
  | { readonly kind: 'phase'; readonly phase: string; readonly token: string }
  | { readonly kind: 'sync'; readonly token: string }
  | { readonly kind: 'remap'; readonly token: string }
  | { readonly kind: 'function'; readonly name: string }
  | { readonly kind: 'none' };

/** A trace_pipe line: a marker, a function entry (its last word), or nothing. */
export function readTraceLine(line: string): ReaderAction {
  const words = line.trim().split(/\s+/);
  const last = words.at(-1);
  if (words[0] === undefined || words[0].startsWith('#') || last === undefined || last === '')
    return { kind: 'none' };
  // "... tracing_mark_write: rdma-interop-phase <phase> <token>"
  if (line.includes(`${PHASE_MARK} `))
    return { kind: 'phase', phase: words.at(-2) ?? 'setup', token: last };
  if (line.includes(`${SYNC_MARK} `)) return { kind: 'sync', token: last };
  if (line.includes(`${REMAP_MARK} `)) return { kind: 'remap', token: last };
  // "<task>-<pid> [cpu] <flags> <timestamp>: <function>"
  if (!/:$/.test(words.at(-2) ?? '')) return { kind: 'none' };
  return { kind: 'function', name: last };
}

/**
 * name -> its 1-based indexes in `available_filter_functions` ("name [module]" a line),
 * for the functions of `modules` (a static name can occur in several).
 */
export function parseFilterIndex(text: string, modules: readonly string[]): Map<string, number[]> {
  const out = new Map<string, number[]>();
  text.split('\n').forEach((line, i) => {
    const m = /^(\S+) \[(\S+)\]$/.exec(line.trim());
    if (m === null || !modules.includes(m[2] as string)) return;
    const list = out.get(m[1] as string) ?? [];
    list.push(i + 1);
    out.set(m[1] as string, list);
  });
  return out;
}

/** The filter lines that take `name` out: by index, or by name when the index has none. */
export function removalLines(
  name: string,
  index: ReadonlyMap<string, readonly number[]>,
): string[] {
  const at = index.get(name);
  return at === undefined || at.length === 0 ? [`!${name}`] : at.map((n) => `!${n}`);
}

/** The filter lines that put `modules` back (`:mod:` is matched by module first: cheap). */
export function moduleFilterLines(modules: readonly string[]): string[] {
  return modules.map((m) => `:mod:${m}`);
}

/** The reader's arguments: output, sentinel, then optionally modules and the first phase. */
export function readerArgs(
  argv: readonly string[],
): { out: string; sentinel: string; modules: string[]; phase: string } | undefined {
  const [out, sentinel, modules, phase] = argv;
  if (out === undefined || sentinel === undefined) return undefined;
  const list = modules === undefined || modules === '' ? [...COVERED_MODULES] : modules.split(',');
  if (!list.every((m) => (COVERED_MODULES as readonly string[]).includes(m))) return undefined;
  return { out, sentinel, modules: list, phase: phase ?? 'setup' };
}

function filterWrite(text: string): boolean {
  try {
    appendFileSync(`${TRACEFS}/set_ftrace_filter`, text);
    return true;
  } catch {
    // A name the filter no longer holds (EINVAL): nothing to take out.
    return false;
  }
}

/**
 * Removals are written in batches: each write to set_ftrace_filter is one round of code
 * patching. A batch that fails (a name already gone) is written again line by line.
 */
class Removals {
  #pending: string[] = [];
  #timer: NodeJS.Timeout | undefined;
  add(lines: readonly string[]): void {
    this.#pending.push(...lines);
    this.#timer ??= setTimeout(() => this.flush(), 20);
  }
  flush(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    const lines = this.#pending;
    this.#pending = [];
    if (lines.length === 0 || filterWrite(`${lines.join('\n')}\n`)) return;
    for (const n of lines) filterWrite(`${n}\n`);
  }
}

async function main(
  out: string,
  sentinel: string,
  modules: string[],
  first: string,
): Promise<void> {
  let phase = first;
  const seen = new Set<string>();
  const removals = new Removals();
  const indexNow = () =>
    parseFilterIndex(readFileSync(`${TRACEFS}/available_filter_functions`, 'utf8'), modules);
  let index = indexNow();
  const lines = createInterface({ input: createReadStream(`${TRACEFS}/trace_pipe`) });
  appendFileSync(out, '#ready\n');
  for await (const line of lines) {
    const action = readTraceLine(line);
    switch (action.kind) {
      case 'phase':
      case 'remap':
        if (action.kind === 'phase') phase = action.phase;
        removals.flush();
        // A module loaded again has new records: indexes read before would name others.
        if (action.kind === 'remap') index = indexNow();
        filterWrite(`${moduleFilterLines(modules).join('\n')}\n`);
        appendFileSync(out, `#ack ${action.token}\n`);
        break;
      case 'sync':
        appendFileSync(out, `#ack ${action.token}\n`);
        break;
      case 'function': {
        const key = `${phase} ${action.name}`;
        if (seen.has(key)) break;
        seen.add(key);
        appendFileSync(out, `${key}\n`);
        if (action.name !== sentinel) removals.add(removalLines(action.name, index));
        break;
      }
      case 'none':
        break;
    }
  }
}

if (process.argv[1]?.endsWith('ftrace-reader.js')) {
  const args = readerArgs(process.argv.slice(2));
  if (args === undefined) {
    process.stderr.write(
      `usage: ftrace-reader.js <output file> <sentinel function> [modules: ${COVERED_MODULES.join(',')}] [first phase]\n`,
    );
    process.exit(2);
  }
  main(args.out, args.sentinel, args.modules, args.phase).catch((error: unknown) => {
    process.stderr.write(
      `ftrace-reader: ${error instanceof Error ? error.message : String(error)}\n`,
    );
    process.exit(1);
  });
}
