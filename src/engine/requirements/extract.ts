/**
 * Finding the normative sentences in the spec texts, to prove the requirement table is
 * complete. RFC 7306's stored text is one sentence per line with headings stripped, so
 * §4-§8 are delimited by their first and last sentences; the V2 draft is one line, split
 * into sentences, from "4. Header Format Extensions" (after the table of contents) to
 * "9. Security Considerations".
 */

const KEYWORD = /\b(MUST|SHALL|REQUIRED)\b/;

/** Collapses whitespace (spec texts use non-breaking and double spaces). */
export function normalizeSpaces(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/** First and last sentences of RFC 7306 §4-§8 in the stored text. */
const RFC7306_START = 'This specification extends RFC 5040 with the following new formats';
const RFC7306_END = 'Implementation Note: A ULP implementation can avoid this error';

/** The MUST / SHALL / REQUIRED sentences of RFC 7306 §4-§8. */
export function extractRfc7306Sentences(specText: string): string[] {
  const out: string[] = [];
  let inside = false;
  for (const line of specText.split('\n')) {
    if (line.startsWith(RFC7306_START)) inside = true;
    if (inside && KEYWORD.test(line)) out.push(normalizeSpaces(line));
    if (line.startsWith(RFC7306_END)) inside = false;
  }
  return out;
}

/** The MUST / SHALL / REQUIRED sentences of the V2 draft §4-§8. */
export function extractV2Sentences(specText: string): string[] {
  const text = normalizeSpaces(specText);
  const toc = text.indexOf('Table of Contents');
  const start = text.indexOf('4. Header Format Extensions', toc + 2000);
  const end = text.indexOf('9. Security Considerations', start);
  if (start < 0 || end < 0) return [];
  return text
    .slice(start, end)
    .split(/(?<=[.:])\s+(?=[A-Z])/)
    .filter((s) => KEYWORD.test(s));
}
