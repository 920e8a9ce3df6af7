/** comparison.json and comparison.md into a directory: `compare --out` and `run --kernels`. */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { renderComparisonMarkdown } from './markdown.js';
import type { Comparison } from './merge.js';

/** Writes both files into `dir` (created); returns the Markdown file's path. */
export function writeComparison(dir: string, comparison: Comparison): string {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'comparison.json'), `${JSON.stringify(comparison, null, 2)}\n`);
  const markdown = join(dir, 'comparison.md');
  writeFileSync(markdown, `${renderComparisonMarkdown(comparison)}\n`);
  return markdown;
}
