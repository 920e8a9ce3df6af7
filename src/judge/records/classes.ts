/**
 * Every record is classed and cites its rule (issue 33): the type makes both required,
 * and this check holds the tables to it at run time too (a record built from JSON, or
 * cast past the type), with the rule naming a source a reader can look up: an RFC
 * section, an IBTA chapter or rule, or a verbs man page. test/host/judge/classes.test.ts
 * runs it over every table.
 */
import { type BehaviourRecord, RECORD_CLASSES, type RecordClass } from '../record.js';

/** An RFC section, an IBTA chapter/rule/annex, or a man page such as `ibv_post_send(3)`. */
const CITES_A_SOURCE = /RFC \d{4} §\d|IBTA [^;]*(?:§\d|o\d+-\d+|C\d+-\d+|Annex)|\b\w+\(3\)/;

/** What is wrong with the class and rule of each record (empty: every record is classed). */
export function classProblems(records: readonly BehaviourRecord[]): string[] {
  const problems: string[] = [];
  const classOfId = new Map<string, RecordClass>();
  for (const k of records) {
    const r = k as unknown as Readonly<Record<string, unknown>>;
    const name = typeof r.id === 'string' ? r.id : '(a record without an id)';
    if (!RECORD_CLASSES.includes(r.class as RecordClass))
      problems.push(`${name}: class ${String(r.class)} is none of ${RECORD_CLASSES.join(', ')}`);
    if (typeof r.rule !== 'string' || r.rule.trim() === '') problems.push(`${name}: no rule`);
    else if (!CITES_A_SOURCE.test(r.rule))
      problems.push(`${name}: the rule cites no RFC section, IBTA rule or man page: ${r.rule}`);
    if (r.unclear !== undefined && (typeof r.unclear !== 'string' || r.unclear.trim() === ''))
      problems.push(`${name}: unclear is set but says nothing`);
    if ('side' in r) problems.push(`${name}: side is folded into class (engine)`);
    const seen = classOfId.get(name);
    if (seen !== undefined && seen !== k.class)
      problems.push(`${name}: classed ${seen} and ${String(k.class)} in two tables`);
    classOfId.set(name, k.class);
  }
  return problems;
}
