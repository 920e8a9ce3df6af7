import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RunEnvironment } from '../../../src/interop/environment.js';
import { decodeLinkCapture } from '../../../src/interop/link/observed.js';
import { expectedLinkOutcome } from '../../../src/interop/link/predict.js';
import type { LinkObservation } from '../../../src/interop/link/protocol.js';
import { judgeLinkScenario } from '../../../src/interop/link/run.js';
import { linkScenarioById } from '../../../src/interop/link/scenarios.js';
import { directedId, linkSide, pairText } from '../../../src/interop/link/sides.js';
import { renderMarkdown } from '../../../src/interop/report.js';
import { junitXml, resultsDocument } from '../../../src/interop/report-files.js';
import { renderReportHtml, resultsEntryOf } from '../../../src/interop/report-html/index.js';
import { judge } from '../../../src/interop/runner.js';
import type { Outcome, Scenario } from '../../../src/interop/scenario.js';
import type { BehaviourRecord, Environment } from '../../../src/judge/record.js';

// Mixed link pairs without a boot: the sides a result names, records looked up with the
// environment of the side they belong to, the engine's stock siw responder, and the pair
// in every report file. The guest runs are test/host/interop/link-pairs.test.ts.

const FIXTURES = join(process.cwd(), 'test', 'fixtures', 'link');
const A = JSON.parse(readFileSync(join(FIXTURES, 'environment.json'), 'utf8')) as RunEnvironment;
/** Guest B on another line, its siw0 on the patched module. */
const B: RunEnvironment = {
  ...A,
  kernel: '7.3.4+deb13-amd64',
  rdmaCore: '56.1',
  devices: A.devices.map((d) => (d.name === 'siw0' ? { ...d, provider: 'siw+rfc7306' } : d)),
};
const observations = JSON.parse(
  readFileSync(join(FIXTURES, 'observations.json'), 'utf8'),
) as LinkObservation[];

function scenario(id: string): Scenario {
  const found = linkScenarioById(id);
  if (found === undefined) throw new Error(`no link scenario ${id}`);
  return found;
}

describe('the sides of a link pair', () => {
  it('a side is its guest, kernel, rdma-core and the provider its guest saw', () => {
    expect(linkSide('B', B, 'siw0')).toEqual({
      guest: 'B',
      provider: 'siw+rfc7306',
      kernel: '7.3.4+deb13-amd64',
      rdmaCore: '56.1',
    });
    expect(linkSide('A', A, 'rxe0').provider).toBe('rxe');
    expect(directedId('link-rxe-read', 'A')).toBe('link-rxe-read');
    expect(directedId('link-rxe-read', 'B')).toBe('link-rxe-read--b-to-a');
  });

  it('a result on recorded frames names its pair, requester A first', () => {
    const id = 'link-rxe-fetch-add';
    const result = judgeLinkScenario(
      scenario(id),
      observations.find((o) => o.id === id),
      decodeLinkCapture(readFileSync(join(FIXTURES, `${id}.pcap`))),
      A,
      0,
      { environments: { A, B }, requester: 'A' },
    );
    expect(result.verdict).toBe('match');
    expect(result.scenario.id).toBe(id);
    expect(result.pair?.requester).toMatchObject({ guest: 'A', kernel: '6.1.0-56-amd64' });
    expect(result.pair?.responder).toMatchObject({ guest: 'B', kernel: '7.3.4+deb13-amd64' });
    expect(
      pairText(
        result.pair ?? { requester: linkSide('A', A, 'rxe0'), responder: linkSide('B', B, 'rxe0') },
      ),
    ).toBe(
      'requester A: 6.1.0-56-amd64, rdma-core 44.0-2, rxe; responder B: 7.3.4+deb13-amd64, rdma-core 56.1, rxe',
    );
  });

  it('with B as the requester the result carries the direction in its id and row name', () => {
    const id = 'link-rxe-read';
    const result = judgeLinkScenario(scenario(id), undefined, undefined, B, 0, {
      environments: { A, B },
      requester: 'B',
    });
    expect(result.scenario.id).toBe('link-rxe-read--b-to-a');
    expect(result.scenario.name).toBe('link-read--b-to-a');
    expect(result.pair?.requester.guest).toBe('B');
    expect(result.pair?.responder.guest).toBe('A');
    expect(result.verdict).toBe('not-run');
  });
});

