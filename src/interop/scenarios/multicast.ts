/**
 * UD multicast (issue 34): UD Sends to multicast groups, attach and detach (IBTA 1.5
 * §10.5, §11.3), and the attaches the verbs refuse. The engine's model is
 * src/engine/ud/multicast.ts; the device's bring-up src/interop/kernel/ud-pair.ts.
 */
import type { Step } from '../scenario.js';
import { IMM, PAYLOAD, type Row, SWAP, single, type Target } from './family.js';

/**
 * rxe through ibv_post_send (the wrapper sends UD on the legacy path only), and siw, which
 * has no UD QP and no attach_mcast: its outcomes are records
 * (src/judge/records/multicast.ts).
 */
export const MULTICAST_TARGETS: readonly Target[] = [
  { device: 'rxe0', postPath: 'legacy' },
  { device: 'siw0', postPath: 'legacy' },
];

/** A UD Send (or Send with Immediate) to `group` and the requester's completion of it. */
function sendTo(
  group: 'g1' | 'g2',
  payload: bigint,
  extra: { imm?: true; length?: 16 } = {},
): Step[] {
  return [
    {
      do: 'post-send',
      wrs: [
        extra.imm === true
          ? { kind: 'SEND_WITH_IMM', payload, immData: IMM, group }
          : { kind: 'SEND', payload, group, ...(extra.length === undefined ? {} : { length: 16 }) },
      ],
    },
    { do: 'wait', side: 'requester', count: 1 },
  ];
}

/**
 * Programs of the UD pair: every wait is for a completion that comes when the device
 * does what the engine says, so a passing run never spends a timeout (no wall-clock
 * judgement in a TCG guest). "No longer arrives" is shown by a fence instead of a timed
 * wait: see `mcast-detach`.
 */
export const MULTICAST: readonly Row[] = [
  {
    // §10.5: one Send to a group reaches every attached QP, each taking a receive of its
    // own: RECV, byte_len = 40 (the GRH) + 8, the GRH flag, src_qp the sender's QPN; the
    // payload lands after the GRH (the first QP's at MR offset 0, the second's at 16).
    suffix: 'mcast-send',
    title: 'UD Send to a multicast group: each of the two attached QPs receives it',
    ud: true,
    capture: false,
    program: [
      { do: 'attach-mcast', group: 'g1' },
      { do: 'attach-mcast', group: 'g1', qp: 'second' },
      { do: 'post-recv', for: 'send' },
      { do: 'post-recv', for: 'send', qp: 'second' },
      ...sendTo('g1', PAYLOAD),
      { do: 'wait', side: 'responder', count: 1 },
      { do: 'wait', side: 'responder', count: 1, qp: 'second' },
    ],
  },
  {
    // §10.5 with Send with Immediate: the receive completion carries imm_data and
    // WITH_IMM beside the GRH flag.
    suffix: 'mcast-send-imm',
    title: 'UD Send with Immediate to a multicast group: imm_data at the attached QP',
    ud: true,
    capture: false,
    program: [
      { do: 'attach-mcast', group: 'g1' },
      { do: 'post-recv', for: 'send' },
      ...sendTo('g1', PAYLOAD, { imm: true }),
      { do: 'wait', side: 'responder', count: 1 },
    ],
  },
  {
    // §11.3 detach: the second QP leaves g1 but stays in g2. A Send to g1 reaches the first
    // QP only. Then a 16-byte Send to g2 is the fence: both datagrams leave the one
    // requester QP in order on the same path (rxe: the IP stack's multicast loopback, then
    // each QP's receive queue in arrival order), so had the second QP still received g1's
    // Send, that copy would be its first completion (byte_len 48, 8 payload bytes); it is
    // the fence's (byte_len 56, the 16 bytes of SWAP and its complement at MR offset 16).
    // Bounded without a clock: every wait is for a completion that comes.
    suffix: 'mcast-detach',
    title:
      'detached from a group, a QP no longer receives its Sends (a Send to its other group fences)',
    ud: true,
    capture: false,
    program: [
      { do: 'attach-mcast', group: 'g1' },
      { do: 'attach-mcast', group: 'g1', qp: 'second' },
      { do: 'attach-mcast', group: 'g2', qp: 'second' },
      { do: 'detach-mcast', group: 'g1', qp: 'second' },
      { do: 'post-recv', for: 'send' },
      { do: 'post-recv', for: 'send', qp: 'second' },
      ...sendTo('g1', PAYLOAD),
      { do: 'wait', side: 'responder', count: 1 },
      ...sendTo('g2', SWAP, { length: 16 }),
      { do: 'wait', side: 'responder', count: 1, qp: 'second' },
    ],
  },
  {
    // §11.3: a GID that is not multicast names no group (EINVAL: ib_attach_mcast,
    // rdma_is_multicast_addr), and nothing is attached: a Send to g1 afterwards, with the
    // first QP attached to g1 only, reaches it as ever.
    suffix: 'mcast-attach-unicast',
    title: 'ibv_attach_mcast of a unicast GID (the device address): EINVAL',
    ud: true,
    capture: false,
    program: [
      { do: 'attach-mcast', group: 'unicast' },
      { do: 'attach-mcast', group: 'g1' },
      { do: 'post-recv', for: 'send' },
      ...sendTo('g1', PAYLOAD),
      { do: 'wait', side: 'responder', count: 1 },
    ],
  },
  {
    // §11.3: only a UD QP joins a group (EINVAL for the responder's RC QP:
    // ib_attach_mcast's qp_type check); the RC QP is unchanged: a Send then completes.
    suffix: 'mcast-attach-rc',
    title: 'ibv_attach_mcast of an RC QP: EINVAL, the QP unchanged',
    program: [{ do: 'attach-mcast', group: 'g1' }, ...single({ kind: 'SEND', payload: PAYLOAD })],
  },
];
