import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type NativeCq,
  type NativeQp,
  type NativeSrq,
  WC_LAYOUT,
  WC_WORDS,
} from '../../../src/native/bindings.js';
import {
  RECV_LAYOUT,
  RECV_WORDS,
  SEND_LAYOUT,
  SEND_SGE_LAYOUT,
  SEND_SGE_WORDS,
  SEND_WORDS,
} from '../../../src/native/request-layout.js';
import { Cq } from '../../../src/verbs/cq.js';
import type { Context } from '../../../src/verbs/device.js';
import {
  VerbsArgumentError,
  VerbsAsyncEventError,
  VerbsCompletionError,
  VerbsError,
} from '../../../src/verbs/index.js';
import { Mr } from '../../../src/verbs/mr.js';
import type { Pd } from '../../../src/verbs/pd.js';
import { Qp } from '../../../src/verbs/qp.js';
import type { NativeSendWr } from '../../../src/verbs/requests/send-wr.js';
import { Srq } from '../../../src/verbs/srq.js';

// The context and PD as a CQ and a QP use them (no device on the host).
const fakeContext = {
  pollAsyncEvents: () => [],
  watchAsyncEvents() {},
  trackQp() {},
  untrackQp() {},
  untrackCq() {},
} as unknown as Context;
const fakePd = { context: fakeContext } as unknown as Pd;

// The in-flight bookkeeping of Qp/Cq is TypeScript; the kernel tests run it against rxe
// and siw. Here the native boundary is replaced by a scripted stand-in so that the
// retirement rules can be checked exhaustively on any host.

interface ScriptedWc {
  wrId: bigint;
  qpNum: number;
  status?: number;
  opcode?: number;
}

function scriptedCq(queue: ScriptedWc[]): NativeCq {
  const cq: NativeCq = {
    closed: false,
    channelFd: -1,
    key: 0x5000n,
    cqe: 64,
    close() {},
    requestNotify() {},
    getEvent: () => false,
    getEvents: () => 0,
    armAndPoll: () => 0,
    poll(words: Uint32Array, max?: number) {
      const n = Math.min(queue.length, max ?? 256, words.length / WC_WORDS);
      for (let i = 0; i < n; i++) {
        const wc = queue.shift() as ScriptedWc;
        const base = i * WC_WORDS;
        words.fill(0, base, base + WC_WORDS);
        words[base + WC_LAYOUT.wrIdLow] = Number(wc.wrId & 0xffffffffn);
        words[base + WC_LAYOUT.wrIdHigh] = Number(wc.wrId >> 32n);
        words[base + WC_LAYOUT.status] = wc.status ?? 0;
        words[base + WC_LAYOUT.opcode] = wc.opcode ?? 0;
        words[base + WC_LAYOUT.qpNum] = wc.qpNum;
      }
      return n;
    },
    // The bound form (native/bound_call.h) is the scripted poll into memory of its own.
    boundPoll() {
      const memory = new ArrayBuffer(256 * WC_WORDS * 4);
      const words = new Uint32Array(memory);
      return { memory, poll: (max: number) => cq.poll(words, max) };
    },
  };
  return cq;
}

/** Reads packed requests back as native/work_request.cc SendList::Parse does (SEND_LAYOUT). */
function unpack(words: Uint32Array, count: number): NativeSendWr[] {
  const u64 = new BigUint64Array(words.buffer, words.byteOffset);
  const L = SEND_LAYOUT;
  const out: NativeSendWr[] = [];
  let at = 0;
  for (let i = 0; i < count; i++) {
    const numSge = words[at + L.numSge] ?? 0;
    const wr: NativeSendWr = {
      wrId: u64[(at + L.wrId) / 2] ?? 0n,
      opcode: words[at + L.opcode] ?? 0,
      sendFlags: words[at + L.sendFlags] ?? 0,
      sgList: [],
      immData: words[at + L.immData] ?? 0,
      remoteAddr: u64[(at + L.remoteAddr) / 2] ?? 0n,
      rkey: words[at + L.rkey] ?? 0,
      compareAdd: u64[(at + L.compareAdd) / 2] ?? 0n,
      swap: u64[(at + L.swap) / 2] ?? 0n,
    };
    at += SEND_WORDS;
    for (let k = 0; k < numSge; k++, at += SEND_SGE_WORDS)
      wr.sgList.push({
        addr: u64[(at + SEND_SGE_LAYOUT.sgeAddr) / 2] ?? 0n,
        length: words[at + SEND_SGE_LAYOUT.sgeLength] ?? 0,
        lkey: words[at + SEND_SGE_LAYOUT.sgeLkey] ?? 0,
      });
    out.push(wr);
  }
  return out;
}

