/**
 * The fields of a write-stream scenario (write-stream.ts), as the engine predicts them and
 * as the guests observed them. One field per property the stream must keep:
 *
 * - `stream.post`: ibv_post_send's result;
 * - `stream.requester`, `stream.responder`: the requests' and the receives' completions,
 *   as a class (every one SUCCESS; SUCCESS then WR_FLUSH_ERR; else the status runs);
 * - `stream.immediates`: each immediate at most once, in the order of the writes;
 * - `stream.memory`: B's buffer against the bytes A sent;
 * - `stream.terminate` (siw): the Terminates on the stream's connection.
 *
 * On a lossy wire (drop, duplicate, reorder) every write completes and every byte arrives.
 * In the MPA CRC case (fault-scenarios.ts MPA_CRC) the first FPDU whose payload the relay
 * changed fails its CRC at B: RFC 5044 §7.2, the FPDU is not delivered to DDP, and §8, the
 * stream ends with a Terminate of the LLP layer, MPA Error, CRC Error (the engine's
 * failure table, `mpa-crc-error`); the QPs go to the error state (RFC 5040 §5.4), so what
 * is outstanding on either side completes as flushed (WR_FLUSH_ERR), and nothing of the bad
 * FPDU or after it is placed.
 */
import { terminateCodeInfo } from '../../codec/iwarp/terminate-codes.js';
import { terminateCodeOf } from '../../engine/errors/failure-table.js';
import { fieldName, type StreamPart } from '../../judge/observation.js';
import type { Scenario } from '../scenario.js';
import { MPA_CRC } from './fault-scenarios.js';
import type { LinkCapture } from './observed.js';
import type { LinkObservation } from './protocol.js';
import { immediatesOf, type StatusRuns, statusRuns, type WriteStream } from './write-stream.js';

const FLUSHED_AFTER = 'SUCCESS, then WR_FLUSH_ERR';

function streamField(part: StreamPart): string {
  return fieldName({ kind: 'stream', part });
}

/** The class of a completion sequence of `total` requests (or receives). */
export function completionClass(runs: StatusRuns, total: number): string {
  if (runs === `${total} SUCCESS`) return `every one SUCCESS (${total})`;
  if (/^(\d+ SUCCESS, )?\d+ WR_FLUSH_ERR$/.test(runs)) return FLUSHED_AFTER;
  return runs;
}

/** The immediates verdict without its count (the count differs when a stream is cut short). */
function immediatesClass(text: string): string {
  return text.startsWith('every immediate once, in order') ? 'once each, in order' : text;
}

/** The engine's Terminate for an FPDU whose MPA CRC fails (RFC 5044 §8). */
function crcTerminate(): string {
  return `B: ${terminateCodeOf('mpa-crc-error').id}`;
}

/** The engine's fields of a stream scenario. */
export function expectedStreamFields(
  scenario: Scenario,
  stream: WriteStream,
): Record<string, string> {
  const total = stream.bytes / stream.chunk;
  const cut = scenario === MPA_CRC;
  return {
    [streamField('post')]: 'ok',
    [streamField('requester')]: cut
      ? FLUSHED_AFTER
      : completionClass(statusRuns(repeat('SUCCESS', total)), total),
    [streamField('responder')]: cut
      ? FLUSHED_AFTER
      : completionClass(statusRuns(repeat('SUCCESS', total)), total),
    [streamField('immediates')]: immediatesClass(immediatesOf([])),
    [streamField('memory')]: cut ? 'a prefix as sent, the rest untouched' : 'every byte as sent',
    ...(scenario.device === 'siw0'
      ? { [streamField('terminate')]: cut ? crcTerminate() : 'none' }
      : {}),
  };
}

function repeat(status: string, count: number): string[] {
  return Array.from({ length: count }, () => status);
}

/** The Terminates on the stream's connection in the capture, `A: id` / `B: id`, in order. */
function terminatesOf(observation: LinkObservation, capture: LinkCapture): string {
  const port = observation.serverPort ?? -1;
  const connection = capture.decoded.connections.findIndex((c) => c.server.port === port);
  const seen = capture.decoded.items.flatMap((item) => {
    if (item.kind !== 'fpdu' || item.connection !== connection || !item.fpdu.message.ok) return [];
    const message = item.fpdu.message.value;
    if (message.kind !== 'terminate') return [];
    const code = terminateCodeInfo(message.layer, message.errorType, message.errorCode);
    const from = item.direction === 'client-to-server' ? 'A' : 'B';
    return [
      `${from}: ${code?.id ?? `layer=${message.layer} type=${message.errorType} code=0x${message.errorCode.toString(16)}`}`,
    ];
  });
  return seen.length === 0 ? 'none' : seen.join(', ');
}

/** The guests' fields of a stream scenario, and a note with the counts behind them. */
export function observedStreamFields(
  scenario: Scenario,
  stream: WriteStream,
  observation: LinkObservation,
  capture: LinkCapture | undefined,
): { fields: Record<string, string>; note: string } {
  const total = stream.bytes / stream.chunk;
  const requester = observation.stream?.requester;
  const responder = observation.stream?.responder;
  const fields: Record<string, string> = {
    [streamField('post')]: requester?.post ?? 'none',
    [streamField('requester')]:
      requester === undefined ? 'none' : completionClass(requester.statuses, total),
    [streamField('responder')]:
      responder === undefined ? 'none' : completionClass(responder.statuses, total),
    [streamField('immediates')]:
      responder === undefined ? 'none' : immediatesClass(responder.immediates),
    [streamField('memory')]: responder?.memory ?? 'none',
  };
  if (scenario.device === 'siw0')
    fields[streamField('terminate')] =
      capture === undefined ? 'no capture' : terminatesOf(observation, capture);
  const note = [
    `requester: ${requester?.statuses ?? 'none'} in ${requester?.elapsedMs ?? '?'} ms`,
    `responder: ${responder?.statuses ?? 'none'}, ${responder?.immediates ?? ''}`,
    `memory: ${responder?.placed ?? 0} bytes as sent, ${responder?.untouched ?? 0} untouched, ${responder?.wrong ?? 0} wrong${responder?.firstWrong === undefined ? '' : ` (first at ${responder.firstWrong})`}`,
  ].join('; ');
  return { fields, note };
}
