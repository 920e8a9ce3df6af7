/**
 * An interop scenario: one work request against one remote buffer on one device, described
 * as data so that the same description runs through the reference engine and through a
 * real kernel device, and the two outcomes can be compared field by field.
 */
import type { Access } from '../verbs/mr.js';

/** The soft devices the runtime creates (scripts/rdma-devices.sh). */
export type DeviceName = 'rxe0' | 'siw0';

/** How a device's QPs are connected and which transport it speaks. */
export const DEVICES = {
  rxe0: { transport: 'roce', connect: 'by-hand' },
  siw0: { transport: 'iwarp', connect: 'rdma-cm' },
} as const satisfies Record<DeviceName, { transport: 'roce' | 'iwarp'; connect: string }>;

export type Transport = (typeof DEVICES)[DeviceName]['transport'];

/** The operation a scenario posts on the requester. */
export type ScenarioOperation =
  | { readonly kind: 'FETCH_AND_ADD'; readonly add: bigint }
  | { readonly kind: 'CMP_AND_SWP'; readonly compare: bigint; readonly swap: bigint }
  | { readonly kind: 'RDMA_WRITE_WITH_IMM'; readonly payload: bigint; readonly imm: number }
  | { readonly kind: 'SEND_WITH_IMM'; readonly payload: bigint; readonly imm: number }
  | { readonly kind: 'RDMA_WRITE'; readonly payload: bigint }
  | { readonly kind: 'SEND'; readonly payload: bigint }
  | { readonly kind: 'RDMA_READ' };

export interface Scenario {
  /** Stable identifier, used to record known provider behaviour. */
  readonly id: string;
  readonly title: string;
  readonly device: DeviceName;
  /** `legacy` = ibv_post_send, `ex` = the ibv_wr_* extended-QP API. */
  readonly postPath: 'legacy' | 'ex';
  readonly operation: ScenarioOperation;
  /** The responder's 64-bit word before the operation (host byte order in memory). */
  readonly initial: bigint;
  /** Byte offset of the target inside the responder's buffer (8 = aligned, 12 = not). */
  readonly remoteOffset: number;
  /** Access rights of the responder's memory region. */
  readonly remoteAccess: readonly Access[];
  /**
   * Capture the connection and compare the messages on the wire too. Only siw traffic is
   * visible (kernel TCP on lo); rxe delivers between its own QPs without touching a netdev.
   */
  readonly captureWire: boolean;
}

/**
 * What a scenario produced, in the terms a verbs user sees. Everything here is compared
 * field by field between the engine and the kernel.
 */
export interface Outcome {
  /**
   * `ok`; the errno name ibv_post_send returned (the request never reached the wire); or
   * `not-expressible` when the transport's protocol has no message for the operation.
   */
  readonly post: string;
  /** The requester's completion status (`IBV_WC_*`), absent when the post failed. */
  readonly requesterStatus?: string;
  readonly requesterOpcode?: string;
  readonly requesterByteLen?: number;
  /** Atomics and RDMA Read: the value that landed in the requester's buffer. */
  readonly fetched?: bigint;
  /** The responder's completion (receives, write-with-immediate). */
  readonly responderStatus?: string;
  readonly responderOpcode?: string;
  readonly responderByteLen?: number;
  /** The immediate data as the responder's program reads it (ntohl). */
  readonly responderImm?: number;
  /** The responder's 64-bit word afterwards. */
  readonly memoryAfter: bigint;
  /** The requester QP's state after the operation completed. */
  readonly requesterQpState: string;
  /** With `captureWire`: the iWARP messages, one line each (wire.ts), joined by newlines. */
  readonly wire?: string;
  /** Explanation shown with the outcome; not compared. */
  readonly note?: string;
}

/**
 * Bytes of the receive a write-with-immediate consumes, as a program for the transport
 * posts it: none on RoCE (the immediate rides in the ImmDt header; the receive's SGEs are
 * not used), 8 on iWARP (RFC 7306 §6.3: the Immediate Data Message places its 8 bytes in
 * the untagged buffer).
 */
export function writeImmediateReceiveLength(scenario: Scenario): 0 | 8 {
  return DEVICES[scenario.device].transport === 'roce' ? 0 : 8;
}
