/**
 * An interop scenario: a short program of verbs steps on a connected pair of QPs (post a
 * send list, post a receive, wait for completions, query or modify a QP, sleep, post
 * again), described as data so that the same program runs through the reference engine
 * (expected.ts) and on a real kernel device (kernel/execute.ts), and the two sets of
 * observations can be compared field by field (compare.ts).
 */
import type { Access } from '../verbs/mr.js';
import type { OperandValues, OperationKind, ReceiveUse } from './operations.js';

/**
 * The two reference targets the scenario table is written for: the soft devices the
 * runtime creates (scripts/rdma-devices.sh). A scenario's `device` names its target (the
 * transport and bring-up it is written for); it runs on any device that offers what it
 * needs (requirements.ts), bound to it by {@link Scenario.on} (issue 37).
 */
export type DeviceName = 'rxe0' | 'siw0';

/**
 * The device a scenario is bound to, when it runs on one other than its reference target
 * (or on the target by another address): its name, provider and how it is addressed.
 */
export interface DeviceBinding {
  readonly name: string;
  /** The provider (`rxe`, `siw`, `mlx5`...): which timer witness and QP rules apply. */
  readonly provider: string;
  /** The address rdma_cm binds and connects to (IPv4 or IPv6 text). */
  readonly address: string;
  /** The GID index a by-hand bring-up uses. */
  readonly gidIndex: number;
}

/**
 * How a pair of QPs is brought up: `by-hand` (RESET→INIT→RTR→RTS with the RoCE v2 GID,
 * rxe only) or through rdma_cm (iw_cm on siw, where an iWARP QP reaches RTS only with an
 * LLP connection; ib_cm over RoCE on rxe).
 */
export type Connection = 'by-hand' | 'rdma-cm';

/**
 * How a device's QPs are connected unless a scenario says otherwise, which transport it
 * speaks, its provider, and the IPv4 address its netdev carries (scripts/rdma-devices.sh).
 */
export const DEVICES = {
  rxe0: { transport: 'roce', connect: 'by-hand', provider: 'rxe', address: '192.0.2.1' },
  siw0: { transport: 'iwarp', connect: 'rdma-cm', provider: 'siw', address: '198.51.100.1' },
} as const satisfies Record<
  DeviceName,
  { transport: 'roce' | 'iwarp'; connect: Connection; provider: string; address: string }
>;

export type Transport = (typeof DEVICES)[DeviceName]['transport'];

/** The device `scenario` runs on: its binding's, else its reference target. */
export function deviceOf(scenario: Pick<Scenario, 'device' | 'on'>): string {
  return scenario.on?.name ?? scenario.device;
}

/** The address `scenario`'s device is reached at (rdma_cm). */
export function addressOf(scenario: Pick<Scenario, 'device' | 'on'>): string {
  return scenario.on?.address ?? DEVICES[scenario.device].address;
}

/** The provider of `scenario`'s device: its binding's, else the reference target's. */
export function deviceProviderOf(scenario: Pick<Scenario, 'device' | 'on'>): string {
  return scenario.on?.provider ?? DEVICES[scenario.device].provider;
}

/** `scenario` bound to `binding` (the same program, id and target). */
export function bindScenario(scenario: Scenario, binding: DeviceBinding): Scenario {
  return { ...scenario, on: binding };
}

/** How `scenario`'s pair is brought up: its own `connect`, or its device's. */
export function connectionOf(scenario: Pick<Scenario, 'device' | 'connect'>): Connection {
  return scenario.connect ?? DEVICES[scenario.device].connect;
}

/** The two QPs of a pair: the requester posts the scenario's operations. */
export type Side = 'requester' | 'responder';

/** Which of the requester's QPs posts (`second` only in a scenario with an SRQ). */
export type RequesterQp = 'first' | 'second';

/** True when the program posts on the requester's second QP. */
export function usesSecondQp(scenario: Pick<Scenario, 'program'>): boolean {
  return scenario.program.some((s) => s.do === 'post-send' && s.qp === 'second');
}

