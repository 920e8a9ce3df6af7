/**
 * Issue 32: the guided rxe fuzz's QP set-ups and added bases (UC, UD, states, SRQ, IRD,
 * another source address, multicast, the GSI QP, memory windows), the seeds aimed at
 * rxe_resp.c and rxe_recv.c, and the datagrams a step becomes. The sequences themselves go
 * to rxe in the guest (probe --coverage blocks --guided; docs/coverage.md Figures).
 */
import { describe, expect, it } from 'vitest';
import { bthOpcodeInfo } from '../../../src/codec/roce/opcodes.js';
import { decodeRocePacket } from '../../../src/codec/roce/packet.js';
import {
  asUc,
  baseIndex,
  baseOpcode,
  baseType,
  CORE_SEED_COUNT,
  GUIDED_BASES,
  type GuidedInput,
  type GuidedSetup,
  guidedSeeds,
  MUTATIONS,
  mutate,
  mutateOnce,
  SETUP_STATES,
  SETUP_TYPES,
  seedsFor,
} from '../../../src/coverage/guided-input.js';
import { headersTwiceDatagram, inputDatagrams } from '../../../src/coverage/guided-roce.js';
import {
  GSI_QKEY,
  GUIDED_MULTICAST_ADDRESS,
  GUIDED_QKEY,
} from '../../../src/coverage/guided-roce-qp.js';
import { seededRandom } from '../../../src/probe/fuzz-loop.js';
import { rawTesterDatagram } from '../../../src/probe/roce-datagram.js';

const TARGET = { qpn: 0x000123, va: 0x00007f3a_12c45000n, rKey: 0x1a2b3c4d };
const START = 0x00a5c3;
const one = (base: number, extra: Partial<GuidedInput['steps'][number]> = {}): GuidedInput => ({
  startPsn: START,
  steps: [{ base, psnOffset: 0, edits: [], icrcXor: 0, ...extra }],
});
const decoded = (d: Uint8Array) => {
  const p = decodeRocePacket(d);
  if (!p.ok) throw new Error('does not decode');
  return p.value;
};

describe('the guided bases', () => {
  it('name opcodes of the codec, each with its transport', () => {
    for (let i = 0; i < GUIDED_BASES.length; i++) {
      const name = GUIDED_BASES[i] as string;
      expect(bthOpcodeInfo(baseOpcode(i))?.name).toBe(name);
      expect(baseType(i)).toBe(name.slice(0, 2));
    }
    expect(baseOpcode(baseIndex('UC_SEND_ONLY'))).toBe(0x24);
    expect(baseOpcode(baseIndex('UD_SEND_ONLY'))).toBe(0x64);
  });

  it('build packets the codec reads back with the right opcode and ICRC', () => {
    for (let i = 0; i < GUIDED_BASES.length; i++) {
      const [d] = inputDatagrams(one(i), { ...TARGET, qkey: GUIDED_QKEY });
      const p = decoded(d as Uint8Array);
      expect(p.bth.opcode).toBe(baseOpcode(i));
      expect(p.bth.destinationQp).toBe(TARGET.qpn);
      expect(p.bth.psn).toBe(START);
    }
  });

  it('put the set-up Q_Key in a UD DETH and the target R_Key in an IETH', () => {
    const ud = decoded(
      inputDatagrams(one(baseIndex('UD_SEND_ONLY')), { ...TARGET, qkey: GSI_QKEY })[0]!,
    );
    expect(ud.headers.DETH?.qKey).toBe(GSI_QKEY);
    const inv = decoded(inputDatagrams(one(baseIndex('RC_SEND_ONLY_WITH_INVALIDATE')), TARGET)[0]!);
    expect(inv.headers.IETH?.rKey).toBe(0x1a2b3c4d);
    const flush = guidedSeeds(START).find((x) => x.setup?.flush === true) as GuidedInput;
    const feth = inputDatagrams(flush, TARGET).map((d) => decoded(d).headers.FETH?.value);
    expect(feth).toEqual([0x11, 0x01, 0x12, 0x11]);
  });

  it('point at the step offset and carry the step payload (a Read: its DMA length)', () => {
    const write = decoded(
      inputDatagrams(
        one(baseIndex('RC_RDMA_WRITE_ONLY'), { offset: 4093, payload: 300 }),
        TARGET,
      )[0]!,
    );
    expect(write.headers.RETH?.virtualAddress).toBe(0x00007f3a_12c45ffdn);
    expect(write.payload.length).toBe(300);
    const read = decoded(
      inputDatagrams(one(baseIndex('RC_RDMA_READ_REQUEST'), { payload: 3000 }), TARGET)[0]!,
    );
    expect(read.headers.RETH?.dmaLength).toBe(3000);
    const atomic = decoded(
      inputDatagrams(one(baseIndex('RC_FETCH_ADD'), { offset: 4 }), TARGET)[0]!,
    );
    expect(atomic.headers.AtomicETH?.virtualAddress).toBe(0x00007f3a_12c45004n);
  });

  it('compute the ICRC over the addresses the set-up sends from and to', () => {
    const input = one(baseIndex('UD_SEND_ONLY'));
    const plain = inputDatagrams(input, TARGET)[0]!;
    const group = inputDatagrams(input, TARGET, { destination: GUIDED_MULTICAST_ADDRESS })[0]!;
    expect(Buffer.from(group.subarray(0, -4))).toEqual(Buffer.from(plain.subarray(0, -4)));
    expect(Buffer.from(group.subarray(-4))).not.toEqual(Buffer.from(plain.subarray(-4)));
    expect(Buffer.from(group)).toEqual(
      Buffer.from(
        rawTesterDatagram(group.subarray(0, -4), { destination: GUIDED_MULTICAST_ADDRESS }),
      ),
    );
  });
});

