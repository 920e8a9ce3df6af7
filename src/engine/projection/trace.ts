/**
 * Recording what the engine does as an ordering trace (operations in issue order and
 * the placement / delivery / completion events), so the engine's own runs can be judged
 * by the ordering checker against RFC 7306 §7 and RFC 5040 §5.5.
 */
import { familyOf } from '../../codec/iwarp/by-family.js';
import type { RdmapMessage } from '../../codec/iwarp/messages.js';
import type { RdmapFamily } from '../../codec/iwarp/opcodes.js';
import type { TracedEvent, TracedOperation } from '../ordering/checker.js';
import type { OrderedOperation, OrderingEventKind } from '../ordering/rules.js';

/**
 * The table's operation kind of each family's messages when the Requester sends them (Send
 * covers all Send variants, with Immediate Data too); responses and Terminate are none.
 * Every family has its entry, so a new one does not compile until it is placed here.
 */
const OPERATION_OF_FAMILY: Readonly<Record<RdmapFamily, OrderedOperation | undefined>> = {
  write: 'write',
  'immediate-data': 'immediate',
  send: 'send',
  'send-immediate': 'send',
  'read-request': 'read',
  'read-v2-request': 'read',
  'atomic-request': 'atomic',
  'read-response': undefined,
  'read-v2-response': undefined,
  'atomic-response': undefined,
  terminate: undefined,
};

/** The table's operation kind of a message the Requester sends, if it is one. */
function operationKind(message: RdmapMessage): OrderedOperation | undefined {
  return OPERATION_OF_FAMILY[familyOf(message)];
}

/** Collects a trace while the projection runs the engine. */
export class TraceRecorder {
  readonly operations: TracedOperation[] = [];
  readonly events: TracedEvent[] = [];
  readonly #ids = new Map<string, string>();

  /** The operation id of a Requester message of work request `wrIndex` (registered once). */
  operationOf(message: RdmapMessage, wrIndex: number): string | undefined {
    const kind = operationKind(message);
    if (kind === undefined) return undefined;
    const key = `${wrIndex}:${kind}`;
    let id = this.#ids.get(key);
    if (id === undefined) {
      id = `wr${wrIndex}.${kind}`;
      this.#ids.set(key, id);
      this.operations.push({ id, kind });
    }
    return id;
  }

  /** Records `event` of operation `op` (ignored when the message is not an operation). */
  record(op: string | undefined, ...events: OrderingEventKind[]): void {
    if (op === undefined) return;
    for (const event of events) this.events.push({ op, event });
  }
}