function scriptedQp(qpNum: number, refuseAt?: number): NativeQp & { posted: NativeSendWr[][] } {
  const posted: NativeSendWr[][] = [];
  const refuse = (wrs: NativeSendWr[]) => {
    posted.push(wrs);
    if (refuseAt !== undefined && refuseAt < wrs.length)
      // The count comes from the structured field; the message deliberately says nothing
      // a parser could use (issue 9: no text to parse).
      throw new VerbsError('ENOMEM', 12, 'ibv_post_send', 'fake0', 'refused', refuseAt);
  };
  return {
    posted,
    closed: false,
    qpNum,
    extended: false,
    cmOwned: false,
    cap: { maxSendWr: 64, maxRecvWr: 64, maxSendSge: 1, maxRecvSge: 1, maxInlineData: 0 },
    close() {},
    modify() {},
    query: () => {
      throw new Error('not scripted');
    },
    postSend: (words: Uint32Array, count: number) => refuse(unpack(words, count)),
    boundPost(size: number) {
      const memory = new ArrayBuffer(size * 4);
      const words = new Uint32Array(memory);
      return { memory, post: (count: number) => refuse(unpack(words, count)) };
    },
    postRecv(_words: Uint32Array, _count: number) {},
    bindMw: () => {
      throw new Error('not scripted');
    },
    prepare: () => 1,
    postPrepared() {},
    unprepare() {},
  };
}

function fixture(refuseAt?: number) {
  const queue: ScriptedWc[] = [];
  const cq = new Cq(scriptedCq(queue), fakeContext, 'fake0');
  const native = scriptedQp(7, refuseAt);
  const qp = new Qp(native, fakePd, cq, cq, 'fake0', false);
  const mr = new Mr(
    {
      closed: false,
      lkey: 0x1234,
      rkey: 0x5678,
      addr: 0x7f0000001000n,
      length: 64,
      buffer: undefined,
      memory: 'user' as const,
      close() {},
    },
    Buffer.alloc(64),
    ['LOCAL_WRITE'],
    fakePd,
  );
  return { queue, cq, qp, native, mr };
}

