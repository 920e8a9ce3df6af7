/**
 * coverage.html (issue 32): the coverage view of a report directory, with the source shown
 * and what was reached marked. Block coverage marks each line holding blocks as reached
 * (by the phase that first reached it) or never reached; function coverage marks each
 * function's definition line as entered or not. The source is the line's own: the trace-pc
 * build's copy for blocks, the linux-src cache for functions. report.html links to it.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { html } from 'ghtml';
import { type BlockCoverage, coverageModulesDir, NAMED_FILES } from './blocks.js';
import type { FunctionCoverage } from './functions.js';
import { baseName, sourceDirOf } from './source-map.js';

const DRIVER_DIR: Readonly<Record<string, string>> = {
  rdma_rxe: 'drivers/infiniband/sw/rxe',
  siw: 'drivers/infiniband/sw/siw',
};

const STYLE = `body{font-family:sans-serif;margin:1em}pre{font-size:12px;line-height:1.3}
.hit{background:#d4f7d4}.miss{background:#f9d0d0}.n{color:#888;display:inline-block;width:4em}
details{margin:.4em 0}summary{cursor:pointer}`;

/** A source file's lines with per-line classes (hit, miss) and titles. */
function sourceView(
  text: string,
  marks: ReadonlyMap<number, { cls: string; title: string }>,
): string {
  return text
    .split('\n')
    .map((line, i) => {
      const mark = marks.get(i + 1);
      return mark === undefined
        ? html`<span class="n">${i + 1}</span>${line}`
        : html`<span class="${mark.cls}" title="${mark.title}"><span class="n">${i + 1}</span>${line}</span>`;
    })
    .join('\n');
}

function readSource(path: string | undefined): string | undefined {
  return path !== undefined && existsSync(path) ? readFileSync(path, 'utf8') : undefined;
}

function blockSection(c: BlockCoverage): string {
  const out = [html`<h2>Blocks on ${c.kernel} (trace-pc)</h2>`];
  for (const f of c.files) {
    const reached = f.reached.all ?? 0;
    const dir = DRIVER_DIR[f.module];
    const text = readSource(
      dir === undefined ? undefined : join(coverageModulesDir(c.kernel), 'src', dir, f.file),
    );
    const marks = new Map(
      f.lines.map((l) => [
        l.line,
        l.first === null
          ? { cls: 'miss', title: 'never reached' }
          : { cls: 'hit', title: `first reached in ${l.first}` },
      ]),
    );
    const open = (NAMED_FILES as readonly string[]).includes(f.file) ? ' open' : '';
    out.push(
      `<details${open}><summary>${html`${f.module} ${f.file}: ${reached} of ${f.blocks} blocks`}</summary>`,
      text === undefined ? '<p>(no source)</p>' : `<pre>${sourceView(text, marks)}</pre>`,
      '</details>',
    );
  }
  return out.join('\n');
}

function functionSection(c: FunctionCoverage): string {
  const out = [html`<h2>Functions on ${c.kernel} (ftrace)</h2>`];
  const src = sourceDirOf(c.kernel);
  for (const m of c.modules) {
    out.push(
      html`<h3>${m.module}: ${m.entered.all ?? 0} of ${m.traceable} traceable functions entered</h3>`,
    );
    for (const f of m.files) {
      const dir = DRIVER_DIR[m.module];
      const text = readSource(
        src === undefined || dir === undefined ? undefined : join(src, dir, f.file),
      );
      const lines = text?.split('\n') ?? [];
      const marks = new Map<number, { cls: string; title: string }>();
      for (const fn of f.functions) {
        const name = baseName(fn.name);
        const at = lines.findIndex(
          (l) => /^[A-Za-z_]/.test(l) && !l.trimEnd().endsWith(';') && l.includes(`${name}(`),
        );
        if (at >= 0)
          marks.set(
            at + 1,
            fn.phases.length === 0
              ? { cls: 'miss', title: `${fn.name}: never entered` }
              : { cls: 'hit', title: `${fn.name}: ${fn.phases.join(', ')}` },
          );
      }
      const hit = f.functions.filter((fn) => fn.phases.length > 0).length;
      const list = f.functions
        .map((fn) =>
          fn.phases.length === 0
            ? html`<li class="miss">${fn.name}</li>`
            : html`<li class="hit">${fn.name} (${fn.phases.join(', ')})</li>`,
        )
        .join('');
      out.push(
        `<details><summary>${html`${f.file}: ${hit} of ${f.functions.length}`}</summary><ul>${list}</ul>`,
        text === undefined ? '' : `<pre>${sourceView(text, marks)}</pre>`,
        '</details>',
      );
    }
  }
  return out.join('\n');
}

/** The page. */
export function renderCoverageHtml(
  functions: readonly FunctionCoverage[],
  blocks: readonly BlockCoverage[] = [],
): string {
  return [
    '<!doctype html><html><head><meta charset="utf-8"><title>rdma-interop coverage</title>',
    `<style>${STYLE}</style></head><body><h1>Kernel coverage of rxe and siw</h1>`,
    '<p>Green: reached (hover for the phase); red: never reached. docs/coverage.md says how it is measured.</p>',
    ...blocks.map(blockSection),
    ...functions.map(functionSection),
    '</body></html>',
  ].join('\n');
}

/** Writes coverage.html into `dir` and links it from report.html when there is one. */
export function writeCoverageHtml(
  dir: string,
  functions: readonly FunctionCoverage[],
  blocks: readonly BlockCoverage[] = [],
): void {
  if (functions.length === 0 && blocks.length === 0) return;
  writeFileSync(join(dir, 'coverage.html'), renderCoverageHtml(functions, blocks));
  const report = join(dir, 'report.html');
  if (!existsSync(report)) return;
  const page = readFileSync(report, 'utf8');
  const link = '<p><a href="coverage.html">Kernel coverage of rxe and siw</a></p>';
  if (!page.includes(link)) writeFileSync(report, page.replace('</body>', `${link}</body>`));
}