describe('recorded behaviour keyed by the side it belongs to', () => {
  const s = scenario('link-siw-fetch-add');
  const engine: Outcome = { fields: { wire: 'requester> atomic-request' } };
  const device: Outcome = { fields: { wire: 'responder> terminate' } };
  const record: BehaviourRecord = {
    id: 'test-responder-terminates',
    class: 'allowed',
    rule: 'ibv_post_send(3)',
    provider: 'siw',
    role: 'responder',
    kernel: { from: '6.1' },
    scope: ['link-siw-fetch-add'],
    observed: { wire: 'responder> terminate' },
    why: 'test record',
  };
  const patched: Environment = {
    provider: 'siw+rfc7306',
    kernel: '6.1.0-56-amd64',
    rdmaCore: '56.1',
  };
  const stock: Environment = { provider: 'siw', kernel: '7.3.4+deb13-amd64', rdmaCore: '56.1' };

  it("a responder's record explains the difference when the responder is that provider", () => {
    const judged = judge(s, engine, device, patched, [record], stock);
    expect(judged.verdict).toBe('known');
    expect(judged.findings.map((k) => k.id)).toEqual(['test-responder-terminates']);
  });

  it('... and not when only the requester is (the patched siw responds)', () => {
    const judged = judge(s, engine, device, stock, [record], patched);
    expect(judged.findings).toEqual([]);
    expect(judged.verdict).toBe('fail');
  });

  it('a record without a role is the requester side', () => {
    const { role: _, ...requesterRecord } = record;
    expect(judge(s, engine, device, stock, [requesterRecord], patched).verdict).toBe('known');
    expect(judge(s, engine, device, patched, [requesterRecord], stock).findings).toEqual([]);
  });
});

describe("the engine's stock siw responder (RFC 7306 §1.1)", () => {
  it('answers an Atomic Request with Terminate RDMAP / Remote Operation / Unexpected OpCode', () => {
    const s = scenario('link-siw-fetch-add');
    const fields = expectedLinkOutcome({
      ...s,
      responderExtensions: { atomics: false, immediateData: false },
    }).fields;
    expect(fields.wire).toMatch(
      /^requester> atomic-request qn=1 msn=1 mo=0 L\nresponder> terminate qn=2 msn=1 mo=0 L layer=0 type=2 code=0x06 /,
    );
    expect(fields['requester.wc1.status']).toBe('REM_INV_REQ_ERR');
    expect(fields['requester.wc1.fetched']).toBeUndefined();
    expect(fields['mem[8]']).toBe('0x0123456789abcdef');
    // The patched responder executes it.
    expect(expectedLinkOutcome(s).fields['mem[8]']).toBe('0x12345678abcdf011');
  });
});

describe('the pair in every report file', () => {
  const id = 'link-rxe-fetch-add';
  const result = judgeLinkScenario(
    scenario(id),
    observations.find((o) => o.id === id),
    decodeLinkCapture(readFileSync(join(FIXTURES, `${id}.pcap`))),
    A,
    0,
    { environments: { A, B }, requester: 'A' },
  );

  it('results.json: both environments, and each result its sides', () => {
    const doc = resultsDocument([result], A, false, { A, B }) as {
      pair: Record<string, RunEnvironment>;
      scenarios: { id: string; pair: { requester: { guest: string; kernel: string } } }[];
    };
    expect(doc.pair.B?.kernel).toBe('7.3.4+deb13-amd64');
    expect(doc.scenarios[0]?.pair.requester).toMatchObject({
      guest: 'A',
      kernel: '6.1.0-56-amd64',
    });
  });

  it('report.md: the guests, and a row per result with requester and responder', () => {
    const md = renderMarkdown([result], A, false, { A, B });
    expect(md).toContain('| B | 7.3.4+deb13-amd64 | 56.1 | rxe0: rxe, siw0: siw+rfc7306 |');
    expect(md).toContain(
      '| link-rxe-fetch-add | A: 6.1.0-56-amd64, rdma-core 44.0-2, rxe | B: 7.3.4+deb13-amd64, rdma-core 56.1, rxe | match |',
    );
  });

  it("report.html: each result's summary names its pair", () => {
    const page = renderReportHtml([
      {
        line: A.kernel,
        results: resultsEntryOf(resultsDocument([result], A, false, { A, B })),
        pcap: () => undefined,
        memoryBefore: () => undefined,
      },
    ]);
    expect(page).toContain(
      'rxe0 ibv_post_send · requester A: 6.1.0-56-amd64, rdma-core 44.0-2, rxe; responder B: 7.3.4+deb13-amd64, rdma-core 56.1, rxe',
    );
  });

  it('junit.xml: each test case names its requester and responder', () => {
    const xml = junitXml([result], false);
    expect(xml).toContain(
      '<property name="requester" value="A: 6.1.0-56-amd64, rdma-core 44.0-2, rxe"/>',
    );
    expect(xml).toContain(
      '<property name="responder" value="B: 7.3.4+deb13-amd64, rdma-core 56.1, rxe"/>',
    );
  });
});

