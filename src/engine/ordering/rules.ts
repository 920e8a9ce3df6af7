/**
 * The ordering and completion rules as data: RFC 7306 §7 (the table, "from the
 * standpoint of the Local Peer issuing the Operations") and the RFC 5040 §5.5 base rules
 * it refers to. A rule constrains two operations issued in that order on one stream.
 */

/** Operation kinds of the table. Send covers all four Send variants, Immediate Data both. */
export type OrderedOperation = 'send' | 'immediate' | 'write' | 'read' | 'atomic';

/**
 * Observable events. `remote` is the Remote Peer (Data Sink / Responder), `local` the
 * Local Peer (Data Source / Requester).
 * - `placed@remote`: payload / Immediate Data / atomic result Placed at the Remote Peer.
 * - `delivered@remote`: Message Delivered to the Remote Peer's RDMAP.
 * - `completed@remote`: the operation Completed at the Remote Peer (receive completion).
 * - `processed@remote`: an Atomic / Read Request starts processing at the Responder.
 * - `response-generated@remote`: the Read Response / Atomic Response is generated.
 * - `placed@local`: the Read Response data / Atomic Response Placed at the Local Peer.
 * - `completed@local`: the work request Completed at the Local Peer.
 */
export type OrderingEventKind =
  | 'placed@remote'
  | 'delivered@remote'
  | 'completed@remote'
  | 'processed@remote'
  | 'response-generated@remote'
  | 'placed@local'
  | 'completed@local';

/** "`later` of one operation happens only after `earlier` of the other." */
export interface HappensBefore {
  readonly earlier: { readonly op: 'first' | 'second'; readonly event: OrderingEventKind };
  readonly later: { readonly op: 'first' | 'second'; readonly event: OrderingEventKind };
}

/** The column of the RFC 7306 §7 table a constraint comes from. */
export type TableColumn =
  | 'placement at Remote Peer'
  | 'placement at Local Peer'
  | 'ordering at Remote Peer';

/** One constraint of a row, with the table's own words. */
export interface OrderingConstraint extends HappensBefore {
  readonly column: TableColumn;
  readonly text: string;
}

/** One row: a pair of operations and what is (and is not) guaranteed. */
export interface OrderingRule {
  /** Stable id used in violation reports and the traceability table. */
  readonly id: string;
  readonly source: 'RFC 7306 §7' | 'RFC 7306 §5.4' | 'RFC 5040 §5.5';
  readonly first: OrderedOperation;
  readonly second: OrderedOperation;
  /** Guarantees; an empty list means the table row grants none ("No Placement Guarantee"). */
  readonly constraints: readonly OrderingConstraint[];
}

/** "`later` of the second operation happens only after `earlier` of the first." */
function constraint(
  column: TableColumn,
  earlier: OrderingEventKind,
  later: OrderingEventKind,
  text: string,
): OrderingConstraint {
  return {
    column,
    text,
    earlier: { op: 'first', event: earlier },
    later: { op: 'second', event: later },
  };
}

const completedInOrder = (text: string): OrderingConstraint =>
  constraint('ordering at Remote Peer', 'completed@remote', 'completed@remote', text);

const responseAfterFirstCompleted = (text: string): OrderingConstraint =>
  constraint('ordering at Remote Peer', 'completed@remote', 'response-generated@remote', text);

const responsePlacedAfterFirstPlaced = (text: string): OrderingConstraint =>
  constraint('placement at Local Peer', 'placed@remote', 'placed@local', text);

const responseAfterFirstResponse = (text: string): OrderingConstraint =>
  constraint(
    'ordering at Remote Peer',
    'response-generated@remote',
    'response-generated@remote',
    text,
  );

const completedAfterFirst = (earlier: OrderingEventKind, text: string): OrderingConstraint =>
  constraint('ordering at Remote Peer', earlier, 'completed@remote', text);

/** A rule of `source`: `second` issued after `first` on one stream, and its guarantees. */
function rule(
  source: OrderingRule['source'],
  id: string,
  [first, second]: readonly [OrderedOperation, OrderedOperation],
  ...constraints: OrderingConstraint[]
): OrderingRule {
  return { id, source, first, second, constraints };
}