/**
 * The responder's memory region: 32 bytes (four words at MR offsets 0, 8, 16, 24) inside
 * a 48-byte buffer, with one guard word on each side (offsets -8 and 32), so that a write
 * just outside the region shows.
 */
export const MR_LENGTH = 32;
export const GUARD = 8;
/** The word a scenario targets unless it says otherwise (MR offset). */
export const DEFAULT_TARGET = 8;
/** Where a write-with-immediate's receive buffer sits (iWARP places the 8 bytes there). */
export const IMMEDIATE_RECEIVE_OFFSET = 24;

/** One work request of a post-send step. */
export interface Operation extends OperandValues {
  readonly kind: OperationKind;
  /** Target offset inside the responder's MR (remote operations); default 8. */
  readonly target?: number;
  /** The first word the local buffer holds before the post (what a Write or Send carries). */
  readonly payload?: bigint;
  /** Bytes a Write or Send carries: 0, 8 (default) or 16 (see {@link payloadBytes}). */
  readonly length?: 0 | 8 | 16;
  /**
   * `valid`: the responder MR's rkey; `invalid`: an rkey the responder never issued;
   * `window`: the rkey of the scenario's memory window (a `bind-mw` step binds it).
   */
  readonly rkey?: 'valid' | 'invalid' | 'window';
  /**
   * The local SGE: `valid` (8 bytes of the local buffer), `invalid-lkey`, `short` (4
   * bytes), `none` (no SGE at all).
   */
  readonly local?: 'valid' | 'invalid-lkey' | 'short' | 'none';
  /** IBV_SEND_SOLICITED. */
  readonly solicited?: boolean;
  /**
   * A scenario with `ud`: the multicast group the UD Send is addressed to (with the
   * multicast QPN 0xFFFFFF, IBTA 1.5 §10.5); default `g1`.
   */
  readonly group?: McastGroup;
}

/**
 * The multicast groups a `ud` scenario uses: IPv4 groups as RoCE v2 maps them into GIDs
 * (::ffff:239.1.34.1 and ::ffff:239.1.34.2; kernel/ud-pair.ts joins them on the device's
 * netdev).
 */
export const MCAST_GROUPS = { g1: '239.1.34.1', g2: '239.1.34.2' } as const;
export type McastGroup = keyof typeof MCAST_GROUPS;

/**
 * What an attach or detach names: a group, or `unicast`: the device's own address as a
 * GID (::ffff:a.b.c.d), which is no multicast GID (IBTA 1.5 §11.3: refused).
 */
export type McastTarget = McastGroup | 'unicast';

/**
 * The 16 bytes of `target`'s GID for `scenario`'s device: an IPv4-mapped address either
 * way (a device bound by an IPv6 address has no IPv4 unicast GID: `unicast` then maps
 * the reference target's address, which is no multicast GID either).
 */
export function mcastGidOf(
  scenario: Pick<Scenario, 'device' | 'on'>,
  target: McastTarget,
): Uint8Array {
  const own = addressOf(scenario);
  const ipv4 =
    target !== 'unicast'
      ? MCAST_GROUPS[target]
      : own.includes(':')
        ? DEVICES[scenario.device].address
        : own;
  const gid = new Uint8Array(16);
  gid[10] = 0xff;
  gid[11] = 0xff;
  gid.set(ipv4.split('.').map(Number), 12);
  return gid;
}

