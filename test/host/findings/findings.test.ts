/**
 * Issue 33, the findings report (src/findings/): one row per recorded id, in its class's
 * section, opening with the defects still present upstream; per kernel line what the
 * records say, what a patch here fixes, and what runs saw.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { UnknownNameError } from '../../../src/errors.js';
import type { DefectFix } from '../../../src/findings/fixes.js';
import {
  componentOf,
  type FindingRow,
  type FindingsDocument,
  findingsDocument,
  onFixedBuildOnly,
  SECTIONS,
  sourcesOf,
} from '../../../src/findings/model.js';
import { renderFindingsHtml } from '../../../src/findings/report-html.js';
import { renderFindingsMarkdown } from '../../../src/findings/report-md.js';
import { lineText } from '../../../src/findings/report-text.js';
import { FindingsInputError, lineOfRelease, readSightings } from '../../../src/findings/results.js';
import { RECORDS } from '../../../src/judge/records/index.js';

const rows = (doc: FindingsDocument): FindingRow[] => doc.sections.flatMap((s) => s.rows);
const row = (doc: FindingsDocument, id: string): FindingRow => {
  const found = rows(doc).find((r) => r.id === id);
  if (found === undefined) throw new Error(`no row ${id}`);
  return found;
};
const sectionOf = (doc: FindingsDocument, id: string) =>
  doc.sections.find((s) => s.rows.some((r) => r.id === id))?.section;

describe('the findings document', () => {
  const doc = findingsDocument();

  it('has one row per recorded id, counted by class', () => {
    const ids = new Set(RECORDS.map((k) => k.id));
    expect(
      rows(doc)
        .map((r) => r.id)
        .sort(),
    ).toEqual([...ids].sort());
    expect(Object.values(doc.counts).reduce((a, b) => a + b, 0)).toBe(ids.size);
    expect(doc.sections.map((s) => s.section)).toEqual([...SECTIONS]);
  });

  it('opens with the defects still present upstream', () => {
    const first = doc.sections[0];
    expect(first?.section).toBe('defects present upstream');
    expect(first?.rows.every((r) => r.class === 'defect')).toBe(true);
    expect(first?.rows.map((r) => r.id)).toEqual(
      expect.arrayContaining(['rxe-mw-range-is-the-mr', 'libsiw-list-refusal-lost']),
    );
    expect(renderFindingsMarkdown(doc)).toMatch(
      /^# findings[^\n]*\n\n[^\n]*\n\n(?:- [^\n]*\n){4}\n## Defects still present upstream/,
    );
  });

  it('a defect whose range ends is fixed upstream from that version', () => {
    expect(sectionOf(doc, 'siw-query-qp-state')).toBe('defects fixed upstream');
    expect(row(doc, 'siw-query-qp-state').lines).toEqual([
      { line: '6.1', state: 'present', fixedHere: true },
      {
        line: '6.12',
        state: 'fixed-upstream',
        upstream: '6.8 (siw_query_qp reports qp_state; 6.12.95 and 7.3.4 measured)',
        fixedHere: false,
      },
      {
        line: '7.3',
        state: 'fixed-upstream',
        upstream: '6.8 (siw_query_qp reports qp_state; 6.12.95 and 7.3.4 measured)',
        fixedHere: false,
      },
    ]);
    // Not a defect: the range starting later reads "not recorded" before it.
    expect(row(doc, 'libsiw-refused-atomic-qps-stay-rts').lines[0]).toEqual({
      line: '6.1',
      state: 'not-yet',
      from: '6.8',
      fixedHere: false,
    });
  });

  it("a defect recorded on a fixed build only is its cause's, still upstream: changed, not fixed", () => {
    // siw+rfc7306+fixes before 6.8: the fixed siw_query_qp shows the QPs that
    // siw-qp-access-not-enforced leaves in RTS; from 6.8 the stock record takes over.
    const id = 'siw-qp-access-not-enforced-qps-stay-rts-fixed-query';
    expect(onFixedBuildOnly(['siw+rfc7306+fixes'])).toBe(true);
    expect(onFixedBuildOnly(['siw', 'siw+fixes'])).toBe(false);
    expect(sectionOf(doc, id)).toBe('defects present upstream');
    const r = row(doc, id);
    expect(r.lines.map((c) => lineText(r, c))).toEqual([
      'present',
      'changed upstream in 6.8',
      'changed upstream in 6.8',
    ]);
  });

  it('the component: the userspace provider or the kernel driver', () => {
    const byId = (id: string) => RECORDS.find((k) => k.id === id);
    expect(
      [
        'libsiw-list-refusal-lost',
        'refused-post-keeps-rts',
        'siw-post-on-error-qp-no-completion',
        'rxe-mw-range-is-the-mr',
      ].map((id) => componentOf(byId(id) as (typeof RECORDS)[number])),
    ).toEqual(['libsiw', 'librxe', 'siw', 'rxe']);
  });

  it('the source lines of a why: files with their functions, then functions alone', () => {
    expect(
      sourcesOf(
        'rxe_resp.c check_rkey looks the window up (rxe_mw.c rxe_lookup_mw), then siw_get_trailer and struct iwarp_terminate; rxe_comp.c (COMPST_ERROR_RETRY)',
      ),
    ).toEqual([
      'rxe_resp.c check_rkey',
      'rxe_mw.c rxe_lookup_mw',
      'rxe_comp.c',
      'siw_get_trailer',
      'struct iwarp_terminate',
    ]);
  });

  it('a fix with a patch for a line is "fixed here" on that line only; its reproducer shows', () => {
    const fixes: DefectFix[] = [
      {
        recordId: 'rxe-mw-range-is-the-mr',
        component: 'rxe',
        reproducer: 'repro/rxe-mw-range.c',
        patches: ['patches/rxe/6.1/0001-RDMA-rxe-bound-a-window-access.patch'],
      },
    ];
    const fixed = findingsDocument({ fixes });
    const r = row(fixed, 'rxe-mw-range-is-the-mr');
    expect(r.lines.map((c) => c.fixedHere)).toEqual([true, false, false]);
    expect(r.reproducer).toBe('repro/rxe-mw-range.c');
    const md = renderFindingsMarkdown(fixed);
    expect(md).toContain(
      '| `repro/rxe-mw-range.c` | `patches/rxe/6.1/0001-RDMA-rxe-bound-a-window-access.patch` | present, fixed here | present | present |',
    );
    const upstream = findingsDocument({ fixes: [{ ...fixes[0]!, fixedUpstream: '7.4' }] });
    expect(sectionOf(upstream, 'rxe-mw-range-is-the-mr')).toBe('defects fixed upstream');
  });

  it('only the kernel lines asked for are columns', () => {
    const one = findingsDocument({ lines: ['7.3'] });
    expect(one.lines).toEqual(['7.3']);
    expect(rows(one).every((r) => r.lines.length === 1 && r.lines[0]?.line === '7.3')).toBe(true);
    expect(() => findingsDocument({ lines: ['6.2'] })).toThrow(UnknownNameError);
  });

  it('the page escapes what it shows and marks the defects still there', () => {
    const html = renderFindingsHtml(doc);
    expect(html).toMatch(/^<!DOCTYPE html>/);
    expect(html).toContain('<h2>Defects still present upstream (');
    expect(html).toContain('<td class="d-unrecorded">present</td>');
    expect(html).not.toContain('<rdma');
    expect(html).toContain('href="https://www.rfc-editor.org/rfc/rfc5044#section-7.2"');
  });
});

describe('what runs saw (--results, --fixed-results)', () => {
  const suiteResults = (kernel: string, explainedBy: string) => ({
    schema: 'rdma-interop/results@2',
    environment: { host: 'g', kernel, rdmaCore: '56.1', node: 'v22', devices: [] },
    scenarios: [{ id: 'rxe-mw2-outside-window', differences: [{ field: 'mem[8]', explainedBy }] }],
    findings: [],
  });
  const write = (dir: string, doc: unknown) => {
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'results.json'), JSON.stringify(doc));
  };

  it('names the line of a kernel release', () => {
    expect(
      ['6.1.0-57-amd64', '6.12.95+deb12-amd64', '7.3.4+deb13-amd64', '6.2.1', '5.10'].map(
        lineOfRelease,
      ),
    ).toEqual(['6.1', '6.12', '7.3', undefined, undefined]);
  });

  it('a record seen in the stock run and gone in the fixed run, per line', () => {
    const root = mkdtempSync(join(tmpdir(), 'findings-'));
    write(
      join(root, 'stock', '6.12'),
      suiteResults('6.12.95+deb12-amd64', 'rxe-mw-range-is-the-mr'),
    );
    write(join(root, 'stock', '7.3'), suiteResults('7.3.4+deb13-amd64', 'rxe-mw-range-is-the-mr'));
    write(
      join(root, 'fixed', '6.12'),
      suiteResults('6.12.95+deb12-amd64', 'rxe-grh-on-rc-receive'),
    );
    const doc = findingsDocument({
      stock: readSightings(join(root, 'stock')),
      fixed: readSightings(join(root, 'fixed')),
    });
    const r = row(doc, 'rxe-mw-range-is-the-mr');
    expect(r.lines.map((c) => [c.stockRun, c.fixedRun])).toEqual([
      ['not-run', 'not-run'],
      ['seen', 'not-seen'],
      ['seen', 'not-run'],
    ]);
    // DEFECT_FIXES fixes it here; the fixed 6.12 run's devices are not keyed +fixes: not proven.
    expect(r.lines.map((c) => c.proven)).toEqual([false, false, false]);
    expect(renderFindingsMarkdown(doc)).toContain(
      // DEFECT_FIXES has the rxe patch for it: "fixed here" on every line it is present on.
      '| present, fixed here (stock run: not run; fixed run: not run) | present, fixed here (stock run: seen; fixed run: gone) | present, fixed here (stock run: seen; fixed run: not run) |',
    );
  });

  it('a fix here is proven where a run on the fixed build ran its scope and the record is gone', () => {
    const root = mkdtempSync(join(tmpdir(), 'findings-'));
    const onFixes = (kernel: string, scenario: string) => ({
      ...suiteResults(kernel, 'rxe-grh-on-rc-receive'),
      environment: {
        host: 'g',
        kernel,
        rdmaCore: '56.1',
        node: 'v26',
        devices: [{ name: 'rxe0', provider: 'rxe+fixes' }],
      },
      scenarios: [{ id: scenario, differences: [] }],
    });
    write(join(root, 'stock', '6.1'), suiteResults('6.1.0-57-amd64', 'rxe-mw-range-is-the-mr'));
    write(join(root, 'fixed', '6.1'), onFixes('6.1.0-57-amd64', 'rxe-mw2-outside-window'));
    // On 7.3 the fixed run ran none of the record's scenarios: nothing is proven there.
    write(join(root, 'fixed', '7.3'), onFixes('7.3.4+deb13-amd64', 'rxe-send'));
    const doc = findingsDocument({
      stock: readSightings(join(root, 'stock')),
      fixed: readSightings(join(root, 'fixed')),
    });
    const r = row(doc, 'rxe-mw-range-is-the-mr');
    expect(r.lines.map((c) => [c.fixedRun, c.proven])).toEqual([
      ['not-seen', true],
      ['not-run', false],
      ['not-seen', false],
    ]);
    expect(renderFindingsMarkdown(doc)).toContain(
      '| present, fixed here: proven (stock run: seen; fixed run: gone) | present, fixed here (stock run: not run; fixed run: not run) | present, fixed here (stock run: not run; fixed run: gone) |',
    );
    // A record DEFECT_FIXES does not list is never proven fixed.
    expect(row(doc, 'rxe-grh-on-rc-receive').lines.every((c) => c.proven === undefined)).toBe(true);
  });

  it("reads the tester's results.json too (assertions[].known)", () => {
    const root = mkdtempSync(join(tmpdir(), 'findings-'));
    write(root, {
      schema: 'rdma-interop/probe@1',
      kernels: [{ line: '6.1', release: '6.1.0-57-amd64' }],
      assertions: [
        { id: 'siw-mpa-bad-crc', kernel: '6.1.0-57-amd64', known: 'siw-terminate-layout' },
      ],
    });
    const seen = readSightings(root);
    expect([...(seen.seen.get('6.1') ?? [])]).toEqual(['siw-terminate-layout']);
  });

  it.each([
    ['no results.json', () => {}, 'no results.json in it'],
    [
      'a kernel that is no line',
      (dir: string) => write(dir, suiteResults('5.10.0-30-amd64', 'x')),
      'kernel 5.10.0-30-amd64 is none of the kernel lines',
    ],
    ['not JSON', (dir: string) => writeFileSync(join(dir, 'results.json'), '{'), 'results.json:'],
    [
      'another document',
      (dir: string) => write(dir, { schema: 'x' }),
      "neither a run's nor a probe's results.json",
    ],
  ])('refuses a directory with %s', (_what, fill, message) => {
    const dir = mkdtempSync(join(tmpdir(), 'findings-'));
    fill(dir);
    expect(() => readSightings(dir)).toThrow(FindingsInputError);
    expect(() => readSightings(dir)).toThrow(message);
  });
});
