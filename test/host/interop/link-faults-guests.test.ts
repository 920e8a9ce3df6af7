import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IN_WINDOW } from '../../../src/interop/link/read-window.js';
import type { LinkFaultReport } from '../../../src/interop/link/run.js';

// The faulty wire on real guests (docs/faulty-wire.md), through the CLI as a user runs
// it: two guest pairs one after the other, each behind the seeded fault relay.
// - drop 2 %, duplicate 1 %: 1000 FetchAdd(+1) from one QP and 4 x 250 from 4 QPs on
//   rxe stay exactly-once (every fetched value distinct, the final word exact);
// - the same on siw, with the patched (RFC 7306) siw on both guests: exactly-once through
//   TCP, which repeats what the relay drops and discards what it duplicates before MPA;
// - drop everything (ARP and the control channel are spared): RETRY_EXC_ERR after the QP's
//   retry_cnt, at (1 + retry_cnt) transport timers;
// - 1 MiB of RDMA Writes with immediate on both lossy pairs (bytes intact, every immediate
//   once, in order), and Reads and FetchAdds mixed in one post on both (values, each Read
//   within its window: read-window.ts, and the ordering checker);
// - the MPA CRC case on the patched siw: a byte of a Write's data changed past TCP, the
//   CRC negotiated by the relay; B's Terminate (LLP / MPA / CRC Error), flushes, and the
//   two recorded siw departures (the bad byte placed before the CRC check; the active
//   request LOC_QP_OP_ERR).
// Four guest pairs under TCG (boot included; docs/figures.md has the measured times).

const CLI = join(process.cwd(), 'dist', 'cli', 'main.js');

interface ScenarioEntry {
  readonly id: string;
  readonly verdict: string;
  readonly device_fields: Record<string, string> | null;
  readonly differences: readonly { field: string; explainedBy: string | null }[];
  readonly error?: string;
}

interface Run {
  dir: string;
  status: number | null;
  output: string;
  scenarios: ScenarioEntry[];
  faults: LinkFaultReport | undefined;
}

