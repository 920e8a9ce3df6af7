import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LinkType } from '../../../src/codec/pcap/linktype.js';
import { encodePcap } from '../../../src/codec/pcap/pcap.js';
import { buildRoceFrame } from '../../../src/codec/roce/frame.js';
import { BthOpcode } from '../../../src/codec/roce/opcodes.js';
import type { RunEnvironment } from '../../../src/interop/environment.js';
import {
  FAULT_LINK_SCENARIOS,
  isSoakOnly,
  lostWireOf,
  needsSiwAtomics,
  RETRY_EXHAUSTED,
  retryExhaustionMs,
  retryTimeClass,
} from '../../../src/interop/link/fault-scenarios.js';
import { decodeLinkCapture } from '../../../src/interop/link/observed.js';
import { expectedLinkOutcome } from '../../../src/interop/link/predict.js';
import type { LinkObservation } from '../../../src/interop/link/protocol.js';
import { judgeLinkScenario } from '../../../src/interop/link/run.js';
import { linkScenarioById } from '../../../src/interop/link/scenarios.js';
import { wireRepeats } from '../../../src/interop/link/wire-repeats.js';
import {
  DEFAULT_TARGET,
  GUARD,
  initialBuffer,
  type Scenario,
  wrIdOf,
} from '../../../src/interop/scenario.js';

const A = '192.0.2.1';
const B = '192.0.2.2';
const REQUESTER_QP = 0x000051;
const RESPONDER_QP = 0x000062;
const WORD = 0x0123456789abcdefn;

/** A 6.1 guest's environment as a link run records it (the pair's sides are read from it). */
const ENVIRONMENT = JSON.parse(
  readFileSync(join(process.cwd(), 'test', 'fixtures', 'link', 'environment.json'), 'utf8'),
) as RunEnvironment;

function fetchAdd(psn: number): Uint8Array {
  return buildRoceFrame(
    { sourceIp: A, destinationIp: B },
    {
      bth: { opcode: BthOpcode.RC_FETCH_ADD, destinationQp: RESPONDER_QP, psn },
      headers: {
        AtomicETH: {
          virtualAddress: 0x7f00_1234_5678n,
          rKey: 0x1234,
          swapOrAddData: 1n,
          compareData: 0n,
        },
      },
    },
  );
}

function atomicAck(psn: number, original: bigint): Uint8Array {
  return buildRoceFrame(
    { sourceIp: B, destinationIp: A },
    {
      bth: { opcode: BthOpcode.RC_ATOMIC_ACKNOWLEDGE, destinationQp: REQUESTER_QP, psn },
      headers: {
        AETH: { syndrome: 0, msn: psn & 0xff },
        AtomicAckETH: { originalRemoteData: original },
      },
    },
  );
}

function capture(frames: readonly Uint8Array[]) {
  return decodeLinkCapture(
    encodePcap(
      { linkType: LinkType.ETHERNET },
      frames.map((data, i) => ({ timestampNs: BigInt(i + 1) * 1000n, data })),
    ),
  );
}

const PEERS = { requester: A, responder: B };
const QPS: [number, number][] = [[REQUESTER_QP, RESPONDER_QP]];

describe('faulty wire: repeats read from a capture', () => {
  it('a duplicate FetchAdd answered again with the saved original value', () => {
    const repeats = wireRepeats(
      capture([
        fetchAdd(0x100),
        atomicAck(0x100, WORD),
        fetchAdd(0x101),
        // The requester timed out on 0x101 and sent it again; the responder answers both
        // from the one execution (IBTA 9.4.5).
        fetchAdd(0x101),
        atomicAck(0x101, WORD + 1n),
        atomicAck(0x101, WORD + 1n),
      ]),
      QPS,
      PEERS,
    );
    expect(repeats).toEqual({
      requests: 3,
      repeatedRequests: 1,
      responses: 3,
      repeatedResponses: 1,
      duplicateAtomics: 1,
      answeredFromSavedResult: 1,
      answeredDifferently: 0,
    });
  });

  it('a duplicate executed twice shows as answered differently', () => {
    const repeats = wireRepeats(
      capture([
        fetchAdd(0x200),
        fetchAdd(0x200),
        atomicAck(0x200, WORD),
        atomicAck(0x200, WORD + 1n),
      ]),
      QPS,
      PEERS,
    );
    expect(repeats.duplicateAtomics).toBe(1);
    expect(repeats.answeredFromSavedResult).toBe(0);
    expect(repeats.answeredDifferently).toBe(1);
  });

  it('frames of other QPs are not counted', () => {
    const repeats = wireRepeats(capture([fetchAdd(0x300), fetchAdd(0x300)]), [[1, 2]], PEERS);
    expect(repeats.requests).toBe(0);
  });
});

/** The responder's buffer after a program: the scenario's initial bytes, the target word set. */
function memoryWith(scenario: Scenario, word: bigint): string {
  const memory = Buffer.from(initialBuffer(scenario));
  memory.writeBigUInt64LE(word, GUARD + DEFAULT_TARGET);
  return memory.toString('hex');
}

function hammerObservation(
  scenario: Scenario,
  fetched: bigint[],
  memoryWord: bigint,
): LinkObservation {
  const id = scenario.id;
  const memory = memoryWith(scenario, memoryWord);
  return {
    id,
    requesterQpn: REQUESTER_QP,
    responderQpn: RESPONDER_QP,
    remote: { addr: '139637976727552', rkey: 0x1234 },
    local: { addr: '139637976731648', lkey: 0x5678 },
    post: 'ok',
    requester: [],
    responder: [],
    memory,
    hammer: {
      post: 'ok',
      succeeded: fetched.length,
      fetched: fetched.map(String),
      before: WORD.toString(),
    },
  };
}

