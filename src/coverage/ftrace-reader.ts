/**
 * The ftrace reader (ftrace.ts starts it in the guest, as root): reads `trace_pipe`, writes
 * each new (phase, function) to its output file as `<phase> <function>` and takes the
 * function out of the filter (`!name`), so that only first entries are traced; on a phase
 * marker it puts the covered modules back into the filter and writes `#ack <token>`.
 * Usage: node ftrace-reader.js <output file> <sentinel function>.
 */
import { appendFileSync, createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { COVERED_MODULES } from './ftrace-modules.js';

const TRACEFS = '/sys/kernel/tracing';
export const PHASE_MARK = 'rdma-interop-phase';

/** What a trace line asks of the reader. */
export type ReaderAction =
  | { readonly kind: 'phase'; readonly phase: string; readonly token: string }
  | { readonly kind: 'function'; readonly name: string }
  | { readonly kind: 'none' };

/** A trace_pipe line: a phase marker, a function entry (its last word), or nothing. */
export function readTraceLine(line: string): ReaderAction {
  const words = line.trim().split(/\s+/);
  const last = words.at(-1);
  if (words[0] === undefined || words[0].startsWith('#') || last === undefined || last === '')
    return { kind: 'none' };
  // "... tracing_mark_write: rdma-interop-phase <phase> <token>"
  if (line.includes(`${PHASE_MARK} `))
    return { kind: 'phase', phase: words.at(-2) ?? 'setup', token: last };
  // "<task>-<pid> [cpu] <flags> <timestamp>: <function>"
  if (!/:$/.test(words.at(-2) ?? '')) return { kind: 'none' };
  return { kind: 'function', name: last };
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
 * patching, which under TCG costs far more than the names it carries (one write per
 * function made a 6.1 probe pass 63 % slower). A batch that fails (a name already gone)
 * is written again name by name.
 */
class Removals {
  #pending: string[] = [];
  #timer: NodeJS.Timeout | undefined;
  add(name: string): void {
    this.#pending.push(`!${name}`);
    this.#timer ??= setTimeout(() => this.flush(), 20);
  }
  flush(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    const names = this.#pending;
    this.#pending = [];
    if (names.length === 0 || filterWrite(`${names.join('\n')}\n`)) return;
    for (const n of names) filterWrite(`${n}\n`);
  }
}

async function main(out: string, sentinel: string): Promise<void> {
  let phase = 'setup';
  const seen = new Set<string>();
  const removals = new Removals();
  const lines = createInterface({ input: createReadStream(`${TRACEFS}/trace_pipe`) });
  appendFileSync(out, '#ready\n');
  for await (const line of lines) {
    const action = readTraceLine(line);
    if (action.kind === 'phase') {
      phase = action.phase;
      removals.flush();
      filterWrite(`${COVERED_MODULES.map((m) => `:mod:${m}`).join('\n')}\n`);
      appendFileSync(out, `#ack ${action.token}\n`);
    } else if (action.kind === 'function') {
      const key = `${phase} ${action.name}`;
      if (seen.has(key)) continue;
      seen.add(key);
      appendFileSync(out, `${key}\n`);
      if (action.name !== sentinel) removals.add(action.name);
    }
  }
}

if (process.argv[1]?.endsWith('ftrace-reader.js')) {
  const [out, sentinel] = process.argv.slice(2);
  if (out === undefined || sentinel === undefined) {
    process.stderr.write('usage: ftrace-reader.js <output file> <sentinel function>\n');
    process.exit(2);
  }
  main(out, sentinel).catch((error: unknown) => {
    process.stderr.write(
      `ftrace-reader: ${error instanceof Error ? error.message : String(error)}\n`,
    );
    process.exit(1);
  });
}
