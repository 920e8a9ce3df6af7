/**
 * Asynchronous events of a device context (`ibv_get_async_event`): the kernel reports a
 * CQ overrun (CQ_ERR), a QP that failed (QP_FATAL, QP_REQ_ERR, QP_ACCESS_ERR), port
 * changes (PORT_ACTIVE, PORT_ERR, ...) here and nowhere else. Each event is read from
 * the context's async fd on the libuv loop, acknowledged at once, named with
 * {@link ASYNC_EVENT} and paired with the wrapper object it concerns.
 */

import { ASYNC_EVENT, type AsyncEventType, nameOf } from '../ibverbs/constants.js';
import type { NativeAsyncEvent } from '../native/bindings.js';
import type { Cq } from './cq.js';
import { VerbsError } from './errors.js';
import type { Qp } from './qp.js';
import type { Srq } from './srq.js';

/** One asynchronous event, with the object it concerns. */
export interface AsyncEvent {
  /** `CQ_ERR`, `QP_FATAL`, `PORT_ACTIVE`, ... (the C name without `IBV_EVENT_`). */
  readonly type: AsyncEventType;
  /** The raw `enum ibv_event_type` value. */
  readonly typeCode: number;
  /** CQ_ERR: the CQ (undefined if it was already collected). */
  readonly cq?: Cq;
  /** QP events: the QP (undefined if it was already collected or is not this wrapper's). */
  readonly qp?: Qp;
  /** QP events: the QP number. */
  readonly qpNum?: number;
  /** SRQ_LIMIT_REACHED, SRQ_ERR: the SRQ (undefined if it was already collected). */
  readonly srq?: Srq;
  /** Port events: the port number. */
  readonly portNum?: number;
}

/**
 * The error that rejects the waits of a CQ the device reported in error (CQ_ERR, e.g.
 * an overrun: more completions than entries). `lostWrIds` are the requests that were in
 * flight on the QPs using that CQ: their completions will never arrive, and the wrapper
 * released what they kept alive.
 */
export class VerbsAsyncEventError extends VerbsError {
  override readonly name: string = 'VerbsAsyncEventError';
  constructor(
    readonly event: AsyncEventType,
    device: string,
    readonly lostWrIds: readonly bigint[],
  ) {
    super(
      'EIO',
      5,
      'ibv_get_async_event',
      device,
      `${String(event)} on ${String(device)}: ${Array.isArray(lostWrIds) ? lostWrIds.length : 0} request(s) in flight will never complete`,
    );
  }
}

/** Names a native event and finds its objects. */
export function toAsyncEvent(
  ev: NativeAsyncEvent,
  cqOf: (key: bigint) => Cq | undefined,
  qpOf: (qpNum: number) => Qp | undefined,
  srqOf: (key: bigint) => Srq | undefined = () => undefined,
): AsyncEvent {
  const type = nameOf(ASYNC_EVENT, ev.eventType) ?? 'DEVICE_FATAL';
  const cq = ev.cqKey !== undefined ? cqOf(ev.cqKey) : undefined;
  const qp = ev.qpNum !== undefined ? qpOf(ev.qpNum) : undefined;
  const srq = ev.srqKey !== undefined ? srqOf(ev.srqKey) : undefined;
  return {
    type,
    typeCode: ev.eventType,
    ...(cq !== undefined ? { cq } : {}),
    ...(qp !== undefined ? { qp } : {}),
    ...(ev.qpNum !== undefined ? { qpNum: ev.qpNum } : {}),
    ...(srq !== undefined ? { srq } : {}),
    ...(ev.portNum !== undefined ? { portNum: ev.portNum } : {}),
  };
}