const t7 = (
  id: string,
  pair: readonly [OrderedOperation, OrderedOperation],
  ...c: OrderingConstraint[]
) => rule('RFC 7306 §7', id, pair, ...c);
const b5 = (
  id: string,
  pair: readonly [OrderedOperation, OrderedOperation],
  ...c: OrderingConstraint[]
) => rule('RFC 5040 §5.5', id, pair, ...c);

const WRITE_PLACED_AND_DELIVERED =
  'Immediate Data is Completed after RDMA Write is Placed and Delivered';

/** RFC 7306 §7, row by row (draft-ietf-storm-rdmap-ext-2014-03 §7 has the same table). */
export const RFC7306_ORDERING_TABLE: readonly OrderingRule[] = [
  t7('T7-imm-send', ['immediate', 'send'], completedInOrder('Completed in Order')),
  t7('T7-imm-write', ['immediate', 'write']),
  t7(
    'T7-imm-read',
    ['immediate', 'read'],
    responsePlacedAfterFirstPlaced(
      'RDMA Read Response will not be Placed until Immediate Data is Placed at Remote Peer',
    ),
    responseAfterFirstCompleted(
      'RDMA Read Response Message will not be generated until Immediate Data has been Completed',
    ),
  ),
  t7(
    'T7-imm-atomic',
    ['immediate', 'atomic'],
    responsePlacedAfterFirstPlaced(
      'Atomic Response will not be Placed until Immediate Data is Placed at Remote Peer',
    ),
    responseAfterFirstCompleted(
      'Atomic Response Message will not be generated until Immediate Data has been Completed',
    ),
  ),
  t7('T7-imm-imm', ['immediate', 'immediate'], completedInOrder('Completed in Order')),
  t7('T7-send-imm', ['send', 'immediate'], completedInOrder('Completed in Order')),
  t7(
    'T7-write-imm',
    ['write', 'immediate'],
    completedAfterFirst('placed@remote', WRITE_PLACED_AND_DELIVERED),
    completedAfterFirst('delivered@remote', WRITE_PLACED_AND_DELIVERED),
  ),
  // "Immediate Data MAY be Placed before RDMA Read Response is generated": no guarantee.
  t7('T7-read-imm', ['read', 'immediate']),
  // "Immediate Data MAY be Placed before Atomic Response is generated": no guarantee.
  t7('T7-atomic-imm', ['atomic', 'immediate']),
  // "Send Payload MAY be Placed before Atomic Response is generated"; RFC 7306 §5.4 also
  // lets Sends Complete before prior Atomic Requests finish their response processing.
  t7('T7-atomic-send', ['atomic', 'send']),
  t7('T7-atomic-write', ['atomic', 'write']),
  t7(
    'T7-atomic-read',
    ['atomic', 'read'],
    responseAfterFirstResponse(
      'RDMA Read Response Message will not be generated until Atomic Response Message has been generated',
    ),
  ),
  t7(
    'T7-atomic-atomic',
    ['atomic', 'atomic'],
    constraint('placement at Remote Peer', 'placed@remote', 'placed@remote', 'Placed in order'),
    constraint(
      'ordering at Remote Peer',
      'response-generated@remote',
      'processed@remote',
      'Second Atomic Request Message will not be processed until first Atomic Response has been generated',
    ),
  ),
  t7(
    'T7-send-atomic',
    ['send', 'atomic'],
    responsePlacedAfterFirstPlaced(
      'Atomic Response will not be Placed at the Local Peer until Send Payload is Placed at the Remote Peer',
    ),
    responseAfterFirstCompleted(
      'Atomic Response Message will not be generated until Send has been Completed',
    ),
  ),
  t7(
    'T7-write-atomic',
    ['write', 'atomic'],
    responsePlacedAfterFirstPlaced(
      'Atomic Response will not be Placed at the Local Peer until RDMA Write Payload is Placed at the Remote Peer',
    ),
  ),
  t7(
    'T7-read-atomic',
    ['read', 'atomic'],
    responseAfterFirstResponse(
      'Atomic Response Message will not be generated until RDMA Read Response has been generated',
    ),
  ),
];

/**
 * The RFC 5040 §5.5 base rules for the pairs the RFC 7306 table does not list (Send,
 * RDMA Write and RDMA Read among themselves). RFC 7306 §6.4 makes Immediate Data follow
 * the Send rules. RFC 5040 is not among the stored spec texts: the `text` of these rows
 * paraphrases §5.5 rather than quoting it (the RFC 7306 rows above are quotes).
 */
