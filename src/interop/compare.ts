/** Field-by-field comparison of the engine's and the device's observations of a scenario. */
import { tryParseField } from '../judge/observation.js';
import { requireOutcome } from './arguments.js';
import { ABSENT, type Outcome } from './scenario.js';

export { formatValue } from './compare-format.js';

/** One field where the two sides differ, values formatted for people. */
export interface FieldDifference {
  /** The observation field, e.g. `requester.wc1.status`, `post1`, `mem[8]`. */
  readonly field: string;
  readonly engine: string;
  readonly kernel: string;
}

/** Orders fields as a program meets them: posts, completions, queries, memory, wire. */
function fieldRank(field: string): number {
  const key = tryParseField(field);
  if (key === undefined) return LAST;
  switch (key.kind) {
    case 'post':
    case 'modify':
    case 'rereg':
    case 'mcast':
      return 0;
    case 'completion':
      return key.side === 'requester' ? 1 : 2;
    case 'state':
      return 3;
    case 'memory':
      return 4;
    case 'event':
    case 'hammer':
    case 'window':
    case 'srq-limit':
    case 'srq-event':
    case 'ordering':
    case 'bringup':
    case 'wire':
    case 'packet-count':
    case 'packet':
    case 'stream':
      return LAST;
    default:
      return unknownKind(key);
  }
}

/** The rank of the rest (and of a name that is no field: a report shows it last). */
const LAST = 5;

function unknownKind(key: never): never {
  throw new RangeError(`unknown field kind ${JSON.stringify(key)}`);
}

/** Every field either side observed, in report order. */
export function fieldsOf(engine: Outcome, kernel: Outcome): string[] {
  const names = new Set([...Object.keys(engine.fields), ...Object.keys(kernel.fields)]);
  return [...names].sort((a, b) => fieldRank(a) - fieldRank(b) || (a < b ? -1 : a > b ? 1 : 0));
}

/**
 * The wire lines of each direction, in order. The two directions of the stream are
 * independent: how a capture interleaves them is timing (a requester may send its next
 * request before the previous response arrives, RFC 7306 §7 / RFC 5040 §5.5); the ordering
 * between them is what the `ordering` field checks.
 */
function perDirection(wire: string): string {
  const lines = wire.split('\n');
  const from = (side: string) => lines.filter((l) => l.startsWith(`${side}>`));
  const rest = lines.filter((l) => !/^(requester|responder)>/.test(l));
  return [...from('requester'), ...from('responder'), ...rest].join('\n');
}

/** True when the two values of `field` are the same observation. */
function sameValue(field: string, engine: string, kernel: string): boolean {
  return engine === kernel || (field === 'wire' && perDirection(engine) === perDirection(kernel));
}

export function compareOutcomes(engine: Outcome, kernel: Outcome): FieldDifference[] {
  requireOutcome('engine', engine);
  requireOutcome('kernel', kernel);
  const differences: FieldDifference[] = [];
  for (const field of fieldsOf(engine, kernel)) {
    const e = engine.fields[field] ?? ABSENT;
    const k = kernel.fields[field] ?? ABSENT;
    if (!sameValue(field, e, k)) differences.push({ field, engine: e, kernel: k });
  }
  return differences;
}