/** One step of a scenario's program. */
export type Step =
  /**
   * One ibv_post_send (or one ibv_wr_start..complete batch), on the requester unless
   * `side` says `responder`: then each request is an 8-byte RDMA Write back into the
   * requester's buffer (what a further post on the responder QP gets).
   */
  | {
      readonly do: 'post-send';
      readonly wrs: readonly Operation[];
      readonly side?: Side;
      /**
       * `second`: the requester's second QP (a scenario with `srq`), connected to the
       * responder's second QP, which receives through the same SRQ; default `first`.
       */
      readonly qp?: RequesterQp;
    }
  /**
   * One receive on the responder: `send` = 8 bytes over the target word; `write-imm` = what
   * write-with-immediate consumes on the transport (none on RoCE, 8 bytes on iWARP). In a
   * scenario with `srq` it is posted to the SRQ (ibv_post_srq_recv).
   */
  | {
      readonly do: 'post-recv';
      readonly for: ReceiveUse;
      /** A `ud` scenario: which receiving QP the receive goes to; default `first`. */
      readonly qp?: RequesterQp;
    }
  /**
   * Polls `count` completions from the side's CQ (fewer if `timeoutMs` passes). `timed`:
   * also report the class of timer each completion came in (`wcN.timer`, rnr-timing.ts),
   * counted from the side's last post: the engine by its clock, a device by what it
   * counted (kernel/timer-witness.ts), never by the guest's wall clock.
   */
  | {
      readonly do: 'wait';
      readonly side: Side;
      readonly count: number;
      readonly timeoutMs?: number;
      readonly timed?: boolean;
      /** A `ud` scenario's responder: which receiving QP's CQ; default `first`. */
      readonly qp?: RequesterQp;
    }
  /** ibv_query_qp on one side: its state. */
  | { readonly do: 'query'; readonly side: Side }
  /** ibv_modify_qp at RTS: the side's remote access flags. */
  | { readonly do: 'modify'; readonly side: Side; readonly access: readonly Access[] }
  | { readonly do: 'sleep'; readonly ms: number }
  /**
   * ibv_req_notify_cq(cq, 1) on the side's CQ: the next completion event only for a
   * solicited receive completion or an error (IBTA 1.5 §11.4.2.2, Request Completion
   * Notification; RFC 5040 §5.3, Send with Solicited Event). A later `cq-event` step
   * waits for the event, at most `timeoutMs`.
   */
  | { readonly do: 'arm-solicited'; readonly side: Side; readonly timeoutMs: number }
  /**
   * ibv_get_cq_event after an `arm-solicited` of the same side: whether the CQ's event came
   * (`eventN.side` = `woken` or `none`). The completion that woke it stays for the next wait.
   */
  | { readonly do: 'cq-event'; readonly side: Side }
  /**
   * Binds the scenario's memory window (IBTA 1.5 §10.6.7; allocated with ibv_alloc_mw at
   * the first bind) over the responder MR (`range`) with REMOTE_READ | REMOTE_WRITE, on the
   * side's QP: type 1 with ibv_bind_mw, type 2 with an IBV_WR_BIND_MW work request
   * (through the scenario's post API on the requester; §10.6.7.2.1: a type 2 window is
   * then associated with that QP). The step polls the bind's own completion
   * (`bindN.status`); completions the side had pending stay for the next wait.
   */
  | {
      readonly do: 'bind-mw';
      readonly type: 1 | 2;
      readonly side: Side;
      /** The window: `length` bytes from MR offset `at`; default the whole MR. */
      readonly range?: { readonly at: number; readonly length: number };
    }
  /**
   * IBV_WR_LOCAL_INV of the window's rkey, posted on the side's QP (IBTA 1.5
   * §10.6.7.2.4 invalidation of a type 2 window; o10-37.2.26: a type 1 window cannot be
   * invalidated, so the scenario check refuses it). The step polls its own completion
   * (`invN.status`).
   */
  | { readonly do: 'local-invalidate'; readonly side: Side }
  /**
   * ibv_modify_srq(IBV_SRQ_LIMIT) on the scenario's SRQ: arms the limit event (IBTA 1.5
   * §10.2.9.2 SRQ limit; §11.6.3.3 the affiliated asynchronous event SRQ Limit Reached):
   * once a receive is taken and fewer than `limit` remain, the device raises
   * IBV_EVENT_SRQ_LIMIT_REACHED once and disarms the limit. `srqLimitN` = the call's result.
   */
  | { readonly do: 'srq-limit'; readonly limit: number }
  /**
   * Waits at most `timeoutMs` for the SRQ's IBV_EVENT_SRQ_LIMIT_REACHED (ibv_get_async_event),
   * then reads the limit back (ibv_query_srq): `srqEventN` = `limit-reached` or `none`,
   * `srqEventN.limit` the srq_limit read.
   */
  | { readonly do: 'srq-event'; readonly timeoutMs: number }
  /**
   * ibv_rereg_mr(IBV_REREG_MR_CHANGE_ACCESS) of the responder's MR to `access` (IBTA 1.5
   * §11.2.8.3 Reregister Memory Region; ibv_rereg_mr(3)); `reregN` = the call's result
   * (`ok` or the errno's name). The MR keeps its rkey only where the verb says so: the
   * programs reregister to the access the MR already has.
   */
  | { readonly do: 'rereg-mr'; readonly access: readonly Access[] }
  /**
   * ibv_attach_mcast (IBTA 1.5 §11.3): the responder's QP (in a `ud` scenario the
   * receiving QP `qp`, default `first`; otherwise the responder's RC QP) joins `group`.
   * `attachN` = the call's result (`ok` or the errno's name).
   */
  | { readonly do: 'attach-mcast'; readonly group: McastTarget; readonly qp?: RequesterQp }
  /** ibv_detach_mcast (IBTA 1.5 §11.3), as `attach-mcast`: `detachN` = the call's result. */
  | { readonly do: 'detach-mcast'; readonly group: McastTarget; readonly qp?: RequesterQp }
  /**
   * Concurrency: `qps` further requester QPs (each connected to its own responder QP in
   * the same PD) each post `count` FetchAdd(`add`) to the target word, all at once, and
   * wait for every completion. `across: 'processes'` puts each requester QP in a process
   * of its own (its own context and PD), connected to a responder QP of the suite's
   * process. Observed: the posts' return, how many succeeded, how many fetched values are
   * distinct (across every QP and process), and the word afterwards.
   */
  | {
      readonly do: 'hammer';
      readonly qps: number;
      readonly count: number;
      readonly add: bigint;
      readonly across?: 'qps' | 'processes';
    };

