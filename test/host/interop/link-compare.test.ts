import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BthOpcode } from '../../../src/codec/roce/opcodes.js';
import type { RunEnvironment } from '../../../src/interop/environment.js';
import { decodeLinkCapture } from '../../../src/interop/link/observed.js';
import { expectedLinkOutcome, predictRocePackets } from '../../../src/interop/link/predict.js';
import type { LinkObservation } from '../../../src/interop/link/protocol.js';
import { judgeLinkScenario } from '../../../src/interop/link/run.js';
import { linkScenarioById } from '../../../src/interop/link/scenarios.js';
import type { Scenario } from '../../../src/interop/scenario.js';
import { SCENARIOS } from '../../../src/interop/scenarios.js';

// Frames recorded on the link between two guests (Debian 6.1 rxe and siw, `run --link`,
// each scenario's frames as the report writes them) and what guest A observed. The
// comparison must find them equal to the engine's prediction, and find a changed byte.

const FIXTURES = join(process.cwd(), 'test', 'fixtures', 'link');
const observations = JSON.parse(
  readFileSync(join(FIXTURES, 'observations.json'), 'utf8'),
) as LinkObservation[];
const environment = JSON.parse(
  readFileSync(join(FIXTURES, 'environment.json'), 'utf8'),
) as RunEnvironment;

function scenario(id: string): Scenario {
  const found = linkScenarioById(id);
  if (found === undefined) throw new Error(`no link scenario ${id}`);
  return found;
}

function observation(id: string): LinkObservation {
  const found = observations.find((o) => o.id === id);
  if (found === undefined) throw new Error(`no observation of ${id}`);
  return found;
}

function pcap(id: string): Buffer {
  return readFileSync(join(FIXTURES, `${id}.pcap`));
}

function judged(id: string, bytes: Uint8Array = pcap(id)) {
  return judgeLinkScenario(scenario(id), observation(id), decodeLinkCapture(bytes), environment);
}

const RECORDED = [
  'link-rxe-fetch-add',
  'link-rxe-atomic-pair',
  'link-rxe-read',
  'link-rxe-write-imm',
  'link-rxe-send-rnr',
  'link-rxe-misaligned-ex',
  'link-rxe-atomic-bad-rkey',
  'link-siw-read',
];

describe('link mode: engine prediction', () => {
  it('FetchAdd: one request at the first PSN, an ATOMIC Acknowledge with the original value', () => {
    const { requests, responses } = predictRocePackets(scenario('link-rxe-fetch-add'));
    expect(requests).toHaveLength(1);
    expect(requests[0]?.psn).toBe(0x12a5c3);
    expect(requests[0]?.headers.AtomicETH?.swapOrAddData).toBe(0x1111111122222222n);
    expect(responses).toHaveLength(1);
    expect(responses[0]?.headers.AtomicAckETH?.originalRemoteData).toBe(0x0123456789abcdefn);
    expect(responses[0]?.headers.AETH?.msn).toBe(1);
  });

  it('a missing receive with rnr_retry 0: an RNR NAK with the responder min_rnr_timer, MSN 0', () => {
    const fields = expectedLinkOutcome(scenario('link-rxe-send-rnr')).fields;
    expect(fields['wire.resp1.aeth']).toBe('RNR_NAK timer=12 msn=0');
    expect(fields['requester.wc1.status']).toBe('RNR_RETRY_EXC_ERR');
  });

  it('a Write then a FLUSH: an ACK, then an RDMA READ Response ONLY without data, MSN 2', () => {
    const flush = SCENARIOS.find((s) => s.id === 'rxe-write-then-flush-ex');
    if (flush === undefined) throw new Error('no scenario rxe-write-then-flush-ex');
    const { requests, responses } = predictRocePackets(flush);
    expect(requests.map((p) => p.opcode)).toEqual([
      BthOpcode.RC_RDMA_WRITE_ONLY,
      BthOpcode.RC_FLUSH,
    ]);
    expect(responses.map((p) => p.opcode)).toEqual([
      BthOpcode.RC_ACKNOWLEDGE,
      BthOpcode.RC_RDMA_READ_RESPONSE_ONLY,
    ]);
    expect(responses[1]?.payload).toHaveLength(0);
    expect(responses[1]?.psn).toBe(requests[1]?.psn);
    expect(responses[1]?.headers.AETH?.msn).toBe(2);
  });

  it('a misaligned atomic: NAK INVALID_REQUEST at the request PSN', () => {
    const fields = expectedLinkOutcome(scenario('link-rxe-misaligned-ex')).fields;
    expect(fields['wire.resp1.aeth']).toBe('NAK INVALID_REQUEST msn=0');
    expect(fields['wire.resp1.psn']).toBe('0x12a5c3');
    expect(fields['wire.req1.atomiceth']).toMatch(/^va=remote\+12 rkey=remote /);
  });
});

