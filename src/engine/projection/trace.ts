/**
 * Recording what the engine does as an ordering trace (operations in issue order and
 * the placement / delivery / completion events), so the engine's own runs can be judged
 * by the ordering checker against RFC 7306 §7 and RFC 5040 §5.5.
 */
import type { RdmapMessage } from '../../codec/iwarp/messages.js';
import type { TracedEvent, TracedOperation } from '../ordering/checker.js';
import type { OrderedOperation, OrderingEventKind } from '../ordering/rules.js';

/** The table's operation kind of a message the Requester sends, if it is one. */
function operationKind(message: RdmapMessage): OrderedOperation | undefined {
  switch (message.kind) {
    case 'rdma-write':
      return 'write';
    case 'immediate-data':
    case 'immediate-data-se':
      return 'immediate';
    case 'send':
    case 'send-invalidate':
    case 'send-se':
    case 'send-se-invalidate':
    case 'send-immediate':
    case 'send-invalidate-immediate':
    case 'send-se-immediate':
    case 'send-invalidate-se-immediate':
      return 'send';
    case 'rdma-read-request':
    case 'read-v2-request':
      return 'read';
    case 'atomic-request':
      return 'atomic';
    default:
      return undefined;
  }
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
