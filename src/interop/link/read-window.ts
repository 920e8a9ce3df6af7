/**
 * The word a Read that follows FetchAdds of the same word may return, on the link.
 *
 * A Read posted after k FetchAdds to its word returns the word as the k-th left it, or
 * as a later one of the same post left it, and never anything else:
 * - RoCE (rxe): a Read whose response was lost is repeated with everything after it
 *   (go-back-N). The responder answers a repeated Atomic from its saved result but
 *   executes a repeated Read again, against the memory as it is then (IBTA 1.5 ch. 9,
 *   duplicate requests; rxe_resp.c duplicate_request() re-enters RESPST_READ_REPLY,
 *   which copies from the MR when it builds the reply). By then the FetchAdds after the
 *   Read have run once each.
 * - iWARP (siw): an RDMA Read Response may be generated after later messages of the
 *   stream were placed (RFC 5040 §5.5). RFC 7306 §7 orders Atomics among themselves, not
 *   against an earlier Read's response. siw builds Read Responses on its transmit path
 *   (siw_qp_sq_process from the IRQ) while its receive path executes the next Atomic.
 *
 * So both outcomes of a faulty-wire row name such a Read's value by the window it must
 * fall in. The exact words go to the note. A value outside the window stays as it is and
 * diverges. The FetchAdds' own values stay exact: a repeated Atomic is answered from its
 * saved result, and RFC 7306 §7 executes Atomics once, in order.
 */
import { maskedFetchAdd } from '../../engine/atomic/masked-arith.js';
import { fieldName, tryParseField } from '../../judge/observation.js';
import { formatValue } from '../compare-format.js';
import type { Outcome, Scenario } from '../scenario.js';
import { DEFAULT_TARGET, workRequestsOf } from '../scenario.js';

/** What a Read's field says when its value falls in its window. */
export const IN_WINDOW = "its FetchAdd's word or a later FetchAdd's";

/**
 * The words each Read may return, by work-request index, or undefined when the
 * scenario is not one this rule covers: Reads and FetchAdds of one word, nothing else.
 */
export function readWindows(scenario: Scenario): Map<number, readonly bigint[]> | undefined {
  const ops = workRequestsOf(scenario);
  const covered = ops.every(
    (op) =>
      (op.kind === 'RDMA_READ' || op.kind === 'ATOMIC_FETCH_AND_ADD') &&
      (op.target ?? DEFAULT_TARGET) === DEFAULT_TARGET &&
      (op.rkey ?? 'valid') === 'valid',
  );
  if (!covered || !ops.some((op) => op.kind === 'RDMA_READ')) return undefined;
  // states[k]: the word after the first k FetchAdds.
  const states = [scenario.initial];
  let word = scenario.initial;
  for (const op of ops)
    if (op.kind === 'ATOMIC_FETCH_AND_ADD') {
      // The engine's FetchAdd: the verbs one is RFC 7306's with Add Mask 0 (IBTA §9.4.5).
      word = maskedFetchAdd(word, op.add ?? 0n, 0n);
      states.push(word);
    }
  const windows = new Map<number, readonly bigint[]>();
  let before = 0;
  ops.forEach((op, index) => {
    if (op.kind === 'ATOMIC_FETCH_AND_ADD') before += 1;
    else windows.set(index, states.slice(before));
  });
  return windows;
}

/** `outcome` with each in-window Read named by its window (see the module comment). */
export function withReadWindows(scenario: Scenario, outcome: Outcome): Outcome {
  const windows = readWindows(scenario);
  if (windows === undefined) return outcome;
  const fields = { ...outcome.fields };
  const late: string[] = [];
  for (const [name, value] of Object.entries(outcome.fields)) {
    const key = tryParseField(name);
    const fetched =
      key?.kind === 'completion' && key.side === 'requester' && key.part === 'fetched';
    const wr = fetched ? outcome.fields[fieldName({ ...key, part: 'wr' })] : undefined;
    const window = wr === undefined ? undefined : windows.get(Number(wr.slice(2)) - 1);
    // A window of one word (the last Read) is compared exactly, as any other value.
    if (window === undefined || window.length < 2) continue;
    const at = window.findIndex((word) => formatValue(word) === value);
    if (at < 0) continue;
    fields[name] = IN_WINDOW;
    if (at > 0) late.push(`${wr} read ${value} (${at} FetchAdd(s) after its own)`);
  }
  const lateNote = late.length > 0 ? `later words: ${late.join(', ')}` : undefined;
  const note = [outcome.note, lateNote].filter((n) => n !== undefined).join('; ');
  // Everything else of the outcome (its pcap) stays as it is.
  return note === '' ? { ...outcome, fields } : { ...outcome, fields, note };
}
