/**
 * UD multicast (issue 34) on the host: the engine's model (src/engine/ud/multicast.ts),
 * what it predicts for the `multicast` family, the scenario check of UD programs, the
 * needs the runner selects by, and siw's records judging a refused UD bring-up.
 */
import { describe, expect, it } from 'vitest';
import {
  GRH_BYTES,
  isMulticastGid,
  MulticastFabric,
  membershipCheck,
} from '../../../src/engine/ud/multicast.js';
import { ArgumentError } from '../../../src/errors.js';
import { requireScenario } from '../../../src/interop/arguments.js';
import { expectedOutcome } from '../../../src/interop/expected.js';
import { requirementsOf } from '../../../src/interop/requirements.js';
import { judge } from '../../../src/interop/runner.js';
import {
  initialBuffer,
  mcastGidOf,
  type Scenario,
  watchedOffsets,
  wordAt,
} from '../../../src/interop/scenario.js';
import { SCENARIOS } from '../../../src/interop/scenarios.js';

const byId = (id: string): Scenario => {
  const s = SCENARIOS.find((x) => x.id === id);
  if (s === undefined) throw new Error(`no scenario ${id}`);
  return s;
};
const g1 = mcastGidOf(byId('rxe-mcast-send'), 'g1');
const g2 = mcastGidOf(byId('rxe-mcast-send'), 'g2');
const unicast = mcastGidOf(byId('rxe-mcast-send'), 'unicast');

describe('the engine model of UD multicast', () => {
  it('knows a multicast GID: IB 0xFF.., IPv4-mapped 224/4; not a unicast or short one', () => {
    expect(isMulticastGid(g1)).toBe(true);
    expect(isMulticastGid(Uint8Array.of(0xff, 0x12, ...new Uint8Array(14)))).toBe(true);
    expect(isMulticastGid(unicast)).toBe(false);
    expect(isMulticastGid(g1.subarray(0, 15))).toBe(false);
    // 240.x is not 224/4's: the class E block.
    const e = g1.slice();
    e[12] = 240;
    expect(isMulticastGid(e)).toBe(false);
  });

  it('refuses an RC QP and a unicast GID with EINVAL, attaching nothing', () => {
    expect(membershipCheck('RC', g1)).toBe('EINVAL');
    expect(membershipCheck('UD', unicast)).toBe('EINVAL');
    const fabric = new MulticastFabric(new Uint8Array(64));
    fabric.createQp('a', 'UD');
    expect(fabric.attach('a', unicast)).toBe('EINVAL');
    expect(fabric.detach('a', g1)).toBe('EINVAL');
    fabric.postRecv('a', { wrId: 1n, sgList: [{ into: 'memory', at: 0, length: 64 }] });
    fabric.sendToGroup(0x11, unicast, Uint8Array.of(1, 2, 3));
    expect(fabric.poll('a')).toBeUndefined();
  });

  it('delivers to every member with a receive, GRH first, and no longer after a detach', () => {
    const memory = new Uint8Array(64);
    const fabric = new MulticastFabric(memory);
    for (const q of ['a', 'b', 'c']) fabric.createQp(q, 'UD');
    expect([fabric.attach('a', g1), fabric.attach('b', g1), fabric.attach('c', g2)]).toEqual([
      'ok',
      'ok',
      'ok',
    ]);
    fabric.postRecv('a', {
      wrId: 0x5201n,
      sgList: [
        { into: 'grh', at: 0, length: GRH_BYTES },
        { into: 'memory', at: 8, length: 16 },
      ],
    });
    // b has no receive: UD drops its copy silently.
    fabric.sendToGroup(0x2a, g1, Uint8Array.of(0xa1, 0xb2, 0xc3), 0x01020304);
    expect(fabric.poll('a')).toEqual({
      wrId: 0x5201n,
      status: 'SUCCESS',
      opcode: 'RECV',
      byteLen: GRH_BYTES + 3,
      flags: ['GRH', 'WITH_IMM'],
      srcQp: 0x2a,
      imm: 0x01020304,
    });
    expect([...memory.subarray(8, 11)]).toEqual([0xa1, 0xb2, 0xc3]);
    expect(fabric.poll('b')).toBeUndefined();
    expect(fabric.poll('c')).toBeUndefined();
    expect(fabric.detach('a', g1)).toBe('ok');
    fabric.postRecv('a', { wrId: 0x5202n, sgList: [{ into: 'memory', at: 0, length: 64 }] });
    fabric.sendToGroup(0x2a, g1, Uint8Array.of(9));
    expect(fabric.poll('a')).toBeUndefined();
  });

  it('completes a receive too short for the GRH and the payload with LOC_LEN_ERR', () => {
    const fabric = new MulticastFabric(new Uint8Array(64));
    fabric.createQp('a', 'UD');
    fabric.attach('a', g1);
    fabric.postRecv('a', { wrId: 7n, sgList: [{ into: 'memory', at: 0, length: 40 }] });
    fabric.sendToGroup(1, g1, Uint8Array.of(1));
    expect(fabric.poll('a')?.status).toBe('LOC_LEN_ERR');
  });
});