async function runLink(faults: string, more: readonly string[] = []): Promise<Run> {
  const dir = mkdtempSync(join(tmpdir(), 'rdma-interop-faults-'));
  let output = '';
  const child = spawn(
    process.execPath,
    [CLI, 'run', '--link', ...more, '--faults', faults, '--report', dir],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  child.stdout.on('data', (c: Buffer) => {
    output += c.toString();
  });
  child.stderr.on('data', (c: Buffer) => {
    output += c.toString();
  });
  const status = await new Promise<number | null>((resolve) => child.on('close', resolve));
  const read = <T>(name: string): T | undefined =>
    existsSync(join(dir, name))
      ? (JSON.parse(readFileSync(join(dir, name), 'utf8')) as T)
      : undefined;
  return {
    dir,
    status,
    output,
    scenarios: read<{ scenarios: ScenarioEntry[] }>('results.json')?.scenarios ?? [],
    faults: read<LinkFaultReport>('faults.json'),
  };
}

let lossy: Run | undefined;
let lost: Run | undefined;
let siw: Run | undefined;
let crc: Run | undefined;
const PATCHED_SIW = ['--device', 'siw0', '--siw', 'rfc7306'];

beforeAll(async () => {
  lossy = await runLink('drop=0.02,dup=0.01,seed=7');
  lost = await runLink('drop=1,seed=1');
  siw = await runLink('drop=0.02,dup=0.01,seed=7', [
    ...PATCHED_SIW,
    '--scenario',
    'link-siw-{fetch-add-x1000,fetch-add-4qp,read-atomic-mix,write-imm-stream}',
  ]);
  crc = await runLink('corrupt-payload=0.02,mpa-crc=1,seed=7', PATCHED_SIW);
}, 1_800_000);

afterAll(() => {
  for (const run of [lossy, lost, siw, crc])
    if (run !== undefined) rmSync(run.dir, { recursive: true, force: true });
});

function entry(run: Run | undefined, id: string): ScenarioEntry {
  const found = run?.scenarios.find((s) => s.id === id);
  if (found === undefined)
    throw new Error(`${id} missing from results.json:\n${run?.output ?? ''}`);
  return found;
}

/**
 * The mixed row: the first and last FetchAdd exact, the first Read within its window (a
 * repeated Read may see later FetchAdds: read-window.ts), the last Read and the word
 * exact, and the ordering checker's verdict.
 */
const MIXED = {
  'requester.wc1.fetched': '0x0123456789abcdef',
  'requester.wc2.fetched': IN_WINDOW,
  'requester.wc15.fetched': '0x789abcdf789abcdd',
  'requester.wc16.fetched': '0x89abcdf09abcdeff',
  'mem[8]': '0x89abcdf09abcdeff',
  ordering: 'ok',
};

/** 16 x 64 KiB Writes with immediate, all through. */
const WHOLE_STREAM = {
  'stream.post': 'ok',
  'stream.requester': 'every one SUCCESS (16)',
  'stream.responder': 'every one SUCCESS (16)',
  'stream.immediates': 'once each, in order',
  'stream.memory': 'every byte as sent',
};

describe('run --link --faults: the seeded fault relay between two guests', () => {
  it('drop 2 %, dup 1 %: every rxe FetchAdd exactly once, from one QP and from four', () => {
    const failing = (lossy?.scenarios ?? [])
      .filter((s) => s.verdict !== 'match')
      .map((s) => ({ id: s.id, verdict: s.verdict, error: s.error, differences: s.differences }));
    expect(failing).toEqual([]);
    expect(lossy?.status).toBe(0);
    const one = entry(lossy, 'link-rxe-fetch-add-x1000').device_fields ?? {};
    expect(one['hammer1.succeeded']).toBe('1000');
    expect(one['hammer1.distinct']).toBe('1000');
    expect(one['hammer1.sequence']).toBe('every intermediate sum once');
    expect(one['mem[8]']).toBe('0x0123456789abd1d7');
    const four = entry(lossy, 'link-rxe-fetch-add-4qp').device_fields ?? {};
    expect(four['hammer1.distinct']).toBe('1000');
    expect(four['mem[8]']).toBe('0x0123456789abd1d7');
  });

  it('drop 2 %, dup 1 % on rxe: Reads and FetchAdds mixed keep their values and order; the write stream arrives whole', () => {
    const mix = entry(lossy, 'link-rxe-read-atomic-mix').device_fields ?? {};
    expect(mix).toMatchObject(MIXED);
    const stream = entry(lossy, 'link-rxe-write-imm-stream').device_fields ?? {};
    expect(stream).toEqual(WHOLE_STREAM);
  });

  it('counts every fault it applied, and the transports repeated what was lost', () => {
    const faults = lossy?.faults;
    if (faults === undefined) throw new Error(`no faults.json:\n${lossy?.output ?? ''}`);
    expect(faults.spec).toMatchObject({ drop: 0.02, dup: 0.01, seed: 7 });
    const rxe = faults.links.rxe0;
    if (rxe === undefined) throw new Error('no counts for rxe0');
    for (const c of [rxe.aToB, rxe.bToA]) {
      expect(c.dropped).toBeGreaterThan(0);
      expect(c.duplicated).toBeGreaterThan(0);
      expect(c.forwarded).toBe(c.frames - c.dropped + c.duplicated);
      expect(c.corrupted + c.corruptedPayload + c.reordered).toBe(0);
    }
    const retransmitted = faults.scenarios.reduce((n, s) => n + s.sideA.repeatedRequests, 0);
    expect(retransmitted).toBeGreaterThan(0);
    // No duplicate Atomic the responder saw was executed a second time.
    expect(faults.scenarios.map((s) => [s.id, s.sideB.answeredDifferently])).toEqual(
      faults.scenarios.map((s) => [s.id, 0]),
    );
    for (const side of ['a', 'b'])
      expect(existsSync(join(lossy?.dir ?? '', 'captures', `rxe0.${side}.pcap`))).toBe(true);
    expect(lossy?.output).toMatch(/rxe0 A->B: \d+ frames, \d+ dropped, \d+ duplicated/);
  });

  it('a wire that loses everything: RETRY_EXC_ERR after retry_cnt, on time, nothing placed', () => {
    const exhausted = entry(lost, 'link-rxe-retry-exhausted');
    expect({ verdict: exhausted.verdict, error: exhausted.error }).toEqual({
      verdict: 'match',
      error: undefined,
    });
    expect(exhausted.device_fields).toMatchObject({
      'requester.wc1.status': 'RETRY_EXC_ERR',
      'requester.wc1.after': '(1 + retry_cnt) x timeout',
      'mem[8]': '0x0123456789abcdef',
    });
    const rxe = lost?.faults?.links.rxe0;
    expect(rxe?.aToB.dropped).toBe((rxe?.aToB.frames ?? 0) - (rxe?.aToB.spared ?? 0));
    // The request went out 1 + retry_cnt (3) times, all at guest A's side of the relay.
    const scenario = lost?.faults?.scenarios.find((s) => s.id === 'link-rxe-retry-exhausted');
    expect(scenario?.sideA).toMatchObject({ requests: 4, repeatedRequests: 3, responses: 0 });
    expect(scenario?.sideB.requests).toBe(0);
  });

  it('drop 2 %, dup 1 % on siw (RFC 7306 on both guests): every FetchAdd exactly once through TCP', () => {
    expect(siw?.scenarios.map((s) => [s.id, s.verdict, s.error])).toEqual([
      ['link-siw-fetch-add-x1000', 'match', undefined],
      ['link-siw-fetch-add-4qp', 'match', undefined],
      ['link-siw-read-atomic-mix', 'match', undefined],
      ['link-siw-write-imm-stream', 'match', undefined],
    ]);
    expect(entry(siw, 'link-siw-read-atomic-mix').device_fields).toMatchObject(MIXED);
    expect(entry(siw, 'link-siw-write-imm-stream').device_fields).toEqual({
      ...WHOLE_STREAM,
      'stream.terminate': 'none',
    });
    // TCP repeated what the relay dropped: retransmitted segments at A's side of the relay.
    const tcp = (siw?.faults?.scenarios ?? []).filter((s) => s.transport === 'tcp');
    expect(tcp.map((s) => s.id)).toContain('link-siw-write-imm-stream');
    expect(tcp.reduce((n, s) => n + s.sideA.repeatedRequests, 0)).toBeGreaterThan(0);
    expect(siw?.status).toBe(0);
    for (const id of ['link-siw-fetch-add-x1000', 'link-siw-fetch-add-4qp']) {
      const fields = entry(siw, id).device_fields ?? {};
      expect(fields['hammer1.succeeded']).toBe('1000');
      expect(fields['hammer1.distinct']).toBe('1000');
      expect(fields['hammer1.sequence']).toBe('every intermediate sum once');
      expect(fields['mem[8]']).toBe('0x0123456789abd1d7');
    }
    // The relay did lose and repeat segments on siw's link (TCP hid them from MPA).
    const link = siw?.faults?.links.siw0;
    for (const c of [link?.aToB, link?.bToA]) {
      expect(c?.dropped).toBeGreaterThan(0);
      expect(c?.duplicated).toBeGreaterThan(0);
    }
  });

  it('the MPA CRC case on siw: the CRC Terminate from B, flushes after, the bad byte recorded', () => {
    const result = entry(crc, 'link-siw-mpa-crc');
    expect({ verdict: result.verdict, error: result.error }).toEqual({
      verdict: 'known',
      error: undefined,
    });
    expect(crc?.status).toBe(0);
    const fields = result.device_fields ?? {};
    expect(fields).toMatchObject({
      'stream.post': 'ok',
      'stream.responder': 'SUCCESS, then WR_FLUSH_ERR',
      'stream.immediates': 'once each, in order',
      'stream.terminate': 'B: llp.mpa.crc-error',
    });
    // siw placed the changed byte before it read the trailer (siw-crc-failed-write-placed).
    expect(fields['stream.memory']).toMatch(/^1 byte\(s\) wrong, the first at \d+$/);
    expect(result.differences.map((d) => [d.field, d.explainedBy])).toEqual([
      ['stream.memory', 'siw-crc-failed-write-placed'],
      ...(fields['stream.requester'] === 'SUCCESS, then WR_FLUSH_ERR'
        ? []
        : [['stream.requester', 'siw-dropped-stream-active-request-loc-qp-op-err']]),
    ]);
    const link = crc?.faults?.links.siw0;
    expect(link?.aToB.mpaCrcRequested).toBe(1);
    expect(link?.aToB.corruptedPayload).toBeGreaterThan(0);
    expect((link?.aToB.dropped ?? 0) + (link?.bToA.dropped ?? 0)).toBe(0);
  });
});