describe('faulty wire: the scenarios and their judgement', () => {
  it('the engine predicts exactly-once: 1000 distinct values, the word +1000', () => {
    const scenario = linkScenarioById('link-rxe-fetch-add-x1000');
    if (scenario === undefined) throw new Error('no link-rxe-fetch-add-x1000');
    const fields = expectedLinkOutcome(scenario).fields;
    expect(fields['hammer1.succeeded']).toBe('1000');
    expect(fields['hammer1.distinct']).toBe('1000');
    expect(fields['hammer1.sequence']).toBe('every intermediate sum once');
    expect(fields['mem[8]']).toBe('0x0123456789abd1d7');
    expect(Object.keys(fields).some((f) => f.startsWith('wire'))).toBe(false);
  });

  it('a run that kept every FetchAdd exactly once matches; one executed twice does not', () => {
    const scenario = linkScenarioById('link-rxe-fetch-add-x1000');
    if (scenario === undefined) throw new Error('no link-rxe-fetch-add-x1000');
    const once = Array.from({ length: 1000 }, (_, i) => WORD + BigInt(i));
    const wire = capture([fetchAdd(0x400), atomicAck(0x400, WORD)]);
    const good = judgeLinkScenario(
      scenario,
      hammerObservation(scenario, once, WORD + 1000n),
      wire,
      ENVIRONMENT,
    );
    expect(good.differences).toEqual([]);
    expect(good.verdict).toBe('match');
    // One FetchAdd executed twice: a fetched value repeats, the word is one too far.
    const twice = [...once.slice(0, 500), once[499] ?? 0n, ...once.slice(501).map((v) => v + 1n)];
    const bad = judgeLinkScenario(
      scenario,
      hammerObservation(scenario, twice, WORD + 1001n),
      wire,
      ENVIRONMENT,
    );
    expect(bad.verdict).toBe('divergence');
    expect(bad.differences.map((d) => d.field).sort()).toEqual([
      'hammer1.distinct',
      'hammer1.sequence',
      'mem[8]',
    ]);
  });

  it('retry exhaustion: RETRY_EXC_ERR after (1 + retry_cnt) transport timers, nothing placed', () => {
    const lost = lostWireOf(RETRY_EXHAUSTED);
    if (lost === undefined) throw new Error('not a lost-wire scenario');
    expect(lost).toEqual({ retryCnt: 3, timeout: 14 });
    // 4 x 4.096 us x 2^14 = 268.4 ms.
    expect(retryExhaustionMs(lost)).toBeCloseTo(268.435456, 5);
    expect(retryTimeClass(lost, 280)).toBe('(1 + retry_cnt) x timeout');
    expect(retryTimeClass(lost, 600)).toBe('(1 + retry_cnt) x timeout');
    expect(retryTimeClass(lost, 140)).toBe('2.1 x timeout');
    expect(retryTimeClass(lost, 2000)).toBe('29.8 x timeout');
    const fields = expectedLinkOutcome(RETRY_EXHAUSTED).fields;
    expect(fields).toMatchObject({
      post1: 'ok',
      'requester.wc1.wr': 'wr1',
      'requester.wc1.status': 'RETRY_EXC_ERR',
      'requester.wc1.after': '(1 + retry_cnt) x timeout',
      'mem[8]': '0x0123456789abcdef',
    });
    expect(fields['requester.wc1.fetched']).toBeUndefined();
    const memory = memoryWith(RETRY_EXHAUSTED, WORD);
    const observed = (elapsedMs: number): LinkObservation => ({
      id: RETRY_EXHAUSTED.id,
      requesterQpn: REQUESTER_QP,
      responderQpn: RESPONDER_QP,
      remote: { addr: '139637976727552', rkey: 0x1234 },
      local: { addr: '139637976731648', lkey: 0x5678 },
      post: 'ok',
      requester: [{ wrId: wrIdOf(0).toString(), status: 'RETRY_EXC_ERR', byteLen: 0, elapsedMs }],
      responder: [],
      memory,
    });
    const requests = capture([fetchAdd(0x12a5c3), fetchAdd(0x12a5c3)]);
    const onTime = judgeLinkScenario(RETRY_EXHAUSTED, observed(290), requests, ENVIRONMENT);
    expect(onTime.differences).toEqual([]);
    expect(onTime.verdict).toBe('match');
    expect(onTime.kernel?.note).toContain('completed after 290 ms, due after 268 ms');
    const early = judgeLinkScenario(RETRY_EXHAUSTED, observed(70), requests, ENVIRONMENT);
    expect(early.differences.map((d) => d.field)).toEqual(['requester.wc1.after']);
  });

  it('the faulty-wire scenarios: siw only where atomics need RFC 7306, the long ones by pattern', () => {
    expect(
      FAULT_LINK_SCENARIOS.map((s) => [
        s.id,
        s.device,
        s.captureWire,
        needsSiwAtomics(s),
        isSoakOnly(s),
      ]),
    ).toEqual([
      ['link-rxe-fetch-add-x1000', 'rxe0', false, false, false],
      ['link-rxe-fetch-add-4qp', 'rxe0', false, false, false],
      ['link-siw-fetch-add-x1000', 'siw0', false, true, false],
      ['link-siw-fetch-add-4qp', 'siw0', false, true, false],
      ['link-rxe-retry-exhausted', 'rxe0', false, false, false],
      ['link-rxe-fetch-add-4qp-x1000', 'rxe0', false, false, true],
      ['link-siw-fetch-add-4qp-x1000', 'siw0', false, true, true],
    ]);
  });
});