describe('in-flight tracking', () => {
  it('retires unsignaled requests with the next signaled completion, in order', () => {
    const { queue, cq, qp, mr } = fixture();
    const ids = qp.postSend([
      { opcode: 'RDMA_WRITE', sgList: [mr.sge(0, 8)], signaled: false, remote: mr.remote() },
      { opcode: 'RDMA_WRITE', sgList: [mr.sge(8, 8)], signaled: false, remote: mr.remote() },
      { opcode: 'RDMA_WRITE', sgList: [mr.sge(16, 8)], remote: mr.remote() },
      { opcode: 'RDMA_WRITE', sgList: [mr.sge(24, 8)], signaled: false, remote: mr.remote() },
    ]);
    expect(qp.inFlight.send).toBe(4);
    queue.push({ wrId: ids[2] as bigint, qpNum: 7, opcode: 1 });
    expect(cq.poll(4).map((w) => w.wrId)).toEqual([ids[2]]);
    expect(qp.inFlight.send).toBe(1);
  });

  it('keeps the requests before a refused one tracked, and only those', () => {
    const { qp, mr } = fixture(2);
    const wr = { opcode: 'SEND' as const, sgList: [mr.sge(0, 4)] };
    expect(() => qp.postSend([wr, wr, wr, wr])).toThrow(VerbsError);
    expect(qp.inFlight.send).toBe(2);
  });

  it('retires receives by wrId in any order, and error completions from either queue', () => {
    const { queue, cq, qp, mr } = fixture();
    const [r1, r2] = qp.postRecv([{ sgList: [mr.sge(0, 32)] }, { sgList: [mr.sge(32, 32)] }]);
    queue.push({ wrId: r2 as bigint, qpNum: 7, opcode: 128 });
    cq.poll();
    expect(qp.inFlight.recv).toBe(1);
    queue.push({ wrId: r1 as bigint, qpNum: 7, status: 5 }); // flushed: opcode undefined
    cq.poll();
    expect(qp.inFlight.recv).toBe(0);
  });

  it('never leaves a retired request tracked (property)', () => {
    fc.assert(
      fc.property(fc.array(fc.boolean(), { minLength: 1, maxLength: 40 }), (signals) => {
        const { queue, cq, qp, mr } = fixture();
        const ids = qp.postSend(
          signals.map((signaled) => ({
            opcode: 'SEND' as const,
            sgList: [mr.sge(0, 1)],
            signaled,
          })),
        );
        let lastRetired = -1;
        signals.forEach((signaled, i) => {
          if (!signaled) return;
          queue.push({ wrId: ids[i] as bigint, qpNum: 7 });
          cq.poll();
          lastRetired = i;
          expect(qp.inFlight.send).toBe(signals.length - 1 - lastRetired);
        });
        expect(qp.inFlight.send).toBe(signals.length - 1 - lastRetired);
      }),
    );
  });

  it('packs each request as the addon reads it, every field rewritten on reuse', () => {
    const { qp, native, mr } = fixture();
    const remote = mr.remote(16);
    qp.postSend([
      {
        wrId: 0x0123456789abcdefn,
        opcode: 'ATOMIC_CMP_AND_SWP',
        sgList: [mr.sge(8, 8)],
        remote,
        compare: 0x1122334455667788n,
        swap: 0x8877665544332211n,
      },
      {
        opcode: 'RDMA_WRITE_WITH_IMM',
        sgList: [mr.sge(0, 4), mr.sge(32, 16)],
        remote,
        immData: 0x12345678,
        signaled: false,
        fence: true,
      },
    ]);
    // Then a shorter list into the same memory: nothing of the first may leak into it.
    qp.postSend({
      wrId: 0xfedcba9876543210n,
      opcode: 'SEND',
      sgList: [mr.sge(4, 4)],
      solicited: true,
    });
    const sge = (offset: number, length: number) => ({
      addr: mr.addr + BigInt(offset),
      length,
      lkey: mr.lkey,
    });
    const blank = { immData: 0, remoteAddr: 0n, rkey: 0, compareAdd: 0n, swap: 0n };
    expect(native.posted).toEqual([
      [
        {
          ...blank,
          wrId: 0x0123456789abcdefn,
          opcode: 5,
          sendFlags: 2,
          sgList: [sge(8, 8)],
          remoteAddr: mr.addr + 16n,
          rkey: mr.rkey,
          compareAdd: 0x1122334455667788n,
          swap: 0x8877665544332211n,
        },
        {
          ...blank,
          wrId: 1n,
          opcode: 1,
          sendFlags: 1,
          sgList: [sge(0, 4), sge(32, 16)],
          immData: 0x12345678,
          remoteAddr: mr.addr + 16n,
          rkey: mr.rkey,
        },
      ],
      [{ ...blank, wrId: 0xfedcba9876543210n, opcode: 2, sendFlags: 6, sgList: [sge(4, 4)] }],
    ]);
  });

  it('refuses an SGE over a closed MR with EBADF before calling the addon', () => {
    const { qp, native, mr } = fixture();
    mr.close();
    expect(() => qp.postSend({ opcode: 'SEND', sgList: [mr.sge()] })).toThrow(
      expect.objectContaining({ code: 'EBADF' }),
    );
    expect(native.posted).toEqual([]);
  });

  it('refuses a raw SGE with inline on both paths before calling the addon (issue 8)', () => {
    const { qp, native } = fixture();
    const raw = { addr: 0x10n, length: 8, lkey: 0x1234 };
    for (const path of ['legacy', 'ex'] as const) {
      let caught: unknown;
      try {
        qp.postSend({ opcode: 'SEND', inline: true, sgList: [raw] }, path);
      } catch (e) {
        caught = e;
      }
      expect(caught).toBeInstanceOf(VerbsArgumentError);
      expect((caught as VerbsArgumentError).field).toBe('sgList[0]');
      expect((caught as VerbsArgumentError).origin).toBe('verbs');
    }
    expect(native.posted).toEqual([]);
    expect(qp.inFlight.send).toBe(0);
  });

  it('tracks the receives before a refused one, from badWrIndex', () => {
    const { qp, native, mr } = fixture();
    native.postRecv = () => {
      throw new VerbsError('ENOMEM', 12, 'ibv_post_recv', 'fake0', 'refused', 3);
    };
    const wr = { sgList: [mr.sge(0, 8)] };
    expect(() => qp.postRecv([wr, wr, wr, wr, wr])).toThrow(
      expect.objectContaining({ badWrIndex: 3 }),
    );
    expect(qp.inFlight.recv).toBe(3);
  });

  it('packs receives as native/qp.cc RecvChain::Unpack reads them (RECV_LAYOUT)', () => {
    const { qp, native, mr } = fixture();
    const seen: { wrId: bigint; sges: { addr: bigint; length: number; lkey: number }[] }[] = [];
    native.postRecv = (words: Uint32Array, count: number) => {
      const u64 = new BigUint64Array(words.buffer, words.byteOffset);
      let at = 0;
      for (let i = 0; i < count; i++) {
        const n = words[at + RECV_LAYOUT.numSge] ?? 0;
        const wrId = u64[(at + RECV_LAYOUT.wrId) / 2] ?? 0n;
        at += RECV_WORDS;
        const sges = [];
        for (let k = 0; k < n; k++, at += SEND_SGE_WORDS)
          sges.push({
            addr: u64[(at + SEND_SGE_LAYOUT.sgeAddr) / 2] ?? 0n,
            length: words[at + SEND_SGE_LAYOUT.sgeLength] ?? 0,
            lkey: words[at + SEND_SGE_LAYOUT.sgeLkey] ?? 0,
          });
        seen.push({ wrId, sges });
      }
    };
    const ids = qp.postRecv([
      { wrId: 0x0102_0304_0506_0708n, sgList: [mr.sge(0, 8), mr.sge(16, 4)] },
      { sgList: [] },
      { wrId: 0xfedc_ba98_7654_3210n, sgList: [mr.sge(8, 8)] },
    ]);
    expect(ids[0]).toBe(0x0102_0304_0506_0708n);
    expect(ids[2]).toBe(0xfedc_ba98_7654_3210n);
    expect(seen).toEqual([
      {
        wrId: 0x0102_0304_0506_0708n,
        sges: [
          { addr: mr.addr, length: 8, lkey: mr.lkey },
          { addr: mr.addr + 16n, length: 4, lkey: mr.lkey },
        ],
      },
      { wrId: ids[1], sges: [] },
      { wrId: 0xfedc_ba98_7654_3210n, sges: [{ addr: mr.addr + 8n, length: 8, lkey: mr.lkey }] },
    ]);
    expect(qp.inFlight.recv).toBe(3);
  });

  it('refuses more unsignaled requests in a row than the send queue holds (issue 8)', () => {
    const { queue, cq, qp, native, mr } = fixture();
    const unsignaled = { opcode: 'RDMA_WRITE' as const, sgList: [mr.sge(0, 8)], signaled: false };
    const depth = native.cap.maxSendWr;
    qp.postSend(Array.from({ length: depth }, () => unsignaled));
    const before = native.posted.length;
    let caught: unknown;
    try {
      qp.postSend(unsignaled);
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(VerbsArgumentError);
    expect((caught as VerbsArgumentError).field).toBe('signaled');
    expect(native.posted.length).toBe(before); // nothing reached the addon
    // A signaled request is accepted, and its completion retires the whole run.
    const [id] = qp.postSend({ ...unsignaled, signaled: true });
    expect(qp.inFlight.send).toBe(depth + 1);
    queue.push({ wrId: id as bigint, qpNum: 7 });
    cq.poll();
    expect(qp.inFlight.send).toBe(0);
  });

  it('keeps in-flight bookkeeping bounded over 5,000 writes signaled once per queue depth', () => {
    const { queue, cq, qp, native, mr } = fixture();
    const depth = native.cap.maxSendWr;
    let most = 0;
    for (let i = 1; i <= 5000; i++) {
      const signaled = i % depth === 0;
      const [id] = qp.postSend({ opcode: 'RDMA_WRITE', sgList: [mr.sge(0, 8)], signaled });
      most = Math.max(most, qp.inFlight.send);
      if (signaled) {
        queue.push({ wrId: id as bigint, qpNum: 7 });
        cq.poll();
      }
    }
    expect(most).toBe(depth);
    expect(qp.inFlight.send).toBe(5000 % depth);
  });

  it('a CQ_ERR fails the CQ: waits reject naming it, the lost requests are released (issue 8)', async () => {
    const queue: ScriptedWc[] = [];
    let cq: Cq | undefined;
    const context = {
      ...fakeContext,
      pollAsyncEvents: () => {
        cq?.fail('CQ_ERR'); // what the device reports for an overrun
        return [];
      },
    } as unknown as Context;
    cq = new Cq({ ...scriptedCq(queue), poll: scriptedCq(queue).poll }, context, 'fake0');
    const qp = new Qp(scriptedQp(7), { context } as unknown as Pd, cq, cq, 'fake0', false);
    const mr = new Mr(
      {
        closed: false,
        lkey: 1,
        rkey: 2,
        addr: 0x1000n,
        length: 64,
        buffer: undefined,
        memory: 'user' as const,
        close() {},
      },
      Buffer.alloc(64),
      ['LOCAL_WRITE'],
      { context } as unknown as Pd,
    );
    const ids = qp.postSend(
      Array.from({ length: 10 }, () => ({ opcode: 'RDMA_WRITE' as const, sgList: [mr.sge()] })),
    );
    for (const id of ids.slice(0, 3)) queue.push({ wrId: id, qpNum: 7 });
    let caught: unknown;
    try {
      cq.pollUntil(10, 1);
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(VerbsAsyncEventError);
    const error = caught as VerbsAsyncEventError;
    expect(error.event).toBe('CQ_ERR');
    expect(error.lostWrIds).toEqual(ids.slice(3));
    expect(error.origin).toBe('verbs');
    expect(qp.inFlight.send).toBe(0);
    expect(cq.error).toBe(error);
    await expect(cq.next()).rejects.toBe(error);
  });
});

describe('prepared SRQ receives (issue 23)', () => {
  // pollUntil retires from completion objects (bigint wrIds), pollUntilCount from the poll
  // words (a prepared run's receives compared as numbers): the same rules either way.
  const retirers: [string, (cq: Cq, n: number) => void][] = [
    [
      'pollUntil',
      (cq, n) => {
        cq.pollUntil(n);
      },
    ],
    ['pollUntilCount', (cq, n) => cq.pollUntilCount(n)],
  ];
  it.each(retirers)(
    'copies are numbered by the SRQ, tracked as one run per post and retired in any order through %s; a partial refusal tracks what was posted',
    (_name, retire) => {
      const queue: ScriptedWc[] = [];
      const cq = new Cq(scriptedCq(queue), fakeContext, 'fake0');
      const context = { ...fakeContext, name: 'fake0', trackSrq() {}, untrackSrq() {} };
      const pd = { context } as unknown as Pd;
      const calls: { first: bigint; count: number }[] = [];
      let refuseAt: number | undefined;
      const native = {
        closed: false,
        key: 0x7700n,
        attr: { maxWr: 64, maxSge: 1, srqLimit: 0 },
        close() {},
        postRecv() {},
        postRecvCopies(words: Uint32Array, count: number) {
          const first = new BigUint64Array(words.buffer, words.byteOffset, 1)[0] ?? 0n;
          calls.push({ first, count });
          if (refuseAt !== undefined && refuseAt < count)
            throw new VerbsError('ENOMEM', 12, 'ibv_post_srq_recv', 'fake0', 'full', refuseAt);
        },
        modify() {},
        query: () => ({ maxWr: 64, maxSge: 1, srqLimit: 0 }),
      } as unknown as NativeSrq;
      const srq = new Srq(native, pd);
      const qp = new Qp(scriptedQp(7), pd, cq, cq, 'fake0', false, undefined, srq);
      const mr = new Mr(
        {
          closed: false,
          lkey: 0x1234,
          rkey: 0x5678,
          addr: 0x7f0000002000n,
          length: 64,
          buffer: undefined,
          memory: 'user' as const,
          close() {},
        },
        Buffer.alloc(64),
        ['LOCAL_WRITE'],
        pd,
      );
      const recv = srq.prepareRecv({ sgList: [mr.sge(0, 16)] });
      const first = recv.post(3);
      expect(recv.post(2)).toBe(first + 3n);
      expect(calls).toEqual([
        { first, count: 3 },
        { first: first + 3n, count: 2 },
      ]);
      expect(srq.inFlight).toBe(5);
      // Out of order across the two runs (an SRQ feeds several QPs); RECV is opcode 0x80.
      for (const k of [4n, 0n, 3n]) queue.push({ wrId: first + k, qpNum: 7, opcode: 0x80 });
      retire(cq, 3);
      expect(srq.inFlight).toBe(2);
      // A wrId in no run is not the SRQ's: it stays with nothing retired.
      queue.push({ wrId: first + 100n, qpNum: 7, opcode: 0x80 });
      retire(cq, 1);
      expect(srq.inFlight).toBe(2);
      // A receive posted by postRecv beside the runs: retired by its own wrId.
      const [listed] = srq.postRecv({ sgList: [mr.sge(16, 16)] });
      expect(listed).toBe(first + 5n);
      for (const k of [1n, 5n, 2n]) queue.push({ wrId: first + k, qpNum: 7, opcode: 0x80 });
      retire(cq, 3);
      expect(srq.inFlight).toBe(0);
      // The provider takes 4 of 10: those 4 are tracked, the error is the provider's.
      refuseAt = 4;
      const refused = (() => {
        try {
          recv.post(10);
        } catch (e) {
          return e;
        }
        return undefined;
      })();
      expect(refused).toBeInstanceOf(VerbsError);
      expect(srq.inFlight).toBe(4);
      qp.close();
    },
  );
});

describe('cq.pollUntilCount (issue 23)', () => {
  it('retires what it counts without completion objects; a failed one throws VerbsCompletionError naming it after the count; wrong arguments and an empty CQ are typed errors', () => {
    const { queue, cq, qp, mr } = fixture();
    const ids = [0, 1, 2, 3].map(() => qp.postSend({ opcode: 'SEND', sgList: [mr.sge(0, 8)] })[0]);
    expect(qp.inFlight.send).toBe(4);
    for (const id of ids.slice(0, 2)) queue.push({ wrId: id as bigint, qpNum: 7 });
    cq.pollUntilCount(2);
    expect(qp.inFlight.send).toBe(2);
    // The third fails (REM_ACCESS_ERR, 10): named once the fourth was polled too.
    queue.push(
      { wrId: ids[2] as bigint, qpNum: 7, status: 10 },
      { wrId: ids[3] as bigint, qpNum: 7 },
    );
    let error: unknown;
    try {
      cq.pollUntilCount(2);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(VerbsCompletionError);
    expect([(error as VerbsCompletionError).wrId, (error as VerbsCompletionError).status]).toEqual([
      ids[2],
      'REM_ACCESS_ERR',
    ]);
    expect(qp.inFlight.send).toBe(0);
    for (const bad of [-1, 1.5, Number.NaN, '2'])
      expect(() => cq.pollUntilCount(bad as never)).toThrow(VerbsArgumentError);
    expect(() => cq.pollUntilCount(1, -1)).toThrow(VerbsArgumentError);
    expect(() => cq.pollUntilCount(1, 0)).toThrow(/no completion/);
    cq.pollUntilCount(0);
  });
});

describe('completion routing', () => {
  it('a QP closed and a new one with the same number in one synchronous run: completions retire in the new one', () => {
    const queue: ScriptedWc[] = [];
    const cq = new Cq(scriptedCq(queue), fakeContext, 'fake0');
    const mr = fixture().mr;
    const old = new Qp(scriptedQp(7), fakePd, cq, cq, 'fake0', false);
    const [a] = old.postSend({ opcode: 'SEND', sgList: [mr.sge(0, 8)] });
    queue.push({ wrId: a as bigint, qpNum: 7 });
    cq.pollUntilCount(1);
    expect(old.inFlight.send).toBe(0);
    old.close();
    // The same QP number, handed out again (the provider may reuse it).
    const reused = new Qp(scriptedQp(7), fakePd, cq, cq, 'fake0', false);
    const [b] = reused.postSend({ opcode: 'SEND', sgList: [mr.sge(0, 8)] });
    queue.push({ wrId: b as bigint, qpNum: 7 });
    cq.pollUntilCount(1);
    expect(reused.inFlight.send).toBe(0);
    // Two QPs alternating on one CQ, each completion retired in its own.
    const other = new Qp(scriptedQp(8), fakePd, cq, cq, 'fake0', false);
    const ids = [reused, other, reused, other].map(
      (qp) => [qp, qp.postSend({ opcode: 'SEND', sgList: [mr.sge(0, 8)] })[0]] as const,
    );
    expect([reused.inFlight.send, other.inFlight.send]).toEqual([2, 2]);
    for (const [qp, id] of ids) queue.push({ wrId: id as bigint, qpNum: qp.qpNum });
    cq.pollUntilCount(3);
    expect([reused.inFlight.send, other.inFlight.send]).toEqual([0, 1]);
    cq.pollUntil(1);
    expect(other.inFlight.send).toBe(0);
  });
});