export interface Scenario {
  /** Stable identifier, used to record known provider behaviour. */
  readonly id: string;
  /** The program's name, the same on every device and post API (a report matrix row). */
  readonly name: string;
  readonly title: string;
  /** The family (docs/interop.md): `basic`, `atomics`, `atomic-errors`, `immediate`, ... */
  readonly family: string;
  /** The reference target it is written for (its transport, bring-up and id prefix). */
  readonly device: DeviceName;
  /** The device it runs on when not its reference target (run --device, issue 37). */
  readonly on?: DeviceBinding;
  /** `legacy` = ibv_post_send, `ex` = the ibv_wr_* extended-QP API. */
  readonly postPath: 'legacy' | 'ex';
  /** How the pair is brought up; default the device's (DEVICES). */
  readonly connect?: Connection;
  /** The target word's value before the program (the other words get fixed patterns). */
  readonly initial: bigint;
  /** MR offset the initial value is written at (the default target unless misaligned). */
  readonly initialAt?: number;
  /** Access rights of the responder's memory region. */
  readonly remoteAccess: readonly Access[];
  /** Remote access the responder QP grants at bring-up (rxe; default all three). */
  readonly responderQpAccess?: readonly Access[];
  /** Outstanding reads/atomics the requester may issue (initiator depth); default 4. */
  readonly initiatorDepth?: number;
  /** The requester's rnr_retry (7 = infinite); default 7. */
  readonly rnrRetry?: number;
  /** The responder's min_rnr_timer, an IBTA Table 45 code (rnr-timing.ts); default 12. */
  readonly minRnrTimer?: number;
  /** The requester's transport timeout exponent (4.096 us x 2^timeout); default 14. */
  readonly timeout?: number;
  /**
   * What the responder implements of RFC 7306 (iWARP; default both): a stock siw peer of
   * a patched requester in a mixed link pair has neither (link/sides.ts), and the engine's
   * responder then answers such a message with the Terminate of RFC 7306 §1.1.
   */
  readonly responderExtensions?: { readonly atomics: boolean; readonly immediateData: boolean };
  /**
   * The responder QP receives through a shared receive queue (IBTA 1.5 §10.2.9), and so
   * does a second responder QP, connected to a second requester QP, when the program
   * posts on `qp: 'second'`. Every responder completion then names its QP (`.qp`).
   */
  readonly srq?: boolean;
  /**
   * UD multicast (issue 34): the requester is a UD QP sending to multicast groups through
   * an address handle per group, the responder two UD QPs (`first`, `second`), each with
   * a CQ of its own, that receive what the groups they attached to get (IBTA 1.5 §10.5,
   * §11.3). Receives take the 40-byte GRH into a scratch buffer and the payload into the
   * responder's MR: the first QP's at offset 0, the second's at 16 (UD_RECEIVE_AT).
   */
  readonly ud?: boolean;
  readonly program: readonly Step[];
  /**
   * Capture the connection and compare the messages on the wire too. Only siw traffic is
   * visible (kernel TCP on lo); rxe delivers between its own QPs without touching a netdev.
   */
  readonly captureWire: boolean;
}

