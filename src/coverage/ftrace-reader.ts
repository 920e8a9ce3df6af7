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

function filterWrite(text: string): void {
  try {
    appendFileSync(`${TRACEFS}/set_ftrace_filter`, text);
  } catch {
    // A name the filter no longer holds (EINVAL): nothing to take out.
  }
}

async function main(out: string, sentinel: string): Promise<void> {
  let phase = 'setup';
  const seen = new Set<string>();
  const lines = createInterface({ input: createReadStream(`${TRACEFS}/trace_pipe`) });
  appendFileSync(out, '#ready\n');
  for await (const line of lines) {
    const action = readTraceLine(line);
    if (action.kind === 'phase') {
      phase = action.phase;
      filterWrite(`${COVERED_MODULES.map((m) => `:mod:${m}`).join('\n')}\n`);
      appendFileSync(out, `#ack ${action.token}\n`);
    } else if (action.kind === 'function') {
      const key = `${phase} ${action.name}`;
      if (seen.has(key)) continue;
      seen.add(key);
      appendFileSync(out, `${key}\n`);
      if (action.name !== sentinel) filterWrite(`!${action.name}\n`);
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
