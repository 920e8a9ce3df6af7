/**
 * The records as Markdown tables, for the docs (docs/interop.md, docs/probe.md,
 * docs/tester-roce.md): each doc holds the table of its records between
 * `<!-- records:NAME -->` and `<!-- records:end -->`, and test/host/docs/records.test.ts
 * checks it equals this rendering, so a record absent from the docs fails a test
 * (`RDMA_INTEROP_UPDATE_DOCS=1` rewrites the tables).
 */
import { type BehaviourRecord, observedText } from '../record.js';
import { rangeText } from '../version-range.js';
import { IWARP_RECORDS, KNOWN_BEHAVIOUR, ROCE_RECORDS } from './index.js';

/** The doc tables: their marker name and records. */
export const RECORD_TABLES: Readonly<Record<string, readonly BehaviourRecord[]>> = {
  suite: KNOWN_BEHAVIOUR,
  'tester-iwarp': IWARP_RECORDS,
  'tester-roce': ROCE_RECORDS,
};

const cell = (text: string): string => text.replaceAll('|', '\\|').replaceAll('\n', ' ');

/** Where a record holds, in words: providers, kernels, rdma-core, side and peer. */
function holdsText(k: BehaviourRecord): string {
  const parts = [
    [k.provider, ...(k.alsoFor ?? [])].join(', '),
    `kernel ${rangeText(k.kernel)}`,
    ...(k.rdmaCore === undefined ? [] : [`rdma-core ${rangeText(k.rdmaCore)}`]),
    ...(k.role === undefined ? [] : [`${k.role} side`]),
    ...(k.peer === undefined ? [] : [`peer ${k.peer}`]),
  ];
  return parts.join('; ');
}

/** What a record explains, in words. */
function explainsText(k: BehaviourRecord): string {
  const parts = [
    ...(k.observed === undefined ? [] : [`\`${observedText(k)}\``]),
    ...(k.derive === undefined ? [] : ["siw's answer derived from the engine's"]),
    ...(k.matches === undefined ? [] : ["a predicate over the tester's JSON"]),
    ...(k.nothingHappened === true ? ['and what a refused post leaves undone'] : []),
  ];
  return parts.join('; ');
}

/** The record's rule, and what is unclear about its class where something is. */
export function ruleText(k: Pick<BehaviourRecord, 'rule' | 'unclear'>): string {
  return k.unclear === undefined ? k.rule : `${k.rule} (unclear: ${k.unclear})`;
}

/** The Markdown table of `records`, one row per record, in table order. */
export function recordsTable(records: readonly BehaviourRecord[]): string {
  const rows = records.map(
    (k) =>
      `| \`${k.id}\` | ${k.class} | ${cell(holdsText(k))} | ${cell(k.scope.map((s) => `\`${s}\``).join(', '))} | ${cell(explainsText(k))} | ${cell(ruleText(k))} | ${cell(k.spec ?? '')} |`,
  );
  return [
    '| record | class | holds for | scope | explains | rule | spec (the engine follows) |',
    '|---|---|---|---|---|---|---|',
    ...rows,
  ].join('\n');
}
