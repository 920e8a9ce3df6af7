/**
 * The findings report's words, shared by findings.md and findings.html: what each class
 * means, each section's heading, and a row's per-line cell.
 */
import type { RecordClass } from '../judge/record.js';
import {
  type FindingRow,
  type LineCell,
  onFixedBuildOnly,
  type RunState,
  type Section,
} from './model.js';

/** The class definitions (docs/findings.md gives each with its rule). */
export const CLASS_TEXT: Readonly<Record<RecordClass, string>> = {
  defect: 'the device breaks a rule the spec states and its own driver means to follow',
  unimplemented: 'a feature the provider does not offer, refused cleanly',
  allowed: 'the spec leaves it to the implementation (the rule says where)',
  engine: 'the engine is wrong or incomplete: a bug of ours, until the engine is fixed',
};

export const SECTION_TITLE: Readonly<Record<Section, string>> = {
  'defects present upstream': 'Defects still present upstream',
  'defects fixed upstream': 'Defects fixed upstream',
  unimplemented: 'Unimplemented',
  allowed: 'Allowed by the spec',
  engine: 'Engine gaps (ours)',
};

const RUN_TEXT: Readonly<Record<RunState, string>> = {
  seen: 'seen',
  'not-seen': 'not seen',
  'not-run': 'not run',
};

/** One kernel line of a row: what the records say, then what the runs saw. */
export function lineText(row: FindingRow, c: LineCell): string {
  // A fixed build's record ends where the stock one takes over: upstream changed, not fixed.
  const changed =
    row.class === 'defect' && !onFixedBuildOnly(row.providers)
      ? 'fixed upstream'
      : 'changed upstream';
  const records =
    c.state === 'present'
      ? c.fixedHere
        ? c.proven === true
          ? 'present, fixed here: proven'
          : 'present, fixed here'
        : 'present'
      : c.state === 'fixed-upstream'
        ? `${changed} in ${c.upstream ?? '?'}`
        : `not recorded (from ${c.from ?? '?'})`;
  const runs = [
    ...(c.stockRun === undefined ? [] : [`stock run: ${RUN_TEXT[c.stockRun]}`]),
    ...(c.fixedRun === undefined
      ? []
      : [`fixed run: ${c.fixedRun === 'not-seen' ? 'gone' : RUN_TEXT[c.fixedRun]}`]),
  ];
  return runs.length === 0 ? records : `${records} (${runs.join('; ')})`;
}

/** A row's component, with the patched siw named where only it shows the behaviour. */
export function componentText(row: FindingRow): string {
  return row.providers.every((p) => p.includes('+'))
    ? `${row.component} (${row.providers.join(', ')})`
    : row.component;
}

/** The rule, and what is unclear about the class where something is. */
export function ruleWithDoubt(row: FindingRow): string {
  return row.unclear === undefined ? row.rule : `${row.rule} (unclear: ${row.unclear})`;
}
