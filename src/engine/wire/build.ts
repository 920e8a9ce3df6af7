/**
 * Builders the codec's `build.ts` does not have: the V2 draft messages (Send with
 * Immediate Data segments, RDMA Read V2 Request / Response). Everything else is built
 * with the codec's `make*` helpers.
 */
import { requireBytes, requireInteger, requireObject } from '../../arguments.js';
import { controlBitsFor, untaggedPlacementFor } from '../../codec/iwarp/build.js';
import type {
  ReadV2Request,
  ReadV2Response,
  SendWithImmediate,
} from '../../codec/iwarp/messages.js';

/**
 * The segments of a Send with Immediate Data variant (V2 draft §5.3): the payload (if any)
 * in a segment with L = 0, then one segment with L = 1 carrying only the immediate data
 * ("The immediate data MUST be the only data allowed in the ULPDU with the L bit set").
 * Both belong to one DDP message: same MSN, MO advancing.
 */
export function sendWithImmediateSegments(
  msn: number,
  kind: SendWithImmediate['kind'],
  payload: Uint8Array,
  value: bigint,
  invalidateSTag = 0,
): SendWithImmediate[] {
  const control = controlBitsFor('v2-draft');
  const segments: SendWithImmediate[] = [];
  if (payload.length > 0)
    segments.push({
      kind,
      ddp: untaggedPlacementFor(kind, msn, { last: false, messageOffset: 0 }),
      control,
      invalidateSTag,
      payload,
      immediateData: undefined,
    });
  segments.push({
    kind,
    ddp: untaggedPlacementFor(kind, msn, { last: true, messageOffset: payload.length }),
    control,
    invalidateSTag,
    payload: new Uint8Array(0),
    immediateData: value,
  });
  return segments;
}

/** RDMA Read V2 Request on QN 1 (V2 draft §6.1). */
export function makeReadV2Request(
  msn: number,
  fields: Pick<ReadV2Request, 'readSize' | 'sourceSTag' | 'sourceTaggedOffset'>,
): ReadV2Request {
  requireInteger('engine', 'msn', msn, 0, 0xffff_ffff);
  requireObject('engine', 'fields', fields);
  return { ...untaggedV2('read-v2-request', msn), ...fields };
}

/** RDMA Read V2 Response, untagged on QN 3 (V2 draft §6, §6.3). */
export function makeReadV2Response(msn: number, payload: Uint8Array): ReadV2Response {
  requireInteger('engine', 'msn', msn, 0, 0xffff_ffff);
  requireBytes('engine', 'payload', payload);
  return { ...untaggedV2('read-v2-response', msn), payload };
}

/** The header of a V2 untagged message of `kind` (RV 2 control, no Invalidate STag). */
function untaggedV2<K extends 'read-v2-request' | 'read-v2-response'>(kind: K, msn: number) {
  return {
    kind,
    ddp: untaggedPlacementFor(kind, msn),
    control: controlBitsFor('v2-draft'),
    invalidateSTag: 0,
  };
}
