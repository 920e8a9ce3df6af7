import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildTcpFrame } from '../../../src/codec/net/build.js';
import { TcpFlag } from '../../../src/codec/net/tcp.js';
import { LinkType } from '../../../src/codec/pcap/linktype.js';
import { encodePcap } from '../../../src/codec/pcap/pcap.js';
import { buildRoceFrame } from '../../../src/codec/roce/frame.js';
import { BthOpcode } from '../../../src/codec/roce/opcodes.js';
import type { RunEnvironment } from '../../../src/interop/environment.js';
import {
  CI_STREAM,
  FAULT_LINK_SCENARIOS,
  isSoakOnly,
  lostWireOf,
  MPA_CRC,
  needsSiwRfc7306,
  RETRY_EXHAUSTED,
  retryExhaustionMs,
  retryTimersClass,
  SOAK_STREAM,
  scenarioWireKind,
  wireKindOf,
  writeStreamOf,
} from '../../../src/interop/link/fault-scenarios.js';
import { decodeLinkCapture } from '../../../src/interop/link/observed.js';
import { expectedLinkOutcome } from '../../../src/interop/link/predict.js';
import type { LinkObservation } from '../../../src/interop/link/protocol.js';
import { judgeLinkScenario } from '../../../src/interop/link/run.js';
import { linkScenarioById } from '../../../src/interop/link/scenarios.js';
import { completionClass } from '../../../src/interop/link/stream-outcome.js';
import { tcpRepeats, wireRepeats } from '../../../src/interop/link/wire-repeats.js';
import {
  fillStream,
  immediatesOf,
  placementOf,
  statusRuns,
  streamByte,
  streamImm,
} from '../../../src/interop/link/write-stream.js';
import {
  DEFAULT_TARGET,
  GUARD,
  initialBuffer,
  type Scenario,
  wrIdOf,
} from '../../../src/interop/scenario.js';
import { parseFaults } from '../../../src/runtime/faults/spec.js';

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
    expect(bad.verdict).toBe('fail');
    expect(bad.differences.map((d) => d.field).sort()).toEqual([
      'hammer1.distinct',
      'hammer1.sequence',
      'mem[8]',
    ]);
  });

  it('retry exhaustion: RETRY_EXC_ERR after (1 + retry_cnt) transport timers, counted on the wire, nothing placed', () => {
    const lost = lostWireOf(RETRY_EXHAUSTED);
    if (lost === undefined) throw new Error('not a lost-wire scenario');
    expect(lost).toEqual({ retryCnt: 3, timeout: 14 });
    // 4 x 4.096 us x 2^14 = 268.4 ms: the note's "due after", never compared.
    expect(retryExhaustionMs(lost)).toBeCloseTo(268.435456, 5);
    // The timers are counted, not timed (issue 38): each repeat on a silent wire is one,
    // RETRY_EXC_ERR the last.
    expect(retryTimersClass(lost, 'RETRY_EXC_ERR', 3)).toBe('(1 + retry_cnt) x timeout');
    expect(retryTimersClass(lost, 'RETRY_EXC_ERR', 1)).toBe('2 x timeout');
    expect(retryTimersClass(lost, 'RETRY_EXC_ERR', 4)).toBe('5 x timeout');
    expect(retryTimersClass(lost, 'SUCCESS', 3)).toBe('3 x timeout');
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
    const sent = (times: number) =>
      capture(Array.from({ length: times }, () => fetchAdd(0x12a5c3)));
    // Four transmissions, however long the guest took: on time.
    const slow = judgeLinkScenario(RETRY_EXHAUSTED, observed(2000), sent(4), ENVIRONMENT);
    expect(slow.differences).toEqual([]);
    expect(slow.verdict).toBe('match');
    expect(slow.kernel?.note).toContain('completed after 2000 ms, due after 268 ms');
    // Two transmissions, even at the due time: two timers short.
    const short = judgeLinkScenario(RETRY_EXHAUSTED, observed(290), sent(2), ENVIRONMENT);
    expect(short.differences.map((d) => [d.field, d.kernel])).toEqual([
      ['requester.wc1.after', '2 x timeout'],
    ]);
  });

  it('the faulty-wire scenarios: siw only where atomics or immediates need RFC 7306, the long ones by pattern', () => {
    expect(
      FAULT_LINK_SCENARIOS.map((s) => [
        s.id,
        s.device,
        s.captureWire,
        needsSiwRfc7306(s),
        isSoakOnly(s),
        scenarioWireKind(s),
      ]),
    ).toEqual([
      ['link-rxe-fetch-add-x1000', 'rxe0', false, false, false, 'lossy'],
      ['link-rxe-fetch-add-4qp', 'rxe0', false, false, false, 'lossy'],
      ['link-rxe-read-atomic-mix', 'rxe0', false, false, false, 'lossy'],
      ['link-rxe-write-imm-stream', 'rxe0', false, false, false, 'lossy'],
      ['link-siw-fetch-add-x1000', 'siw0', false, true, false, 'lossy'],
      ['link-siw-fetch-add-4qp', 'siw0', false, true, false, 'lossy'],
      ['link-siw-read-atomic-mix', 'siw0', false, true, false, 'lossy'],
      ['link-siw-write-imm-stream', 'siw0', false, true, false, 'lossy'],
      ['link-rxe-retry-exhausted', 'rxe0', false, false, false, 'lost'],
      ['link-siw-mpa-crc', 'siw0', false, true, false, 'corrupt-payload'],
      ['link-rxe-fetch-add-4qp-x1000', 'rxe0', false, false, true, 'lossy'],
      ['link-siw-fetch-add-4qp-x1000', 'siw0', false, true, true, 'lossy'],
      ['link-rxe-write-imm-64m', 'rxe0', false, false, true, 'lossy'],
      ['link-siw-write-imm-64m', 'siw0', false, true, true, 'lossy'],
    ]);
    expect(wireKindOf(parseFaults('drop=1'))).toBe('lost');
    expect(wireKindOf(parseFaults('corrupt-payload=0.02,mpa-crc=1'))).toBe('corrupt-payload');
    expect(wireKindOf(parseFaults('drop=0.02,dup=0.01,corrupt=0.001'))).toBe('lossy');
    expect(writeStreamOf(MPA_CRC)).toEqual(CI_STREAM);
    expect(CI_STREAM).toEqual({ bytes: 1 << 20, chunk: 1 << 16, window: 8 });
    expect(SOAK_STREAM.bytes).toBe(64 << 20);
  });
});

