import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LinkType } from '../../../src/codec/pcap/linktype.js';
import { encodePcap } from '../../../src/codec/pcap/pcap.js';
import { buildRoceFrame } from '../../../src/codec/roce/frame.js';
import { BthOpcode } from '../../../src/codec/roce/opcodes.js';
import { compareReports, reportRunOf } from '../../../src/interop/comparison/index.js';
import { expectedLinkOutcome } from '../../../src/interop/link/predict.js';
import { linkScenarioById } from '../../../src/interop/link/scenarios.js';
import {
  memoryBeforeById,
  ReportHtmlInputError,
  type RunInput,
  renderReportHtml,
  runFromDirectory,
} from '../../../src/interop/report-html/index.js';
import { specHtml } from '../../../src/interop/report-html/page.js';

// A real 6.1 run's results.json cut to three scenarios (rxe-qp-no-atomic; siw-read, whose
// capture timestamps the ladder shows; siw-misaligned, whose wire differs as recorded),
// with their two pcaps. The browser test (test/browser/) checks the page in Chromium.
const FIXTURE = join(import.meta.dirname, '../../fixtures/report-html');

/** The `<template>` of one result: the ladder and tables rendered when it is opened. */
function templateOf(page: string, anchor: string): string {
  const at = page.indexOf(`id="${anchor}"`);
  const start = page.indexOf('<template>', at);
  return page.slice(start, page.indexOf('</template>', start));
}