describe('what the engine predicts for the multicast family', () => {
  it('a Send to g1 reaches both attached QPs: RECV, 40 + 8 bytes, GRH, from the requester', () => {
    const { fields } = expectedOutcome(byId('rxe-mcast-send'));
    for (const wc of ['responder.wc1', 'responder.wc2'])
      expect(fields).toMatchObject({
        [`${wc}.status`]: 'SUCCESS',
        [`${wc}.opcode`]: 'RECV',
        [`${wc}.byte_len`]: '48',
        [`${wc}.flags`]: 'GRH',
        [`${wc}.src_qp`]: 'requester',
      });
    expect(fields).toMatchObject({
      attach1: 'ok',
      attach2: 'ok',
      'requester.wc1.opcode': 'SEND',
      'mem[0]': '0x8877665544332211',
      'mem[16]': '0x8877665544332211',
    });
  });

  it('a Send with Immediate carries imm_data and WITH_IMM', () => {
    expect(expectedOutcome(byId('rxe-mcast-send-imm')).fields).toMatchObject({
      'responder.wc1.flags': 'GRH|WITH_IMM',
      'responder.wc1.imm': '0x12345678',
      'responder.wc1.imm_raw': '0x78563412',
    });
  });

  it("after the detach the second QP's first completion is the fence's, not g1's Send", () => {
    expect(expectedOutcome(byId('rxe-mcast-detach')).fields).toMatchObject({
      detach1: 'ok',
      'responder.wc1.byte_len': '48',
      'responder.wc2.byte_len': '56',
      'mem[16]': '0x0fedcba987654321',
      'mem[24]': '0xf0123456789abcde',
    });
  });

  it('the attach errors: a unicast GID and an RC QP get EINVAL, and the QP works on', () => {
    expect(expectedOutcome(byId('rxe-mcast-attach-unicast')).fields).toMatchObject({
      attach1: 'EINVAL',
      attach2: 'ok',
      'responder.wc1.status': 'SUCCESS',
    });
    expect(expectedOutcome(byId('rxe-mcast-attach-rc')).fields).toMatchObject({
      attach1: 'EINVAL',
      'responder.wc1.opcode': 'RECV',
      'q2.responder.state': 'RTS',
    });
  });
});

describe('UD programs: the scenario check and the needs', () => {
  const ud = byId('rxe-mcast-send');
  it.each([
    ['an RDMA Write', [{ do: 'post-send', wrs: [{ kind: 'RDMA_WRITE' }] }]],
    ['a post on the responder', [{ do: 'post-send', side: 'responder', wrs: [{ kind: 'SEND' }] }]],
    ['a window', [{ do: 'bind-mw', type: 1, side: 'responder' }]],
    ['an unknown group', [{ do: 'attach-mcast', group: 'g3' }]],
    ['a Send to an unknown group', [{ do: 'post-send', wrs: [{ kind: 'SEND', group: 'x' }] }]],
  ])('a ud program with %s is an ArgumentError', (_name, program) => {
    expect(() => requireScenario({ ...ud, program })).toThrow(ArgumentError);
  });

  it('an RC program with a second receiving QP or a group Send is an ArgumentError', () => {
    const rc = byId('rxe-mcast-attach-rc');
    for (const program of [
      [{ do: 'post-recv', for: 'send', qp: 'second' }],
      [{ do: 'post-send', wrs: [{ kind: 'SEND', group: 'g1' }] }],
    ])
      expect(() => requireScenario({ ...rc, program })).toThrow(ArgumentError);
  });

  it('a UD program needs UD QPs on either transport; siw0 runs them through its records', () => {
    expect(requirementsOf(ud).capabilities).toContain('ud');
    expect(requirementsOf(byId('rxe-mcast-attach-rc')).capabilities).not.toContain('ud');
    // iWARP has no datagram service; no RFC 7306 immediate is asked of a UD program.
    expect(requirementsOf(byId('siw-mcast-send-imm')).capabilities).toEqual(['ud']);
  });
});

describe("siw's records judge its refusals", () => {
  const env = { provider: 'siw', kernel: '6.1.192', rdmaCore: '44.0' };
  it('a UD bring-up refused by siw_create_qp: known, every difference explained', () => {
    const scenario = byId('siw-mcast-detach');
    const memory = initialBuffer(scenario);
    const fields: Record<string, string> = { bringup: 'EOPNOTSUPP ibv_create_qp' };
    for (const at of watchedOffsets(scenario))
      fields[`mem[${at}]`] = `0x${wordAt(memory, at).toString(16).padStart(16, '0')}`;
    const result = judge(scenario, expectedOutcome(scenario), { fields }, env);
    expect(result.verdict).toBe('known');
    expect(result.differences.filter((d) => d.explainedBy === undefined)).toEqual([]);
    expect(result.findings.map((k) => k.id)).toEqual(['siw-rc-qps-only']);
  });

  it("an RC QP's attach refused by libsiw: EOPNOTSUPP, known", () => {
    const scenario = byId('siw-mcast-attach-rc');
    const engine = expectedOutcome(scenario);
    const kernel = { fields: { ...engine.fields, attach1: 'EOPNOTSUPP' } };
    // 6.12: siw reports the QP states the engine does (6.1's are siw-query-qp-state's).
    const result = judge(scenario, engine, kernel, { ...env, kernel: '6.12.95' });
    expect(result.verdict).toBe('known');
    expect(result.findings.map((k) => k.id)).toEqual(['libsiw-no-attach-mcast']);
  });
});