describe('the write stream: bytes intact, every immediate once and in order', () => {
  const STREAM = linkScenarioById('link-rxe-write-imm-stream') as Scenario;
  const SIW_STREAM = linkScenarioById('link-siw-write-imm-stream') as Scenario;
  const TOTAL = CI_STREAM.bytes / CI_STREAM.chunk;

  it("the pattern has no zero byte and does not repeat with a chunk's period", () => {
    const bytes = Array.from({ length: 1 << 17 }, (_, i) => streamByte(i));
    expect(bytes.includes(0)).toBe(false);
    expect(bytes.slice(0, 64).join()).not.toBe(bytes.slice(1 << 16, (1 << 16) + 64).join());
    expect(streamImm(0x12)).toBe(0x5a000012);
  });

  it('status runs, immediates and placement classify what each side saw', () => {
    expect(statusRuns(['SUCCESS', 'SUCCESS', 'WR_FLUSH_ERR'])).toBe('2 SUCCESS, 1 WR_FLUSH_ERR');
    expect(statusRuns([])).toBe('none');
    expect(completionClass('16 SUCCESS', 16)).toBe('every one SUCCESS (16)');
    expect(completionClass('15 SUCCESS', 16)).toBe('15 SUCCESS');
    expect(completionClass('3 SUCCESS, 13 WR_FLUSH_ERR', 16)).toBe('SUCCESS, then WR_FLUSH_ERR');
    expect(completionClass('8 WR_FLUSH_ERR', 16)).toBe('SUCCESS, then WR_FLUSH_ERR');
    expect(completionClass('3 SUCCESS, 1 REM_OP_ERR', 16)).toBe('3 SUCCESS, 1 REM_OP_ERR');
    const imm = [0, 1, 2, 3].map(streamImm);
    expect(immediatesOf(imm)).toBe('every immediate once, in order (4)');
    expect(immediatesOf([...imm, streamImm(3)])).toBe('5 immediates: 1 repeated, 0 out of order');
    expect(immediatesOf([streamImm(1), streamImm(0)])).toBe(
      '2 immediates: 0 repeated, 2 out of order',
    );
    const buffer = new Uint8Array(300);
    fillStream(Buffer.from(buffer.buffer), 300);
    expect(placementOf(buffer, 300)).toEqual({
      memory: 'every byte as sent',
      placed: 300,
      untouched: 0,
      wrong: 0,
    });
    buffer.fill(0, 200);
    expect(placementOf(buffer, 300).memory).toBe('a prefix as sent, the rest untouched');
    buffer.fill(0, 50, 60);
    expect(placementOf(buffer, 300).memory).toBe('as sent where placed, with gaps');
    buffer[120] = (buffer[120] ?? 0) ^ 0x10;
    expect(placementOf(buffer, 300)).toMatchObject({
      memory: '1 byte(s) wrong, the first at 120',
      wrong: 1,
      firstWrong: 120,
    });
  });

  function streamObservation(
    scenario: Scenario,
    requester: string,
    responder: string,
    memory: string,
    immediates = `every immediate once, in order (${TOTAL})`,
  ): LinkObservation {
    return {
      id: scenario.id,
      ...(scenario.device === 'rxe0'
        ? { requesterQpn: REQUESTER_QP, responderQpn: RESPONDER_QP }
        : { serverPort: 40_000 }),
      remote: { addr: '139637976727552', rkey: 0x1234 },
      local: { addr: '0', lkey: 0 },
      post: 'ok',
      requester: [],
      responder: [],
      memory: '',
      stream: {
        requester: { post: 'ok', statuses: requester, succeeded: TOTAL, elapsedMs: 900 },
        responder: { statuses: responder, immediates, memory, placed: 0, untouched: 0, wrong: 0 },
      },
    };
  }

  it('on a lossy wire the engine predicts every write, receive and byte, and judges them', () => {
    expect(expectedLinkOutcome(STREAM).fields).toEqual({
      'stream.post': 'ok',
      'stream.requester': 'every one SUCCESS (16)',
      'stream.responder': 'every one SUCCESS (16)',
      'stream.immediates': 'once each, in order',
      'stream.memory': 'every byte as sent',
    });
    expect(expectedLinkOutcome(SIW_STREAM).fields['stream.terminate']).toBe('none');
    const wire = capture([]);
    const good = streamObservation(STREAM, '16 SUCCESS', '16 SUCCESS', 'every byte as sent');
    expect(judgeLinkScenario(STREAM, good, wire, ENVIRONMENT).verdict).toBe('match');
    const torn = streamObservation(
      STREAM,
      '16 SUCCESS',
      '16 SUCCESS',
      '3 byte(s) wrong, the first at 4097',
      `17 immediates: 1 repeated, 0 out of order`,
    );
    const judged = judgeLinkScenario(STREAM, torn, wire, ENVIRONMENT);
    expect(judged.verdict).toBe('fail');
    expect(judged.differences.map((d) => d.field).sort()).toEqual([
      'stream.immediates',
      'stream.memory',
    ]);
  });

  it('the MPA CRC case: the LLP Terminate (CRC Error), flushes after, nothing wrong placed', () => {
    expect(expectedLinkOutcome(MPA_CRC).fields).toEqual({
      'stream.post': 'ok',
      'stream.requester': 'SUCCESS, then WR_FLUSH_ERR',
      'stream.responder': 'SUCCESS, then WR_FLUSH_ERR',
      'stream.immediates': 'once each, in order',
      'stream.memory': 'a prefix as sent, the rest untouched',
      'stream.terminate': 'B: llp.mpa.crc-error',
    });
  });

  it("counts siw's TCP retransmissions: data segments whose direction, sequence and length came before", () => {
    const segment = (toServer: boolean, seq: number, length: number) =>
      buildTcpFrame(
        toServer
          ? { sourceIp: '198.51.100.1', destinationIp: '198.51.100.2' }
          : { sourceIp: '198.51.100.2', destinationIp: '198.51.100.1' },
        {
          sourcePort: toServer ? 40_001 : 40_000,
          destinationPort: toServer ? 40_000 : 40_001,
          sequenceNumber: seq,
          acknowledgementNumber: 1,
          flags: TcpFlag.PSH | TcpFlag.ACK,
          options: [],
        },
        new Uint8Array(length).fill(7),
      );
    const frames = [
      segment(true, 1000, 100),
      segment(true, 1100, 100),
      segment(true, 1000, 100), // resent
      segment(false, 5000, 0), // an ACK: no data
      segment(false, 5000, 20),
      segment(false, 5000, 20), // resent
      segment(true, 1100, 50), // same start, other length: not a repeat
    ];
    const bytes = encodePcap(
      { linkType: LinkType.ETHERNET },
      frames.map((data, i) => ({ timestampNs: BigInt(i) * 1000n, data })),
    );
    expect(tcpRepeats(decodeLinkCapture(bytes), 40_000)).toMatchObject({
      requests: 4,
      repeatedRequests: 1,
      responses: 2,
      repeatedResponses: 1,
    });
    expect(tcpRepeats(decodeLinkCapture(bytes), 40_002).requests).toBe(0);
  });
});