describe('report.html from a results.json', () => {
  const run = runFromDirectory(FIXTURE, '6.1');
  const page = renderReportHtml([run]);

  it('is one page that loads nothing: no external script, style, font or image', () => {
    expect(page.startsWith('<!DOCTYPE html>')).toBe(true);
    expect(page).not.toMatch(/<script[^>]+src=|<link\b|<img\b|@import|url\(/);
    // The only addresses are links to the RFCs a recorded behaviour cites.
    const addresses = [...page.matchAll(/https?:\/\/[^"\s)]+/g)].map((m) => m[0]);
    expect(addresses.length).toBeGreaterThan(0);
    for (const a of addresses)
      expect(a).toMatch(
        /^https:\/\/www\.rfc-editor\.org\/rfc\/rfc\d{4}(#section-[\d.]+)?$|^http:\/\/www\.w3\.org\/2000\/svg$/,
      );
  });

  it('has the matrix (a cell per scenario and column) and a result per scenario', () => {
    expect(page.match(/<td class="cell"[^>]*><a class="v v-/g)?.length).toBe(3);
    expect(page).toContain(
      '<th data-column data-device="siw0" data-kernel="6.1">siw0 ibv_post_send</th>',
    );
    expect(page.match(/<details class="result"/g)?.length).toBe(3);
    expect(page.match(/<template><svg class="ladder"/g)?.length).toBe(3);
  });

  it('times the captured packets from the pcap', () => {
    const read = templateOf(page, 'r-6_1-siw-read');
    expect([...read.matchAll(/class="time"[^>]*>([^<]*)/g)].map((m) => m[1])).toEqual([
      '+0.0 µs',
      '+1.157 ms',
    ]);
  });

  it('draws a message one side lacks on its own row, coloured with its recorded reason', () => {
    const ladder = templateOf(page, 'r-6_1-siw-misaligned');
    // The engine's atomic-request and Terminate are not on the wire; siw's Write is not predicted.
    expect(ladder.match(/not on the wire/g)?.length).toBe(2);
    expect(ladder.match(/not predicted/g)?.length).toBe(1);
    const write = /<g class="pk ([^"]*)"><title>(rdma-write [^<]*)<\/title>/.exec(ladder);
    expect(write?.[1]).toBe('d-known');
    expect(write?.[2]).toContain('libsiw-refused-atomic-keeps-rts: libsiw refused');
    // The reason's spec is linked to the RFC section.
    expect(ladder).toContain('href="https://www.rfc-editor.org/rfc/rfc7306#section-8"');
  });

  it('shows the memory words before the program and after it on both sides', () => {
    const ladder = templateOf(page, 'r-6_1-siw-misaligned');
    expect(ladder).toContain(
      '<tr><td>mem[12]</td><td>0x0123456789abcdef</td><td>0x0123456789abcdef</td><td class="" title="">0x0123456789abcdef</td></tr>',
    );
    expect(memoryBeforeById('siw-misaligned')?.['mem[12]']).toBe('0x0123456789abcdef');
    expect(memoryBeforeById('no-such-scenario')).toBeUndefined();
  });

  it('draws RoCEv2 packets from their fields and marks the one field that differs', () => {
    const scenario = linkScenarioById('link-rxe-atomic-pair');
    if (scenario === undefined) throw new Error('no link-rxe-atomic-pair');
    const engine = expectedLinkOutcome(scenario).fields;
    const device = { ...engine, 'wire.req2.psn': '0x000001' };
    const roce: RunInput = {
      ...run,
      results: {
        ...run.results,
        scenarios: [
          {
            id: scenario.id,
            name: scenario.name,
            family: scenario.family,
            title: scenario.title,
            device: 'rxe0',
            postApi: 'ibv_post_send',
            verdict: 'fail',
            seconds: 1,
            engine,
            device_fields: device,
            differences: [
              { field: 'wire.req2.psn', engine: '0x12a5c4', device: '0x000001', explainedBy: null },
            ],
            stale: [],
          },
        ],
      },
    };
    const ladder = templateOf(renderReportHtml([roce]), 'r-6_1-link-rxe-atomic-pair');
    // FetchAdd, its ACK, CmpSwap, its ACK, each row engine then wire; only the CmpSwap's
    // PSN is red, on both sides.
    expect(ladder.match(/<g class="pk/g)?.length).toBe(8);
    expect(
      [...ladder.matchAll(/<tspan class="seq ([^"]*)">([^<]*)/g)].map((m) => `${m[2]} ${m[1]}`),
    ).toEqual([
      'psn&#61;0x12a5c3 ',
      'psn&#61;0x12a5c3 ',
      'psn&#61;0x12a5c3 ',
      'psn&#61;0x12a5c3 ',
      'psn&#61;0x12a5c4 d-unrecorded',
      'psn&#61;0x000001 d-unrecorded',
      'psn&#61;0x12a5c4 ',
      'psn&#61;0x12a5c4 ',
    ]);
    expect(ladder).toContain('atomiceth:va&#61;remote+8');
  });

  it('orders RoCEv2 packets by their capture time and times them', () => {
    const scenario = linkScenarioById('link-rxe-atomic-pair');
    if (scenario === undefined) throw new Error('no link-rxe-atomic-pair');
    const engine = expectedLinkOutcome(scenario).fields;
    // The wire as rxe sends it: both requests, then both acknowledgements (the fields
    // number requests and responses apart, so only the capture gives this order).
    const atomic = { virtualAddress: 0x1000n, rKey: 0x1234, swapOrAddData: 1n, compareData: 0n };
    const ack = (msn: number) => ({
      AETH: { syndrome: 0, msn },
      AtomicAckETH: { originalRemoteData: 0x0123456789abcdefn },
    });
    const at = { sourceIp: '10.0.0.1', destinationIp: '10.0.0.2' };
    const back = { sourceIp: '10.0.0.2', destinationIp: '10.0.0.1' };
    const frames = [
      buildRoceFrame(at, {
        bth: { opcode: BthOpcode.RC_FETCH_ADD, destinationQp: 17, psn: 0x12a5c3 },
        headers: { AtomicETH: atomic },
      }),
      buildRoceFrame(at, {
        bth: { opcode: BthOpcode.RC_COMPARE_SWAP, destinationQp: 17, psn: 0x12a5c4 },
        headers: { AtomicETH: atomic },
      }),
      buildRoceFrame(back, {
        bth: { opcode: BthOpcode.RC_ATOMIC_ACKNOWLEDGE, destinationQp: 18, psn: 0x12a5c3 },
        headers: ack(1),
      }),
      buildRoceFrame(back, {
        bth: { opcode: BthOpcode.RC_ATOMIC_ACKNOWLEDGE, destinationQp: 18, psn: 0x12a5c4 },
        headers: ack(2),
      }),
    ];
    const start = 1_700_000_000_000_000_000n;
    const pcap = encodePcap(
      { linkType: LinkType.ETHERNET },
      frames.map((data, i) => ({
        timestampNs: start + BigInt([0, 12_500, 48_000, 1_250_000][i] ?? 0),
        data,
      })),
    );
    const roce: RunInput = {
      ...run,
      pcap: (path) => (path === 'pcap/link-rxe-atomic-pair.pcap' ? pcap : undefined),
      results: {
        ...run.results,
        scenarios: [
          {
            id: scenario.id,
            name: scenario.name,
            family: scenario.family,
            title: scenario.title,
            device: 'rxe0',
            postApi: 'ibv_post_send',
            verdict: 'match',
            seconds: 1,
            engine,
            device_fields: engine,
            differences: [],
            stale: [],
            pcap: 'pcap/link-rxe-atomic-pair.pcap',
          },
        ],
      },
    };
    const ladder = templateOf(renderReportHtml([roce]), 'r-6_1-link-rxe-atomic-pair');
    const heads = [
      ...ladder.matchAll(
        /<text class="op"[^>]*><tspan class="">([A-Z_]+)<\/tspan> <tspan class="seq ">psn&#61;(0x[0-9a-f]+)/g,
      ),
    ];
    // Each row: the engine's packet, then the captured one.
    expect(heads.filter((_, i) => i % 2 === 1).map((m) => `${m[1]} ${m[2]}`)).toEqual([
      'RC_FETCH_ADD 0x12a5c3',
      'RC_COMPARE_SWAP 0x12a5c4',
      'RC_ATOMIC_ACKNOWLEDGE 0x12a5c3',
      'RC_ATOMIC_ACKNOWLEDGE 0x12a5c4',
    ]);
    expect([...ladder.matchAll(/class="time"[^>]*>([^<]*)/g)].map((m) => m[1])).toEqual([
      '+0.0 µs',
      '+12.5 µs',
      '+48.0 µs',
      '+1.250 ms',
    ]);
  });

  it('shows what the device noted in its result, and nothing when it noted nothing', () => {
    const noted: RunInput = {
      ...run,
      results: {
        ...run.results,
        scenarios: run.results.scenarios.map((s) =>
          s.id === 'siw-read' ? { ...s, device_note: 'later words: wr4 read <0x1>' } : s,
        ),
      },
    };
    const html = renderReportHtml([noted]);
    expect(templateOf(html, 'r-6_1-siw-read')).toContain(
      '<p class="why note">siw0 noted: later words: wr4 read &#60;0x1&#62;</p><svg class="ladder"',
    );
    expect(html.match(/class="why note"/g)?.length).toBe(1);
    expect(page).not.toContain('class="why note"');
  });

  it('lists the wire probes, what the engine and siw answered', () => {
    const probes = [
      { id: 'siw-probe-x', verdict: 'known', engine: 'terminate layer=0', device: '' },
    ];
    const html = renderReportHtml([{ ...run, results: { ...run.results, probes } }]);
    expect(html).toContain(
      '<tr><td>siw-probe-x</td><td><span class="v v-known">known</span></td><td>terminate layer&#61;0</td><td>(nothing)</td></tr>',
    );
    expect(page).not.toContain('<h2>Wire probes</h2>');
  });

  it('escapes what it shows', () => {
    const evil: RunInput = {
      ...run,
      results: {
        ...run.results,
        scenarios: run.results.scenarios.map((s) => ({ ...s, title: '<script>alert(1)</script>' })),
      },
    };
    const html = renderReportHtml([evil]);
    expect(html).not.toContain('<script>alert(1)');
    expect(html).toContain('&#60;script&#62;alert(1)&#60;/script&#62;');
  });

  it('links each RFC section of a citation, a bare § to the RFC before it', () => {
    expect(specHtml('RFC 7306 §8, RFC 5040 §7, §4.8; IBTA 10.3.1')).toBe(
      '<a href="https://www.rfc-editor.org/rfc/rfc7306#section-8" target="_blank" rel="noopener">RFC 7306 §8</a>, ' +
        '<a href="https://www.rfc-editor.org/rfc/rfc5040#section-7" target="_blank" rel="noopener">RFC 5040 §7</a>, ' +
        '<a href="https://www.rfc-editor.org/rfc/rfc5040#section-4.8" target="_blank" rel="noopener">§4.8</a>; IBTA 10.3.1',
    );
  });

  it('puts several kernel lines in one matrix with a kernel column each, and the changed values', () => {
    const document = JSON.parse(readFileSync(join(FIXTURE, 'results.json'), 'utf8')) as {
      scenarios: { verdict: string }[];
    };
    const dir = mkdtempSync(join(tmpdir(), 'report-html-'));
    try {
      const newer = {
        ...document,
        scenarios: document.scenarios.map((s) => ({ ...s, verdict: 'match' })),
      };
      writeFileSync(join(dir, 'results.json'), JSON.stringify(newer));
      const runs = [run, runFromDirectory(dir, '6.12')];
      const comparison = compareReports(
        [document, newer].map((d, i) =>
          reportRunOf(i === 0 ? '6.1' : '6.12', join(dir, 'results.json'), d),
        ),
      );
      const html = renderReportHtml(runs, comparison);
      expect(html).toContain('siw0 ibv_post_send<br>kernel 6.1</th>');
      expect(html).toContain('siw0 ibv_post_send<br>kernel 6.12</th>');
      expect(html.match(/<details class="result"/g)?.length).toBe(6);
      expect(html).toContain(`Values that changed between kernels (${comparison.changedCount})`);
      expect(html).toContain(
        '<td>siw-misaligned</td><td>siw0</td><td>verdict</td><td>known</td><td>match</td>',
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses what is not a results.json with a typed error', () => {
    const dir = mkdtempSync(join(tmpdir(), 'report-html-'));
    try {
      expect(() => runFromDirectory(dir, 'x')).toThrow(ReportHtmlInputError);
      writeFileSync(join(dir, 'results.json'), '{"schema":"something/else"}');
      expect(() => runFromDirectory(dir, 'x')).toThrow(/not a results.json/);
      writeFileSync(join(dir, 'results.json'), '{');
      expect(() => runFromDirectory(dir, 'x')).toThrow(ReportHtmlInputError);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
