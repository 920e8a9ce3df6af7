/**
 * The two 2026 receive-path fixes the tester did not assert until issue 32: rxe's
 * mr_check_range() overflow (a VA + length that wraps 2^64) and siw's header split across
 * TCP segments. What the engine predicts for their packets; the packets go to rxe and
 * siw in the guest (`rdma-interop probe --assertion 'roce-responder-va-wrap-*'`).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { RoceRcResponder } from '../../../src/engine/roce/rc-responder.js';
import { IWARP_RECORDS } from '../../../src/judge/records/index.js';
import { IWARP_ASSERTIONS } from '../../../src/probe/iwarp-assertions.js';
import { engineIwarpAnswer, judgeIwarp } from '../../../src/probe/iwarp-expect.js';
import { foreignWords } from '../../../src/probe/oracles/foreign-bytes.js';
import { KERNEL_TROUBLE, kernelLogOracleOf } from '../../../src/probe/oracles/kernel-log.js';
import { survivalOracles } from '../../../src/probe/oracles/survival-oracles.js';
import { ROCE_RESPONDER_ASSERTIONS } from '../../../src/probe/roce-responder-assertions.js';

const CONTEXT = { qpn: 0x000123, va: 0x00007f3a_12c45000n, rKey: 0x1a2b3c4d, psn: 0x00a5c3 };
const CONTENTS = Uint8Array.from({ length: 4096 }, (_, i) => (i * 7 + 3) & 0xff);

function responderRun(id: string) {
  const assertion = ROCE_RESPONDER_ASSERTIONS.find((a) => a.id === id);
  if (assertion === undefined) throw new Error(`no assertion ${id}`);
  const model = new RoceRcResponder({
    qpn: CONTEXT.qpn,
    requesterQpn: 0x0c0ffe,
    expectedPsn: CONTEXT.psn,
    mtu: 1024,
    minRnrTimer: 14,
    maxDestRdAtomic: 16,
    region: { virtualAddress: CONTEXT.va, rKey: CONTEXT.rKey, contents: CONTENTS },
    receives: [],
    atomicWrite: true,
    state: 'RTS',
  });
  const packets = assertion.steps(CONTEXT).flat();
  const steps = packets.map((p) => model.receive(p.decoded, p.icrcValid));
  return { assertion, packets, steps, model };
}

describe('rxe: a VA + length that wraps 2^64 (mr_check_range overflow)', () => {
  for (const [kind, va] of [
    ['write', 0xffff_ffff_ffff_fff0n],
    ['read', 0xffff_ffff_ffff_fff0n],
    ['atomic', 0xffff_ffff_ffff_fff8n],
  ] as const) {
    it(`${kind}: the request carries VA 0x${va.toString(16)}; the engine NAKs it, memory as it was`, () => {
      const { assertion, packets, steps, model } = responderRun(`roce-responder-va-wrap-${kind}`);
      expect(assertion.regression?.title).toMatch(/mr_check_range/);
      const ext = packets[0]?.decoded?.headers;
      expect(ext?.RETH?.virtualAddress ?? ext?.AtomicETH?.virtualAddress).toBe(va);
      expect(
        steps.flatMap((s) =>
          s.answers.map((a) => `${a.opcode} ${a.psn} ${JSON.stringify(a.syndrome)}`),
        ),
      ).toEqual([`RC_ACKNOWLEDGE ${CONTEXT.psn} {"kind":"NAK","code":"REMOTE_ACCESS_ERROR"}`]);
      expect(model.memory).toEqual(CONTENTS);
    });
  }
});

describe('siw: a header cut across TCP segments at every offset', () => {
  const assertion = IWARP_ASSERTIONS.find((a) => a.id === 'siw-mpa-header-split');
  const target = { stag: 0x1a2b3c00, address: 0x00007f0012345600n };
  const plain = { crc: false, markers: false };

  it('cuts FPDU k after its byte k, for k = 1..20 (the 20-byte header, then its end)', () => {
    if (assertion?.splits === undefined) throw new Error('no split assertion');
    const stream = assertion.stream(target, plain);
    const splits = assertion.splits(target, plain);
    expect(splits).toHaveLength(20);
    // Each FPDU: 2 (ULPDU Length) + 18 (DDP/RDMAP) + 3 data + 1 pad + 4 CRC = 28 bytes.
    expect(stream).toHaveLength(20 * 28);
    expect(splits.slice(0, 3)).toEqual([1, 28 + 2, 56 + 3]);
    expect(splits.at(-1)).toBe(19 * 28 + 20);
  });

  it('the engine places the 60 bytes in order and completes one receive of 60 bytes', () => {
    if (assertion === undefined) throw new Error('no split assertion');
    const { answer } = engineIwarpAnswer(assertion, target, plain, 'stock');
    expect(answer.wire).toEqual([]);
    expect(answer.receive).toBe('ok bytes=60 imm=- data=5a7fa4c9ee13385d');
    const memory = Buffer.from(answer.memory, 'hex');
    expect([...memory.subarray(0, 60)]).toEqual(
      Array.from({ length: 60 }, (_, i) => (0x5a + 37 * i) & 0xff),
    );
  });
});

describe('siw-mpa-header-split as siw answered it on each line (2026-12-05)', () => {
  const observed = JSON.parse(
    readFileSync(
      new URL('../../fixtures/probe/siw-header-split-observed.json', import.meta.url),
      'utf8',
    ),
  ) as {
    results: {
      kernel: string;
      siwVariant: 'stock' | 'rfc7306';
      observed: { wire: string[]; receive: string; memory: string };
    }[];
  };
  const assertion = IWARP_ASSERTIONS.find((a) => a.id === 'siw-mpa-header-split');
  const target = { stag: 0x1a2b3c00, address: 0x00007f0012345600n };
  const plain = { crc: false, markers: false };

  it('6.1 and 7.3 place it whole (match); 6.12.95 lacks the fix (known, a defect that says so)', () => {
    if (assertion === undefined) throw new Error('no split assertion');
    const verdicts = observed.results.map((r) => {
      const engine = engineIwarpAnswer(assertion, target, plain, r.siwVariant);
      const judged = judgeIwarp(
        assertion,
        r.siwVariant,
        engine.answer,
        engine.terminates,
        r.observed,
        IWARP_RECORDS,
        r.kernel,
      );
      return `${r.kernel.split('.').slice(0, 2).join('.')} ${r.siwVariant} ${judged.verdict} ${judged.known.map((k) => k.id).join(',')}`;
    });
    expect(verdicts).toEqual([
      '6.1 stock match ',
      '6.1 rfc7306 match ',
      '6.12 stock known siw-split-header-takes-payload-byte',
      '6.12 rfc7306 known siw-split-header-takes-payload-byte',
      '7.3 stock match ',
      '7.3 rfc7306 match ',
    ]);
    const record = IWARP_RECORDS.find((k) => k.id === 'siw-split-header-takes-payload-byte');
    expect(record?.class).toBe('defect');
    expect(record?.lacksFix).toBe(true);
  });
});

describe('the kernel-log oracles name what fired', () => {
  it('each detector line gets its own oracle; a healthy line none', () => {
    expect(
      [
        'BUG: KFENCE: out-of-bounds read in siw_get_hdr+0x1c4/0x3a0 [siw]',
        'UBSAN: array-index-out-of-bounds in drivers/infiniband/sw/rxe/rxe_opcode.c:12:3',
        'watchdog: BUG: soft lockup - CPU#0 stuck for 26s! [kworker/0:1:31]',
        'rcu: INFO: rcu_preempt detected stalls on CPUs/tasks:',
        'INFO: task kworker/u4:2:57 blocked for more than 120 seconds.',
        'refcount_t: underflow; use-after-free.',
        'WARNING: CPU: 0 PID: 31 at lib/refcount.c:28 refcount_warn_saturate+0x97/0x110',
        'Oops: general protection fault, probably for non-canonical address 0xdead000000000122',
        'rdma_rxe: loaded',
      ].map((l) => kernelLogOracleOf(l) ?? '-'),
    ).toEqual([
      'kfence',
      'ubsan',
      'soft-lockup',
      'rcu-stall',
      'hung-task',
      'refcount',
      'warning',
      'general-protection',
      '-',
    ]);
    expect(KERNEL_TROUBLE.test('UBSAN: shift-out-of-bounds in x')).toBe(true);
    expect(KERNEL_TROUBLE.test('siw: device registered')).toBe(false);
  });

  it('a survival failure names its oracles in table order', () => {
    expect(
      survivalOracles({
        dmesg: ['WARNING: CPU: 1 PID: 9 at x', 'BUG: KFENCE: use-after-free read in y'],
        deviceWorks: false,
        guestUp: true,
      }),
    ).toEqual(['kernel-log/kfence', 'kernel-log/warning', 'device-works']);
    expect(survivalOracles({ dmesg: [], deviceWorks: true, guestUp: true })).toEqual([]);
  });
});

describe('the kernel-memory oracle', () => {
  it('names 8-byte words the device carried that the engine never had; zeros and test data are not', () => {
    const expected = {
      answers: [{ payload: '1122334455667788a1b2c3d4e5f60718' }],
      memory: '00'.repeat(16),
    };
    expect(
      foreignWords(expected, {
        answers: [{ payload: '1122334455667788a1b2c3d4e5f60718' }],
        memory: `${'00'.repeat(8)}ffff8881234a5c00`,
      }),
    ).toEqual(['ffff8881234a5c00']);
    expect(foreignWords(expected, { memory: `a1b2c3d4e5f60718${'00'.repeat(8)}` })).toEqual([]);
  });
});
