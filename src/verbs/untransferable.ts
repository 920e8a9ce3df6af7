/**
 * @internal Whether a registered Buffer can be protected on this Node (pd.regMr, and
 * mr.rereg's new memory, src/verbs/mr-rereg.ts).
 */
import { markAsUntransferable } from 'node:worker_threads';

let transferIgnoresMark: boolean | undefined;

/**
 * Whether `ArrayBuffer.prototype.transfer()` (Node >= 21) can detach an ArrayBuffer
 * marked untransferable on this Node: V8 honoured Node's detach key there only late
 * (nodejs/node#61362). Probed once on a throwaway buffer.
 */
export function transferIgnoresUntransferable(): boolean {
  if (transferIgnoresMark !== undefined) return transferIgnoresMark;
  const transfer = (ArrayBuffer.prototype as { transfer?: (this: ArrayBuffer) => ArrayBuffer })
    .transfer;
  transferIgnoresMark = false;
  if (typeof transfer === 'function') {
    const probe = new ArrayBuffer(8);
    markAsUntransferable(probe);
    try {
      transfer.call(probe);
      transferIgnoresMark = probe.byteLength === 0;
    } catch {
      // refused: the mark holds
    }
  }
  return transferIgnoresMark;
}