/** The QP attributes a scenario may set at a by-hand bring-up (absent: the defaults). */
export type QpAttributes = Pick<
  Scenario,
  'initiatorDepth' | 'rnrRetry' | 'minRnrTimer' | 'timeout'
>;

/** The QP attributes `from` sets, and only those (an absent one stays absent). */
export function qpAttributesOf(from: QpAttributes): QpAttributes {
  return {
    ...(from.initiatorDepth === undefined ? {} : { initiatorDepth: from.initiatorDepth }),
    ...(from.rnrRetry === undefined ? {} : { rnrRetry: from.rnrRetry }),
    ...(from.minRnrTimer === undefined ? {} : { minRnrTimer: from.minRnrTimer }),
    ...(from.timeout === undefined ? {} : { timeout: from.timeout }),
  };
}

/**
 * What a scenario produced, in the terms a verbs program sees: one formatted value per
 * observed field (`post1`, `requester.wc1.status`, `responder.wc1.imm`, `q1.responder.state`,
 * `mem[8]`, `wire`, ...). Fields are compared by name between the engine and the device.
 */
export interface Outcome {
  readonly fields: Readonly<Record<string, string>>;
  /** Explanation shown with the outcome; not compared. */
  readonly note?: string;
  /** The capture (pcap file bytes) of a captured scenario; not compared. */
  readonly pcap?: Uint8Array;
}

/** The value a field reads when it was not observed (no completion, refused post). */
export const ABSENT = '—';

/**
 * Bytes of the receive a write-with-immediate consumes, as a program for the transport
 * posts it: none on RoCE (the immediate rides in the ImmDt header; the receive's SGEs are
 * not used), 8 on iWARP (RFC 7306 §6.3: the Immediate Data Message places its 8 bytes in
 * the untagged buffer).
 */
export function writeImmediateReceiveLength(device: DeviceName): 0 | 8 {
  return DEVICES[device].transport === 'roce' ? 0 : 8;
}

/**
 * Where a receive for `use` sits in the responder's MR and how long it is: a Send's over
 * the target word, a write-with-immediate's at IMMEDIATE_RECEIVE_OFFSET.
 */
export function receiveSgeOf(
  device: DeviceName,
  use: ReceiveUse,
): { readonly at: number; readonly length: number } {
  return use === 'write-imm'
    ? { at: IMMEDIATE_RECEIVE_OFFSET, length: writeImmediateReceiveLength(device) }
    : { at: DEFAULT_TARGET, length: 8 };
}

/** Where each receiving QP's payload lands in the responder's MR (a `ud` scenario). */
export const UD_RECEIVE_AT: Readonly<Record<RequesterQp, number>> = { first: 0, second: 16 };
/** Bytes of payload a UD receive takes (the GRH aside): a 16-byte Send fits. */
export const UD_RECEIVE_LENGTH = 16;

