/**
 * findings.html: the findings document as one self-contained page in the suite report's
 * style (report-html/client.ts STYLE), a table per section, RFC citations linked.
 */
import { html } from 'ghtml';
import { STYLE } from '../interop/report-html/client.js';
import { specHtml } from '../interop/report-html/page.js';
import { RECORD_CLASSES } from '../judge/record.js';
import type { FindingRow, FindingsDocument } from './model.js';
import { CLASS_TEXT, componentText, lineText, SECTION_TITLE } from './report-text.js';

const DASH = '—';
const codes = (items: readonly string[]): string =>
  items.length === 0 ? DASH : items.map((s) => html`<code>${s}</code>`).join(', ');

/** The cell class of a kernel line: red where the defect is there and not fixed here. */
function lineClass(row: FindingRow, text: string): string {
  if (row.class !== 'defect') return '';
  if (text.startsWith('present, fixed here')) return 'd-known';
  return text.startsWith('present') ? 'd-unrecorded' : '';
}

function rowHtml(row: FindingRow): string {
  return html`<tr><td><code>${row.id}</code></td><td>${componentText(row)}</td><td>${row.class}</td><td class="reason">!${specHtml(row.rule)}!${
    row.unclear === undefined ? '' : html` <em>(unclear: ${row.unclear})</em>`
  }</td><td>!${codes(row.sources)}</td><td>!${codes(row.reproducer === undefined ? [] : [row.reproducer])}</td><td>!${codes(row.patches)}</td>!${row.lines.map(
    (c) => {
      const text = lineText(row, c);
      return html`<td class="${lineClass(row, text)}">${text}</td>`;
    },
  )}</tr>`;
}

/** findings.html. */
export function renderFindingsHtml(doc: FindingsDocument): string {
  const title = 'rdma-interop findings: rxe, siw, librxe and libsiw';
  const total = RECORD_CLASSES.reduce((n, c) => n + doc.counts[c], 0);
  return html`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title><style>!${STYLE}</style></head><body>
<h1>${title}</h1>
<p class="totals">${total} recorded behaviours on kernel lines ${doc.lines.join(', ')}: !${RECORD_CLASSES.map((c) => html`<span><strong>${doc.counts[c]}</strong> ${c}</span>`)}</p>
<ul class="meta">!${RECORD_CLASSES.map((c) => html`<li><strong>${c}</strong>: ${CLASS_TEXT[c]}</li>`)}</ul>
!${doc.sections.map(
    ({ section, rows }) =>
      html`<h2>${SECTION_TITLE[section]} (${rows.length})</h2>!${
        rows.length === 0
          ? '<p>None.</p>'
          : html`<table class="fields"><tr><th>record</th><th>component</th><th>class</th><th>rule</th><th>source</th><th>reproducer</th><th>patch</th>!${doc.lines.map((l) => html`<th>${l}</th>`)}</tr>!${rows.map(rowHtml)}</table>`
      }`,
  )}
</body></html>
`;
}
