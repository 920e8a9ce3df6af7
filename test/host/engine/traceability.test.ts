import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  extractRfc7306Sentences,
  extractV2Sentences,
  normalizeSpaces,
} from '../../../src/engine/requirements/extract.js';
import {
  REQUIREMENTS,
  RFC7306_REQUIREMENTS,
  V2_DRAFT_REQUIREMENTS,
} from '../../../src/engine/requirements/requirements.js';
import {
  buildTraceability,
  renderTraceability,
} from '../../../src/engine/requirements/traceability.js';

/** The spec texts, vendored in the repository (specs/README.md says why). */
const SPECS = fileURLToPath(new URL('../../../specs/', import.meta.url));
const RFC = join(SPECS, 'rfc7306-rdmap-extensions.txt');
const V2 = join(SPECS, 'draft-wood-storm-rdmap-ext-v2-00.txt');
const TEST_DIR = 'test/host/engine';

describe('requirement traceability', () => {
  it('requirement ids are unique', () => {
    const ids = REQUIREMENTS.map((r) => r.id);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('every MUST sentence of RFC 7306 §4-§8 has a row, and every row quotes the text', () => {
    const sentences = extractRfc7306Sentences(readFileSync(RFC, 'utf8'));
    const musts = RFC7306_REQUIREMENTS.filter((r) => r.kind !== 'behaviour');
    expect(sentences).toHaveLength(musts.length);
    expect(musts.map((r) => normalizeSpaces(r.text))).toEqual(sentences);
    const whole = normalizeSpaces(readFileSync(RFC, 'utf8'));
    for (const r of RFC7306_REQUIREMENTS) expect(whole).toContain(normalizeSpaces(r.text));
  });

  it('every MUST sentence of the V2 draft §4-§8 has a row', () => {
    const sentences = extractV2Sentences(readFileSync(V2, 'utf8'));
    expect(sentences.length).toBeGreaterThan(10);
    for (const sentence of sentences) {
      const covering = V2_DRAFT_REQUIREMENTS.filter((r) =>
        sentence.includes(normalizeSpaces(r.text)),
      );
      expect(covering.length, sentence).toBeGreaterThan(0);
    }
    for (const r of V2_DRAFT_REQUIREMENTS)
      expect(
        sentences.some((s) => s.includes(normalizeSpaces(r.text))),
        r.id,
      ).toBe(true);
  });

  it('every requirement has a test, no test names an unknown id; writes docs/traceability.md', () => {
    const sources = readdirSync(TEST_DIR)
      .filter((f) => f.endsWith('.test.ts') && f !== 'traceability.test.ts')
      .sort()
      .map((f) => ({ file: f, content: readFileSync(join(TEST_DIR, f), 'utf8') }));
    const table = buildTraceability(REQUIREMENTS, sources);
    expect(table.unknownIds).toEqual([]);
    expect(table.untested.map((r) => r.id)).toEqual([]);
    const markdown = renderTraceability(table);
    const target = 'docs/traceability.md';
    if (!existsSync(target) || readFileSync(target, 'utf8') !== markdown)
      writeFileSync(target, markdown);
    expect(readFileSync(target, 'utf8')).toBe(markdown);
  });
});