describe('headersTwiceDatagram (the ICRC rxe checks a FLUSH with)', () => {
  it('covers the transport a second time, unmasked, after the standard ICRC input', () => {
    const flush = one(baseIndex('RC_FLUSH'));
    const standard = inputDatagrams(flush, TARGET)[0]!;
    const rxe = inputDatagrams(
      { ...flush, steps: [{ ...flush.steps[0]!, rxeFlushIcrc: true }] },
      TARGET,
    )[0]!;
    expect(Buffer.from(rxe.subarray(0, -4))).toEqual(Buffer.from(standard.subarray(0, -4)));
    expect(Buffer.from(rxe.subarray(-4))).not.toEqual(Buffer.from(standard.subarray(-4)));
    // BTH byte 4 (resv8a) is masked in the standard ICRC only: changing it keeps the
    // standard ICRC and changes the one that also hashes the raw BTH.
    const t = Uint8Array.from(standard.subarray(0, -4));
    const t2 = Uint8Array.from(t);
    t2[4] = 0x5a;
    expect(Buffer.from(rawTesterDatagram(t2).subarray(-4))).toEqual(
      Buffer.from(rawTesterDatagram(t).subarray(-4)),
    );
    expect(Buffer.from(headersTwiceDatagram(t2).subarray(-4))).not.toEqual(
      Buffer.from(headersTwiceDatagram(t).subarray(-4)),
    );
    expect(Buffer.from(headersTwiceDatagram(t))).toEqual(Buffer.from(rxe));
  });
});

describe('asUc', () => {
  it('moves Sends and Writes to the UC opcode and leaves Reads and atomics', () => {
    const first = asUc(one(baseIndex('RC_SEND_FIRST')).steps[0]!);
    expect(
      decoded(inputDatagrams({ startPsn: START, steps: [first] }, TARGET)[0]!).bth.opcode,
    ).toBe(0x20);
    const writeOnly = asUc(one(baseIndex('RC_RDMA_WRITE_ONLY')).steps[0]!);
    expect(writeOnly.edits).toEqual([{ at: 0, bytes: [0x2a] }]);
    const read = one(baseIndex('RC_RDMA_READ_REQUEST')).steps[0]!;
    expect(asUc(read)).toBe(read);
    expect(asUc(one(baseIndex('RC_FETCH_ADD')).steps[0]!).edits).toEqual([]);
  });
});

