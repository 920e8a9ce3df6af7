/**
 * Observations as comparable fields. Both sides (engine and device) describe what a
 * program saw with these functions, so a field means the same thing on both.
 */
import { type CompletionPart, fieldName, type HammerPart } from '../judge/observation.js';
import { formatValue } from './compare-format.js';
import { traitsOf } from './operations.js';
import { type Operation, type RequesterQp, type Side, wrName } from './scenario.js';

/** A completion as both sides report it (a subset of `struct ibv_wc` plus the fetched word). */
export interface ObservedCompletion {
  readonly wrId: bigint;
  readonly status: string;
  readonly opcode: string | undefined;
  readonly byteLen: number;
  readonly flags: readonly string[];
  /** ntohl(imm_data). */
  readonly imm: number | undefined;
  /** imm_data as a little-endian host reads the raw field. */
  readonly immRaw: number | undefined;
  readonly vendorErr: number;
  /**
   * The rkey a Send with Invalidate invalidated (ibv_wc.invalidated_rkey, IBTA 1.5
   * §11.4.2.1), named: `window` for the scenario's window's; given only on the receive
   * completions of a program that invalidates remotely.
   */
  readonly invalidated?: string;
  /**
   * Which responder QP the completion is of (ibv_wc.qp_num named `first` or `second`),
   * given only for the responder in a scenario with an SRQ.
   */
  readonly qp?: RequesterQp;
  /**
   * A UD receive's sender (ibv_wc.src_qp): `requester` for the program's requester QP,
   * else its hex; given only for the responder in a `ud` scenario.
   */
  readonly srcQp?: string;
  /** The local 8 bytes after a successful fetching operation (Read data, atomic original). */
  readonly fetched: bigint | undefined;
}

/** The part of a completion whose source fields have the same names on both sides. */
type CommonCompletion = Pick<
  ObservedCompletion,
  'wrId' | 'status' | 'opcode' | 'byteLen' | 'flags'
>;

/** A completion as a side polled it: the common fields, then the side's own. */
export function observedCompletion(
  wc: CommonCompletion,
  own: Pick<ObservedCompletion, 'imm' | 'immRaw' | 'vendorErr' | 'invalidated' | 'qp' | 'srcQp'>,
): Omit<ObservedCompletion, 'fetched'> {
  const { wrId, status, opcode, byteLen, flags } = wc;
  return { wrId, status, opcode, byteLen, flags, ...own };
}

/**
 * The fields of completion number `n` (1-based) of `side`. libibverbs defines only
 * wr_id, status, qp_num and vendor_err on an error completion (ibv_poll_cq(3)), so the
 * rest is compared only on success; byte_len only where it is defined (receives and
 * atomics; a Write's or Send's requester byte_len is unspecified by IBTA).
 */
export function completionFields(
  side: Side,
  n: number,
  wc: ObservedCompletion,
  operation: Operation | undefined,
): Record<string, string> {
  const fields: Record<string, string> = {};
  const put = (part: CompletionPart, value: string) => {
    fields[fieldName({ kind: 'completion', side, n, part })] = value;
  };
  put('wr', wrName(wc.wrId));
  put('status', wc.status);
  if (wc.qp !== undefined) put('qp', wc.qp);
  if (wc.status !== 'SUCCESS') {
    put('vendor_err', formatValue(wc.vendorErr));
    return fields;
  }
  const traits = operation === undefined ? undefined : traitsOf(operation.kind);
  put('opcode', wc.opcode ?? 'unknown');
  if (wc.opcode?.startsWith('RECV') || traits?.reportsByteLen) put('byte_len', String(wc.byteLen));
  put('flags', wc.flags.length === 0 ? 'none' : wc.flags.join('|'));
  if (wc.imm !== undefined) {
    put('imm', formatValue(wc.imm));
    put('imm_raw', formatValue(wc.immRaw));
  }
  if (wc.invalidated !== undefined) put('inv_rkey', wc.invalidated);
  if (wc.srcQp !== undefined) put('src_qp', wc.srcQp);
  if (side === 'requester' && traits?.fetches) put('fetched', formatValue(wc.fetched));
  return fields;
}

/** The field of a wait that got fewer completions than it asked for. */
export function missingCompletionField(side: Side, n: number): Record<string, string> {
  return { [fieldName({ kind: 'completion', side, n, part: 'status' })]: 'none' };
}

/**
 * The fields of the `k`-th concurrency step: successful completions, distinct fetched
 * values, and whether the fetched values are exactly initial, initial+add, ... (every
 * intermediate sum seen once: the atomics were serialised without loss).
 */
export function hammerFields(
  k: number,
  post: string,
  succeeded: number,
  fetched: readonly bigint[],
  initial: bigint,
  add: bigint,
): Record<string, string> {
  const mask = 0xffff_ffff_ffff_ffffn;
  const expected = new Set(fetched.map((_, i) => (initial + BigInt(i) * add) & mask));
  const seen = new Set(fetched);
  const complete = seen.size === expected.size && [...seen].every((v) => expected.has(v));
  const name = (part: HammerPart) => fieldName({ kind: 'hammer', n: k, part });
  return {
    [name('post')]: post,
    [name('succeeded')]: String(succeeded),
    [name('distinct')]: String(seen.size),
    [name('sequence')]: complete ? 'every intermediate sum once' : 'gaps or repeats',
  };
}