export const RFC5040_ORDERING_RULES: readonly OrderingRule[] = [
  b5(
    'B5-send-send',
    ['send', 'send'],
    completedInOrder('Send Messages are Completed at the Data Sink in the order sent'),
  ),
  b5(
    'B5-write-send',
    ['write', 'send'],
    completedAfterFirst(
      'placed@remote',
      'a Send is Completed at the Data Sink only after earlier RDMA Write data is Placed',
    ),
  ),
  b5(
    'B5-send-read',
    ['send', 'read'],
    responseAfterFirstCompleted(
      'an RDMA Read Request is processed only after earlier Messages are Delivered; its Response follows the Send',
    ),
  ),
  b5(
    'B5-write-read',
    ['write', 'read'],
    responsePlacedAfterFirstPlaced(
      'RDMA Read Response data is Placed at the Local Peer only after earlier RDMA Write data is Placed at the Remote Peer',
    ),
  ),
  b5(
    'B5-read-read',
    ['read', 'read'],
    responseAfterFirstResponse('RDMA Read Responses are generated in the order of the Requests'),
  ),
  b5('B5-send-write', ['send', 'write']),
  b5('B5-write-write', ['write', 'write']),
  b5('B5-read-send', ['read', 'send']),
  b5('B5-read-write', ['read', 'write']),
];

const OPERATIONS: readonly OrderedOperation[] = ['send', 'immediate', 'write', 'read', 'atomic'];

/**
 * RFC 7306 §5.4 sentences beyond the table: "Atomic Operation Response Message processing
 * at the Responder MUST be started only after the Atomic Operation Request Message has
 * been Delivered by the DDP layer (thus, all previous RDMA Messages on that DDP Stream
 * have been Delivered)" — one rule per kind of earlier message.
 */
export const RFC7306_SECTION_5_4_PAIR_RULES: readonly OrderingRule[] = OPERATIONS.map((first) => ({
  id: `S54-${first}-atomic-delivered`,
  source: 'RFC 7306 §5.4',
  first,
  second: 'atomic',
  constraints: [
    constraint(
      'ordering at Remote Peer',
      'delivered@remote',
      'processed@remote',
      'an Atomic Request is processed only after all previous RDMA Messages on the stream have been Delivered',
    ),
  ],
}));

/** One operation's own life cycle (RFC 7306 §5.4). */
export interface SingleOperationRule {
  readonly id: string;
  readonly source: 'RFC 7306 §5.4';
  readonly operation: OrderedOperation;
  readonly text: string;
  readonly earlier: OrderingEventKind;
  readonly later: OrderingEventKind;
}

/** RFC 7306 §5.4 rules on a single Atomic Operation. */
export const SINGLE_OPERATION_RULES: readonly SingleOperationRule[] = [
  {
    id: 'S54-atomic-processed-after-delivered',
    source: 'RFC 7306 §5.4',
    operation: 'atomic',
    text: 'Atomic Operation Request Messages MUST NOT start processing at the Responder until they have been Delivered to RDMAP by DDP',
    earlier: 'delivered@remote',
    later: 'processed@remote',
  },
  {
    id: 'S54-atomic-response-after-processed',
    source: 'RFC 7306 §5.4',
    operation: 'atomic',
    text: 'the Atomic Response is generated by processing the delivered Atomic Request',
    earlier: 'processed@remote',
    later: 'response-generated@remote',
  },
  {
    id: 'S54-atomic-completed-after-response',
    source: 'RFC 7306 §5.4',
    operation: 'atomic',
    text: 'An Atomic Operation MUST NOT be Completed at the Requester until the DDP layer Delivers the associated incoming Atomic Operation Response Message',
    earlier: 'placed@local',
    later: 'completed@local',
  },
];

/** Every pair rule: RFC 7306 §7 rows, the RFC 5040 §5.5 base rules, RFC 7306 §5.4. */
export const ORDERING_RULES: readonly OrderingRule[] = [
  ...RFC7306_ORDERING_TABLE,
  ...RFC5040_ORDERING_RULES,
  ...RFC7306_SECTION_5_4_PAIR_RULES,
];

/** The rules that apply to an ordered pair of operations. */
export function orderingRules(
  first: OrderedOperation,
  second: OrderedOperation,
): readonly OrderingRule[] {
  return ORDERING_RULES.filter((r) => r.first === first && r.second === second);
}