describe('a recorded mixed siw pair, judged again (patched 6.1 with stock 7.3, both ways)', () => {
  interface Recorded {
    readonly id: string;
    readonly pair: { readonly requester: Environment; readonly responder: Environment };
    readonly engine: Record<string, string>;
    readonly device_fields: Record<string, string>;
  }
  const recorded = (
    JSON.parse(readFileSync(join(FIXTURES, 'pairs-siw.json'), 'utf8')) as {
      scenarios: Recorded[];
    }
  ).scenarios;
  const rejudge = (r: Recorded) =>
    judge(
      scenario(r.id.replace(/--b-to-a$/, '')),
      { fields: r.engine },
      { fields: r.device_fields },
      r.pair.requester,
      undefined,
      r.pair.responder,
    );

  it('every difference is recorded, on the side it belongs to, but one open failure', () => {
    const verdicts = Object.fromEntries(recorded.map((r) => [r.id, rejudge(r).verdict]));
    expect(recorded).toHaveLength(16);
    // In this recording only: the stock 7.3 requester's Read Request got no Read Response
    // from the patched 6.1 responder. The likely cause (docs/interop.md, mixed pairs): a
    // request that reached siw between its MPA Reply and siw_qp_socket_assoc() in
    // siw_accept() is never read; the link harness now waits for the responder's accept.
    expect(Object.entries(verdicts).filter(([, v]) => v !== 'match' && v !== 'known')).toEqual([
      ['link-siw-read--b-to-a', 'fail'],
    ]);
  });

  it("the stock responder's Terminate and the patched requester's flush, keyed by side", () => {
    const fetchAdd = recorded.find((r) => r.id === 'link-siw-fetch-add');
    if (fetchAdd === undefined) throw new Error('no link-siw-fetch-add');
    expect(fetchAdd.pair.requester.provider).toBe('siw+rfc7306');
    expect(fetchAdd.pair.responder.provider).toBe('siw');
    const judged = rejudge(fetchAdd);
    expect(judged.verdict).toBe('known');
    expect(judged.findings.map((k) => [k.id, k.role ?? 'requester'])).toEqual([
      ['siw-unexpected-opcode-terminate-layout', 'responder'],
      ['siw-peer-terminate-flushes-requester', 'requester'],
    ]);
    // Swap the sides: the records do not hold (a patched responder executes the atomic).
    const swapped = judge(
      scenario('link-siw-fetch-add'),
      { fields: fetchAdd.engine },
      { fields: fetchAdd.device_fields },
      fetchAdd.pair.responder,
      undefined,
      fetchAdd.pair.requester,
    );
    expect(swapped.findings).toEqual([]);
    expect(swapped.verdict).toBe('fail');
  });

  it("a stock pair (the default link run): the refused posts stay recorded against the engine's stock responder", () => {
    const stock: Environment = { provider: 'siw', kernel: '6.1.0-56-amd64', rdmaCore: '44.0' };
    for (const r of recorded.filter(
      (x) => /--b-to-a$/.test(x.id) && x.device_fields.post1 === 'EINVAL',
    )) {
      const s = scenario(r.id.replace(/--b-to-a$/, ''));
      const engine = expectedLinkOutcome({
        ...s,
        responderExtensions: { atomics: false, immediateData: false },
      });
      const judged = judge(s, engine, { fields: r.device_fields }, stock, undefined, stock);
      expect([r.id, judged.verdict, judged.stale]).toEqual([r.id, 'known', []]);
    }
  });

  it('the other way round, the stock requester refuses the post (libsiw), as on one guest', () => {
    const reverse = recorded.find((r) => r.id === 'link-siw-fetch-add--b-to-a');
    if (reverse === undefined) throw new Error('no link-siw-fetch-add--b-to-a');
    expect(reverse.device_fields.post1).toBe('EINVAL');
    expect(rejudge(reverse).findings.map((k) => k.id)).toEqual(['libsiw-no-atomics']);
  });
});