describe('the guided seeds', () => {
  const seeds = guidedSeeds(START);
  const setups = seeds.map((s) => s.setup ?? {});
  const has = (f: (s: GuidedSetup) => boolean) => setups.some(f);

  it('send a QP of every type and every state but RTS something', () => {
    for (const type of SETUP_TYPES) expect(has((s) => (s.type ?? 'RC') === type)).toBe(true);
    for (const state of SETUP_STATES.filter((s) => s !== 'RTS'))
      expect(has((s) => s.state === state)).toBe(true);
  });

  it('cover each set-up the receive checks and the responder branch on', () => {
    expect(has((s) => s.recvs === 0 && s.srq !== true)).toBe(true);
    expect(has((s) => s.srq === true && s.srqLimit === true)).toBe(true);
    expect(has((s) => s.maxDestRdAtomic === 1)).toBe(true);
    expect(has((s) => s.otherSource === true)).toBe(true);
    expect(has((s) => s.multicast === true && s.type === 'UD')).toBe(true);
    expect(has((s) => s.gsi === true && s.type === 'UD')).toBe(true);
    expect(has((s) => s.window === true)).toBe(true);
    expect(has((s) => s.noRemoteAccess === true && s.type === 'UC')).toBe(true);
    expect(has((s) => s.flush === true)).toBe(true);
    expect(has((s) => s.odp === true)).toBe(true);
    expect(seeds.some((s) => s.steps.some((x) => x.rxeFlushIcrc === true))).toBe(true);
    expect(has((s) => s.after === 'ERR') && has((s) => s.after === 'RESET')).toBe(true);
    expect(has((s) => s.recvBytes === 256 && s.type === 'UD')).toBe(true);
  });

  it('name a UC Write R_Key that does not exist, with and without an SRQ', () => {
    const zeroKey = (s: GuidedInput) =>
      s.setup?.type === 'UC' &&
      s.steps[0]?.edits.some((e) => e.at === 20 && e.bytes.join() === '0,0,0,0') === true;
    const uc = seeds.filter(zeroKey);
    expect(uc.map((s) => s.setup?.srq === true)).toEqual([false, true]);
    const [d] = inputDatagrams(uc[0] as GuidedInput, TARGET);
    const p = decoded(d as Uint8Array);
    expect(p.bth.opcode).toBe(0x2a);
    expect(p.headers.RETH?.rKey).toBe(0);
  });

  it('replay a Read from its second packet and an atomic at its own PSN', () => {
    const read = baseIndex('RC_RDMA_READ_REQUEST');
    expect(
      seeds.some(
        (s) =>
          s.steps.length === 3 &&
          s.steps.every((x) => x.base === read) &&
          s.steps[1]?.psnOffset === 1 &&
          s.steps[1]?.offset === 1024,
      ),
    ).toBe(true);
    const fa = baseIndex('RC_FETCH_ADD');
    expect(
      seeds.some(
        (s) => s.steps.length === 2 && s.steps.every((x) => x.base === fa && x.psnOffset === 0),
      ),
    ).toBe(true);
  });

  it('start a short campaign with the core seeds and a long one with all', () => {
    expect(CORE_SEED_COUNT).toBe(13);
    expect(seedsFor(30, START)).toEqual(seeds.slice(0, 13));
    expect(seedsFor(2 * seeds.length - 1, START)).toHaveLength(13);
    expect(seedsFor(2 * seeds.length, START)).toEqual(seeds);
    expect(seeds.slice(0, 13).every((s) => s.setup === undefined)).toBe(true);
    expect(seeds.slice(0, 9).map((s) => s.steps[0]?.base)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8]);
  });

  it('are plain data: JSON round trips them', () => {
    expect(JSON.parse(JSON.stringify(seeds))).toEqual(seeds);
  });
});

describe('the set-up mutations', () => {
  const base: GuidedInput = guidedSeeds(START)[0] as GuidedInput;

  it('change the set-up only, and flip the flags they toggle', () => {
    const r = seededRandom(3);
    const srq = mutateOnce(base, r, 'qp-srq');
    expect(srq.setup?.srq).toBe(true);
    expect(mutateOnce(srq, r, 'qp-srq').setup?.srq).toBe(false);
    expect(srq.steps).toEqual(base.steps);
    expect(mutateOnce(base, r, 'multicast').setup).toEqual({ type: 'UD', multicast: true });
    expect(mutateOnce(base, r, 'gsi').setup).toEqual({ type: 'UD', gsi: true });
    expect(SETUP_STATES).toContain(mutateOnce(base, r, 'qp-state').setup?.state);
    expect([1, 2, 16]).toContain(mutateOnce(base, r, 'qp-ird').setup?.maxDestRdAtomic);
    expect(['RESET', 'ERR']).toContain(mutateOnce(base, r, 'qp-after').setup?.after);
    expect([64, 256, 2048]).toContain(mutateOnce(base, r, 'recv-bytes').setup?.recvBytes);
    expect(mutateOnce(base, r, 'odp').setup).toEqual({ odp: true });
  });

  it('move every step to UC with uc-opcodes, and change a step offset or payload', () => {
    const r = seededRandom(5);
    const uc = mutateOnce(base, r, 'uc-opcodes');
    expect(uc.setup?.type).toBe('UC');
    expect(uc.steps[0]?.edits.at(-1)).toEqual({ at: 0, bytes: [0x2a] });
    expect([1, 4, 12, 4093, 16380, 16384]).toContain(
      mutateOnce(base, r, 'offset').steps[0]?.offset,
    );
    expect(mutateOnce(base, r, 'payload-length').steps[0]?.payload).toBeGreaterThanOrEqual(0);
  });

  it('draw the same campaign from the same seed', () => {
    const run = (seed: number) => {
      const r = seededRandom(seed);
      return Array.from({ length: 50 }, () => mutate(base, r));
    };
    expect(run(11)).toEqual(run(11));
    expect(run(11)).not.toEqual(run(12));
    const names = new Set(
      Array.from({ length: 400 }, (_, i) => mutate(base, seededRandom(i)).applied).flat(),
    );
    expect(names.size).toBe(MUTATIONS.length);
  });
});
