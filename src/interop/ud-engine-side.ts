/**
 * The reference side of a `ud` scenario (UD multicast, issue 34): the engine's multicast
 * fabric (engine/ud/multicast.ts) brought up as kernel/ud-pair.ts brings up the device's
 * QPs: a UD requester that sends to groups, two UD receiving QPs (`first`, `second`),
 * each receive a GRH scratch area and then 16 bytes of the responder's MR. It reports the
 * same observation fields the device side does.
 */
import { immediateValue } from '../engine/projection/work-completion.js';
import {
  GRH_BYTES,
  MulticastFabric,
  membershipCheck,
  type UdCompletion,
} from '../engine/ud/multicast.js';
import { observedCompletion } from './observe.js';
import { traitsOf } from './operations.js';
import type { ImmediateSide, McastStepOf } from './program.js';
import {
  GUARD,
  initialBuffer,
  mcastGidOf,
  payloadBytes,
  type RequesterQp,
  recvIdOf,
  type Scenario,
  UD_RECEIVE_AT,
  UD_RECEIVE_LENGTH,
  wrIdOf,
} from './scenario.js';

/** The engine's requester QPN (any value does: the fields name it `requester`). */
const REQUESTER_QPN = 0x11;

/** How a UD receive completion's sender is named (observe.ts `srcQp`). */
export function srcQpName(srcQp: number, requesterQpn: number): string {
  return srcQp === requesterQpn ? 'requester' : `0x${srcQp.toString(16)}`;
}

/**
 * The engine as the side of a `ud` program. Steps a UD program has no use for (RDMA,
 * windows, SRQ, rereg, hammer) are refused by requireScenario before it runs, and throw
 * here.
 */
export function udEngineSide(scenario: Scenario): ImmediateSide {
  const memory = initialBuffer(scenario);
  const fabric = new MulticastFabric(memory);
  fabric.createQp('first', 'UD');
  fabric.createQp('second', 'UD');
  const sent: UdCompletion[] = [];
  const unsupported = (what: string) => (): never => {
    throw new RangeError(`${what}: not a step of a UD program (${scenario.id})`);
  };
  const toPolled = (wc: UdCompletion, requester: boolean) => ({
    completion: observedCompletion(
      {
        wrId: wc.wrId,
        status: wc.status,
        opcode: requester ? 'SEND' : wc.opcode,
        byteLen: wc.byteLen,
        flags: requester ? [] : wc.flags,
      },
      {
        imm: requester || wc.imm === undefined ? undefined : wc.imm,
        immRaw: requester || wc.imm === undefined ? undefined : immediateValue(wc.imm).network,
        vendorErr: 0,
        ...(requester ? {} : { srcQp: srcQpName(wc.srcQp, REQUESTER_QPN) }),
      },
    ),
    fetched: () => undefined,
  });
  return {
    postSend: (side, wrs, first) => {
      if (side === 'responder') throw new RangeError('a UD program posts on the requester only');
      wrs.forEach((op, i) => {
        const imm = traitsOf(op.kind).operands.includes('immData') ? op.immData : undefined;
        fabric.sendToGroup(
          REQUESTER_QPN,
          mcastGidOf(scenario, op.group ?? 'g1'),
          payloadBytes(op),
          imm,
        );
        // UD is unacknowledged: the Send completes once sent, delivered or not (§9.8).
        sent.push({
          wrId: wrIdOf(first + i),
          status: 'SUCCESS',
          opcode: undefined,
          byteLen: 0,
          flags: [],
          srcQp: 0,
          imm: undefined,
        });
      });
      return { result: 'ok' };
    },
    postRecv: (index, _use, qp) => {
      fabric.postRecv(qp, {
        wrId: recvIdOf(index),
        sgList: [
          { into: 'grh', at: 0, length: GRH_BYTES },
          { into: 'memory', at: GUARD + UD_RECEIVE_AT[qp], length: UD_RECEIVE_LENGTH },
        ],
      });
    },
    nextCompletion: (side, _timeoutMs, qp) => {
      const wc = side === 'requester' ? sent.shift() : fabric.poll(qp);
      return wc === undefined ? undefined : toPolled(wc, side === 'requester');
    },
    mcast: (step: McastStepOf) => {
      const gid = mcastGidOf(scenario, step.group);
      const qp: RequesterQp = step.qp ?? 'first';
      return step.do === 'attach-mcast' ? fabric.attach(qp, gid) : fabric.detach(qp, gid);
    },
    timerOf: () => ({ timer: 'not-measured' }),
    // A UD QP stays in RTS: the programs query none.
    queryState: () => 'RTS',
    modify: unsupported('modify'),
    sleep: () => {},
    armSolicited: unsupported('arm-solicited'),
    cqEvent: unsupported('cq-event'),
    hammer: unsupported('hammer'),
    bindMw: unsupported('bind-mw'),
    localInvalidate: unsupported('local-invalidate'),
    srqLimit: unsupported('srq-limit'),
    srqEvent: unsupported('srq-event'),
    reregMr: unsupported('rereg-mr'),
    memory: () => memory,
    wire: () => undefined,
  };
}

/**
 * The engine's answer to an attach or detach of an RC QP (a program without `ud`):
 * IBTA 1.5 §11.3 admits UD QPs only (EINVAL).
 */
export function rcMembership(scenario: Scenario, step: McastStepOf): string {
  return membershipCheck('RC', mcastGidOf(scenario, step.group));
}
