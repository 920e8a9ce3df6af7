/** `findings --report <dir>`: findings.md, findings.html and findings.json into `dir`. */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FindingsDocument } from './model.js';
import { renderFindingsHtml } from './report-html.js';
import { renderFindingsMarkdown } from './report-md.js';

/** The formats the command prints, and the file each is written to. */
export const FINDINGS_FORMATS = ['md', 'html', 'json'] as const;
export type FindingsFormat = (typeof FINDINGS_FORMATS)[number];

/** The document in `format`. */
export function renderFindings(doc: FindingsDocument, format: FindingsFormat): string {
  switch (format) {
    case 'md':
      return renderFindingsMarkdown(doc);
    case 'html':
      return renderFindingsHtml(doc);
    case 'json':
      return `${JSON.stringify(doc, null, 2)}\n`;
  }
}

/** Writes every format into `dir` (created); returns the files written. */
export function writeFindings(dir: string, doc: FindingsDocument): string[] {
  mkdirSync(dir, { recursive: true });
  return FINDINGS_FORMATS.map((format) => {
    const file = join(dir, `findings.${format}`);
    writeFileSync(file, renderFindings(doc, format));
    return file;
  });
}