/** The MR offsets whose words are observed after the program (guards included). */
export function watchedOffsets(scenario: Scenario): number[] {
  const offsets = new Set<number>([-GUARD, 0, 8, 16, 24, MR_LENGTH]);
  for (const step of scenario.program)
    if (step.do === 'post-send' && step.side !== 'responder')
      for (const wr of step.wrs) offsets.add(wr.target ?? DEFAULT_TARGET);
  if (scenario.initialAt !== undefined) offsets.add(scenario.initialAt);
  return [...offsets].sort((a, b) => a - b);
}

/**
 * The responder buffer's contents before the program: each aligned word a distinct
 * non-palindromic pattern, then the scenario's initial value at its offset. Index 0 of
 * the result is the guard word before the MR.
 */
export function initialBuffer(scenario: Scenario): Uint8Array {
  const bytes = new Uint8Array(GUARD + MR_LENGTH + GUARD);
  const view = new DataView(bytes.buffer);
  for (let at = 0; at < bytes.length; at += 8)
    view.setBigUint64(at, 0x5a00_0000_0000_00a5n + (BigInt(at) << 40n) + BigInt(at), true);
  view.setBigUint64(GUARD + (scenario.initialAt ?? DEFAULT_TARGET), scenario.initial, true);
  return bytes;
}

/** Reads the 64-bit little-endian word at MR offset `offset` of a responder buffer. */
export function wordAt(buffer: Uint8Array, offset: number): bigint {
  return new DataView(buffer.buffer, buffer.byteOffset, buffer.byteLength).getBigUint64(
    GUARD + offset,
    true,
  );
}

/** Bytes of the requester's buffer each work request owns (its payload or fetched value). */
export const LOCAL_SLOT = 16;

/**
 * The bytes a Write or Send of `op` carries: `payload` little-endian, then (16 bytes) its
 * complement, so both words differ and neither is a palindrome.
 */
export function payloadBytes(op: Operation): Uint8Array {
  const bytes = new Uint8Array(16);
  const view = new DataView(bytes.buffer);
  const first = op.payload ?? 0n;
  view.setBigUint64(0, first, true);
  view.setBigUint64(8, first ^ 0xffff_ffff_ffff_ffffn, true);
  return bytes.subarray(0, op.length ?? 8);
}

/** All the work requests of the program, in post order (their index names them: wr1, ...). */
export function workRequestsOf(scenario: Scenario): Operation[] {
  return scenario.program.flatMap((s) =>
    s.do === 'post-send' && s.side !== 'responder' ? s.wrs : [],
  );
}

/** The wr_id of the n-th (0-based) request posted on the responder. */
export function responderWrIdOf(index: number): bigint {
  return 0x5800n + BigInt(index + 1);
}

/** The wr_id the n-th work request (0-based) carries on both sides. */
export function wrIdOf(index: number): bigint {
  return 0x5700n + BigInt(index + 1);
}

/** The wr_id of the n-th (0-based) memory-window request (a bind or a local invalidate). */
export function windowWrIdOf(index: number): bigint {
  return 0x5600n + BigInt(index + 1);
}

/** The memory window's type a scenario binds (its first `bind-mw` step), or undefined. */
export function windowTypeOf(scenario: Pick<Scenario, 'program'>): 1 | 2 | undefined {
  for (const step of scenario.program) if (step.do === 'bind-mw') return step.type;
  return undefined;
}

/** The wr_id the n-th receive (0-based) carries on both sides. */
export function recvIdOf(index: number): bigint {
  return 0x5200n + BigInt(index + 1);
}

/** Names a wr_id as the reports do: `wr1`, `recv1`, or hex when unknown. */
export function wrName(wrId: bigint): string {
  if (wrId > 0x5700n && wrId < 0x5800n) return `wr${wrId - 0x5700n}`;
  if (wrId > 0x5800n && wrId < 0x5900n) return `rwr${wrId - 0x5800n}`;
  if (wrId > 0x5200n && wrId < 0x5300n) return `recv${wrId - 0x5200n}`;
  if (wrId > 0x5600n && wrId < 0x5700n) return `mw${wrId - 0x5600n}`;
  return `0x${wrId.toString(16)}`;
}