describe('link mode: comparison on recorded frames', () => {
  it.each(RECORDED)('%s: every field of the recorded frames matches the engine', (id) => {
    const result = judged(id);
    expect(result.differences).toEqual([]);
    expect(result.verdict).toBe('match');
  });

  it('a retransmitted request and its repeated answer count once, and the note says so', () => {
    // Recorded before the link QPs got a longer ACK timeout: rxe sent the Send three times
    // (67 ms timeout under a loaded host) and the responder answered each with an RNR NAK.
    const result = judged('link-rxe-send-rnr');
    expect(result.kernel?.fields['wire.requests']).toBe('1');
    expect(result.kernel?.fields['wire.resp1.aeth']).toBe('RNR_NAK timer=12 msn=0');
    expect(result.kernel?.note).toBe(
      '4 retransmitted packet(s) on the wire (identical, counted once)',
    );
  });

  it('checks every ICRC: one changed byte of the AtomicAckETH is a bad ICRC and a wrong value', () => {
    const bytes = Buffer.from(pcap('link-rxe-fetch-add'));
    const original = Buffer.from('0123456789abcdef', 'hex');
    const at = bytes.indexOf(original);
    expect(at).toBeGreaterThan(0);
    expect(bytes.indexOf(original, at + 1)).toBe(-1);
    bytes[at + 7] = 0xee;
    const result = judged('link-rxe-fetch-add', bytes);
    expect(result.verdict).toBe('fail');
    const byField = Object.fromEntries(result.differences.map((d) => [d.field, d.kernel]));
    expect(byField['wire.resp1.atomicacketh']).toBe('0x0123456789abcdee');
    expect(byField['wire.resp1.icrc']).toMatch(/^bad stored=0x[0-9a-f]+ computed=0x[0-9a-f]+$/);
    expect(Object.keys(byField).sort()).toEqual(['wire.resp1.atomicacketh', 'wire.resp1.icrc']);
  });

  it('a response missing from the capture shows as fewer responses and absent fields', () => {
    const result = judged('link-rxe-atomic-pair', pcap('link-rxe-atomic-pair'));
    expect(result.kernel?.fields['wire.responses']).toBe('2');
    // Cut the file after its third record: the second response is gone.
    const bytes = pcap('link-rxe-atomic-pair');
    const cut = firstRecords(bytes, 3);
    const partial = judged('link-rxe-atomic-pair', cut);
    expect(partial.verdict).toBe('fail');
    const fields = partial.differences.map((d) => d.field);
    expect(fields).toContain('wire.responses');
    expect(fields).toContain('wire.resp2.atomicacketh');
  });
});

/** The pcap's header and its first `n` records (classic pcap, little-endian). */
function firstRecords(bytes: Buffer, n: number): Buffer {
  let at = 24;
  for (let i = 0; i < n; i++) at += 16 + bytes.readUInt32LE(at + 8);
  return bytes.subarray(0, at);
}
