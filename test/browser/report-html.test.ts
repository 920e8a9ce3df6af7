import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderReportHtml, runFromDirectory } from '../../src/interop/report-html/index.js';

// report.html in a real browser: Debian's Chromium, headless, driven by playwright-core
// (which downloads no browser of its own). CI points RDMA_INTEROP_BROWSER_REPORT at the
// report the kernel tests' suite run left in the results directory it shares with the
// guest (scripts/test.sh); without it, the page is made from the committed fixture.
// The screenshots go next to the report.html they show.
const CHROMIUM = process.env.RDMA_INTEROP_CHROMIUM ?? '/usr/bin/chromium';
const FIXTURE = join(import.meta.dirname, '../fixtures/report-html');

interface Entry {
  readonly id: string;
  readonly name: string;
  readonly device: string;
  readonly verdict: string;
  readonly pcap?: string;
  readonly differences: readonly { readonly field: string; readonly explainedBy: string | null }[];
}

function reportDir(): { dir: string; made: boolean } {
  const given = process.env.RDMA_INTEROP_BROWSER_REPORT;
  if (given !== undefined) return { dir: given, made: false };
  const dir = mkdtempSync(join(tmpdir(), 'report-html-browser-'));
  writeFileSync(join(dir, 'report.html'), renderReportHtml([runFromDirectory(FIXTURE, '6.1')]));
  writeFileSync(join(dir, 'results.json'), readFileSync(join(FIXTURE, 'results.json')));
  return { dir, made: true };
}

/** The result whose ladder the test opens: one whose wire differs, else one captured. */
function ladderOf(entries: readonly Entry[]): Entry {
  const wire = entries.find(
    (e) =>
      e.pcap !== undefined &&
      e.differences.some(
        (d) => d.field.startsWith('wire') && d.explainedBy !== 'consequence-of-refused-post',
      ),
  );
  const chosen = wire ?? entries.find((e) => e.pcap !== undefined) ?? entries[0];
  if (chosen === undefined) throw new Error('the report has no scenario');
  return chosen;
}

describe('report.html in headless Chromium', () => {
  const { dir, made } = reportDir();
  let browser: Browser;
  let page: Page;
  const problems: string[] = [];
  const requests: string[] = [];
  let entries: Entry[] = [];

  beforeAll(async () => {
    if (!existsSync(CHROMIUM))
      throw new Error(`${CHROMIUM}: no Chromium; scripts/setup/apt.sh installs Debian's chromium`);
    if (!existsSync(join(dir, 'report.html')))
      throw new Error(`${dir}/report.html: no report (did the kernel tests' suite run finish?)`);
    entries = (
      JSON.parse(readFileSync(join(dir, 'results.json'), 'utf8')) as { scenarios: Entry[] }
    ).scenarios;
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      // The guest's and CI's root user: Chromium's sandbox needs an unprivileged user.
      args: ['--no-sandbox', '--disable-gpu'],
    });
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.on('console', (m) => {
      if (m.type() === 'error' || m.type() === 'warning') problems.push(`${m.type()}: ${m.text()}`);
    });
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    page.on('request', (r) => {
      if (!r.url().startsWith('file:')) requests.push(r.url());
    });
    await page.goto(`file://${join(dir, 'report.html')}`);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    if (made) rmSync(dir, { recursive: true, force: true });
  });

  it('shows the matrix: a row per scenario name, a verdict cell per result', async () => {
    const names = new Set(entries.map((e) => e.name));
    expect(await page.locator('.matrix tbody tr').count()).toBe(names.size);
    expect(await page.locator('.matrix td.cell a').count()).toBe(entries.length);
    expect(await page.locator('#shown').textContent()).toBe(String(entries.length));
    await page.screenshot({ path: join(dir, 'report-matrix.png') });
  });

  it('draws a ladder when its result is opened, within a 1280-pixel window', async () => {
    const chosen = ladderOf(entries);
    const result = page.locator(`details.result[data-id="${chosen.id}"]`);
    expect(await result.locator('svg.ladder').count()).toBe(0);
    await result.locator('summary').click();
    const svg = result.locator('.body svg.ladder');
    await svg.waitFor({ state: 'visible' });
    const box = await svg.boundingBox();
    expect(box?.width).toBeGreaterThan(1000);
    expect((box?.x ?? 0) + (box?.width ?? 0)).toBeLessThanOrEqual(1280);
    expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(
      1280,
    );
    // A captured scenario draws its packets, on the wire side too, each timed.
    if (chosen.pcap !== undefined) {
      expect(await svg.locator('g.pk').count()).toBeGreaterThan(0);
      expect(await svg.locator('text.time').count()).toBeGreaterThan(0);
    }
    if (chosen.differences.some((d) => d.explainedBy !== 'consequence-of-refused-post'))
      expect(await svg.locator('.d-known, .d-unrecorded').count()).toBeGreaterThan(0);
    await page.addStyleTag({ content: '.filters { position: static !important; }' });
    await result.screenshot({ path: join(dir, 'report-ladder.png') });
  });

  it('filters by verdict and by device, in the matrix and in the results', async () => {
    const verdicts = [...new Set(entries.map((e) => e.verdict))];
    const kept = verdicts[0] as string;
    for (const v of ['match', 'known', 'finding', 'fail', 'not-run'])
      if (v !== kept) await page.locator(`input[data-filter="verdict"][value="${v}"]`).uncheck();
    const visible = page.locator('details.result:not(.hidden)');
    const count = entries.filter((e) => e.verdict === kept).length;
    expect(await visible.count()).toBe(count);
    expect(await page.locator('#shown').textContent()).toBe(String(count));
    expect(await page.locator('.matrix td.cell:not(.off) a').count()).toBe(count);
    for (const v of ['match', 'known', 'finding', 'fail', 'not-run'])
      await page.locator(`input[data-filter="verdict"][value="${v}"]`).check();
    const device = entries[entries.length - 1]?.device as string;
    await page.locator('select[data-filter="device"]').selectOption(device);
    const onDevice = entries.filter((e) => e.device === device).length;
    expect(await visible.count()).toBe(onDevice);
    expect(
      await page
        .locator('details.result:not(.hidden)')
        .evaluateAll(
          (els, d) =>
            els.every(
              (el) => (el as unknown as { dataset: { device: string } }).dataset.device === d,
            ),
          device,
        ),
    ).toBe(true);
    await page.locator('select[data-filter="device"]').selectOption('');
    expect(await visible.count()).toBe(entries.length);
  });

  it('logged no console error or warning and loaded nothing from the network', () => {
    expect(problems).toEqual([]);
    expect(requests).toEqual([]);
  });
});
