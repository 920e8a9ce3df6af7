/** findings.md: the findings document as Markdown tables, one per section (report-text.ts words them). */
import { RECORD_CLASSES } from '../judge/record.js';
import type { FindingRow, FindingsDocument } from './model.js';
import {
  CLASS_TEXT,
  componentText,
  lineText,
  ruleWithDoubt,
  SECTION_TITLE,
} from './report-text.js';

const cell = (text: string): string => text.replaceAll('|', '\\|').replaceAll('\n', ' ');
const DASH = '—';

function rowLine(row: FindingRow): string {
  const cells = [
    `\`${row.id}\``,
    componentText(row),
    row.class,
    ruleWithDoubt(row),
    row.sources.length === 0 ? DASH : row.sources.map((s) => `\`${s}\``).join(', '),
    row.reproducer === undefined ? DASH : `\`${row.reproducer}\``,
    row.patches.length === 0 ? DASH : row.patches.map((p) => `\`${p}\``).join(', '),
    ...row.lines.map((c) => lineText(row, c)),
  ];
  return `| ${cells.map(cell).join(' | ')} |`;
}

/** findings.md. */
export function renderFindingsMarkdown(doc: FindingsDocument): string {
  const total = RECORD_CLASSES.reduce((n, c) => n + doc.counts[c], 0);
  const out = ['# findings: rxe, siw, librxe and libsiw where they differ from the engine', ''];
  out.push(
    `${total} recorded behaviours: ${RECORD_CLASSES.map((c) => `${doc.counts[c]} ${c}`).join(', ')}. ` +
      `Kernel lines ${doc.lines.join(', ')}: ${
        doc.runs.stock || doc.runs.fixed
          ? `what the records say, and what the ${[doc.runs.stock ? 'stock' : '', doc.runs.fixed ? 'fixed' : ''].filter((s) => s !== '').join(' and ')} runs saw.`
          : 'what the records say (no run given).'
      }`,
    '',
  );
  for (const c of RECORD_CLASSES) out.push(`- **${c}**: ${CLASS_TEXT[c]}`);
  const head = [
    'record',
    'component',
    'class',
    'rule',
    'source',
    'reproducer',
    'patch',
    ...doc.lines,
  ];
  for (const { section, rows } of doc.sections) {
    out.push('', `## ${SECTION_TITLE[section]} (${rows.length})`, '');
    if (rows.length === 0) {
      out.push('None.');
      continue;
    }
    out.push(`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`);
    for (const row of rows) out.push(rowLine(row));
  }
  return `${out.join('\n')}\n`;
}
