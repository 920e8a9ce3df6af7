/**
 * The interop suite's reports for people: the terminal summary (a scenario × device/API
 * matrix that fits 100 columns, then every difference on its own line) and report.md.
 */

import Table from 'cli-table3';
import { requireArray, requireBoolean, requireName } from '../arguments.js';
import { observedText } from '../judge/record.js';
import type { Verdict } from '../judge/verdict.js';
import { requireResults, requireRunEnvironment } from './arguments.js';
import type { RunEnvironment } from './environment.js';
import { PAIR_GUESTS, type PairGuest, pairText, sideText } from './link/sides.js';
import type { JudgedDifference, ScenarioResult } from './runner.js';
import { passed } from './runner.js';
import { deviceOf, type Scenario } from './scenario.js';

const VERDICT_CELL: Record<Verdict, string> = {
  match: 'match',
  known: 'known',
  finding: 'finding',
  fail: 'FAIL',
  'kernel-crash': 'CRASH',
  'not-run': 'NOT RUN',
  'not-applicable': 'n/a',
};

/** A matrix column: one device through one post API. */
export function columnOf(scenario: Scenario): string {
  return `${deviceOf(scenario)} ${scenario.postPath === 'ex' ? 'ibv_wr_*' : 'post_send'}`;
}

interface Matrix {
  readonly columns: string[];
  readonly rows: { readonly name: string; readonly cells: Map<string, ScenarioResult> }[];
}

function matrixOf(results: readonly ScenarioResult[]): Matrix {
  const columns = [...new Set(results.map((r) => columnOf(r.scenario)))];
  const rows: Matrix['rows'] = [];
  for (const r of results) {
    let row = rows.find((x) => x.name === r.scenario.name);
    if (row === undefined) {
      row = { name: r.scenario.name, cells: new Map() };
      rows.push(row);
    }
    row.cells.set(columnOf(r.scenario), r);
  }
  return { columns, rows };
}

/** The summary matrix for a terminal: at most 100 columns wide. */
export function renderMatrix(results: readonly ScenarioResult[]): string {
  requireResults(results);
  const { columns, rows } = matrixOf(results);
  const cellWidth = 16;
  const nameWidth = Math.min(
    28,
    Math.max(10, ...rows.map((r) => r.name.length + 2)),
    99 - columns.length * (cellWidth + 1) - 1,
  );
  const table = new Table({
    head: ['scenario', ...columns],
    colWidths: [nameWidth, ...columns.map(() => cellWidth)],
    wordWrap: true,
    style: { head: [], border: [] },
  });
  for (const row of rows)
    table.push([
      row.name,
      ...columns.map((c) => {
        const r = row.cells.get(c);
        return r === undefined ? '' : VERDICT_CELL[r.verdict];
      }),
    ]);
  return table.toString();
}

function explanation(d: JudgedDifference): string {
  if (d.explainedBy === 'consequence') return 'after the refused post';
  if (d.explainedBy === undefined) return 'UNRECORDED';
  return d.explainedBy.class === 'engine'
    ? `[${d.explainedBy.id}, ENGINE GAP]`
    : `[${d.explainedBy.id}]`;
}

/** One line per difference (refusal consequences folded into a count). */
export function differenceLines(result: ScenarioResult): string[] {
  if (result.error !== undefined) return [`${result.scenario.id}: ERROR ${result.error}`];
  const lines: string[] = [];
  let consequences = 0;
  for (const d of result.differences) {
    if (d.explainedBy === 'consequence') {
      consequences += 1;
      continue;
    }
    const one = (v: string) => (v.includes('\n') ? `${v.split('\n').length} lines` : v);
    lines.push(
      `${result.scenario.id}: ${d.field} engine ${one(d.engine)}, device ${one(d.kernel)} ${explanation(d)}`,
    );
  }
  if (consequences > 0)
    lines.push(
      `${result.scenario.id}: ${consequences} more fields: nothing happened after the refused post`,
    );
  for (const s of result.stale)
    lines.push(`${result.scenario.id}: recorded ${observedText(s)} [${s.id}] did not happen`);
  return lines;
}

/** Each recorded behaviour that explained a difference in this run, once. */
export function renderFindings(results: readonly ScenarioResult[]): string {
  const seen = new Map<string, string>();
  for (const f of results.flatMap((r) => r.findings)) seen.set(f.id, f.why);
  return [...seen].map(([id, why]) => `[${id}] ${why}`).join('\n');
}

/** The whole terminal report. */
export function renderReport(results: readonly ScenarioResult[]): string {
  requireResults(results);
  const lines = results.flatMap(differenceLines);
  return [renderMatrix(results), ...(lines.length > 0 ? ['', 'Differences:', ...lines] : [])].join(
    '\n',
  );
}

const VERDICT_NAMES: Readonly<Record<Verdict, true>> = {
  match: true,
  known: true,
  finding: true,
  fail: true,
  'kernel-crash': true,
  'not-run': true,
  'not-applicable': true,
};

/** `N passed, N failed`. */
export function summaryLine(verdicts: readonly Verdict[], strict = false): string {
  requireArray('interop', 'verdicts', verdicts).forEach((v, i) => {
    requireName('interop', 'verdict', VERDICT_NAMES, v, `verdicts[${i}]`);
  });
  requireBoolean('interop', 'strict', strict);
  const ok = verdicts.filter((v) => passed(v, strict)).length;
  return `${ok} passed, ${verdicts.length - ok} failed`;
}

/**
 * Who made each device and how it is attached (issue 37): the kernel driver, vendor and
 * part ids, firmware, port speed and MTU, netdev and GID; rows only for devices that have
 * them (results written before issue 37 lack them).
 */
function deviceIdentityTable(devices: RunEnvironment['devices']): string[] {
  const known = devices.filter((d) => d.kernelDriver !== undefined);
  if (known.length === 0) return [];
  return [
    '| device | kernel driver | provider | vendor:part | firmware | port speed | MTU | netdev | address | GID index |',
    '|---|---|---|---|---|---|---|---|---|---|',
    ...known.map(
      (d) =>
        `| ${d.name} | ${d.kernelDriver} | ${d.provider} | ${d.vendorId}:${d.vendorPartId} | ${d.firmware} | ${d.portSpeed} | ${d.activeMtu} | ${d.netdev || '—'} | ${d.address} | ${d.gidIndex} |`,
    ),
    '',
  ];
}

function mdEscape(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\n/g, '<br>');
}

/** report.md: environment, the matrix, every difference with its reason and spec sections. */
export function renderMarkdown(
  results: readonly ScenarioResult[],
  env: RunEnvironment,
  strict = false,
  pair?: Readonly<Record<PairGuest, RunEnvironment>>,
): string {
  requireResults(results);
  requireRunEnvironment(env);
  requireBoolean('interop', 'strict', strict);
  const { columns, rows } = matrixOf(results);
  const out: string[] = ['# rdma-interop: engine vs devices', ''];
  if (pair === undefined)
    out.push(`Kernel ${env.kernel}, rdma-core ${env.rdmaCore}, Node ${env.node}.`, '');
  else {
    out.push('A guest pair joined by a link (`run --link`):', '');
    out.push('| guest | kernel | rdma-core | providers |', '|---|---|---|---|');
    for (const guest of PAIR_GUESTS) {
      const e = pair[guest];
      out.push(
        `| ${guest} | ${e.kernel} | ${e.rdmaCore} | ${e.devices.map((d) => `${d.name}: ${d.provider}`).join(', ')} |`,
      );
    }
    out.push('');
  }
  if (env.devices.length > 0) {
    out.push(
      '| device | provider | transport | atomic_cap | max_qp_rd_atom | max_qp_init_rd_atom |',
    );
    out.push('|---|---|---|---|---|---|');
    for (const d of env.devices)
      out.push(
        `| ${d.name} | ${d.provider} | ${d.transport} | ${d.atomicCap} | ${d.maxQpRdAtom} | ${d.maxQpInitRdAtom} |`,
      );
    out.push('', ...deviceIdentityTable(env.devices));
  }
  out.push(
    `**${summaryLine(
      results.map((r) => r.verdict),
      strict,
    )}**`,
    '',
  );
  out.push(`| scenario | ${columns.join(' | ')} |`, `|---|${columns.map(() => '---').join('|')}|`);
  for (const row of rows)
    out.push(
      `| ${row.name} | ${columns
        .map((c) => {
          const r = row.cells.get(c);
          return r === undefined ? '' : VERDICT_CELL[r.verdict];
        })
        .join(' | ')} |`,
    );
  const paired = results.filter((r) => r.pair !== undefined);
  if (paired.length > 0) {
    out.push('', '## Results by pair', '');
    out.push('| result | requester | responder | verdict |', '|---|---|---|---|');
    for (const r of paired)
      if (r.pair !== undefined)
        out.push(
          `| ${r.scenario.id} | ${mdEscape(sideText(r.pair.requester))} | ${mdEscape(sideText(r.pair.responder))} | ${VERDICT_CELL[r.verdict]} |`,
        );
  }
  const noted = results.filter((r) => r.kernel?.note !== undefined);
  if (noted.length > 0) {
    // What a device's run noted beside its fields (not compared; results.json's device_note).
    out.push('', '## Device notes', '');
    out.push('| result | device | note |', '|---|---|---|');
    for (const r of noted)
      out.push(
        `| ${r.scenario.id} | ${mdEscape(r.pair === undefined ? r.scenario.device : pairText(r.pair))} | ${mdEscape(r.kernel?.note ?? '')} |`,
      );
  }
  const notApplicable = results.filter((r) => r.verdict === 'not-applicable');
  if (notApplicable.length > 0) {
    // Issue 37: a scenario a device cannot run is listed with what the device lacks.
    out.push('', '## Not applicable', '');
    out.push('| scenario | device | lacks |', '|---|---|---|');
    for (const r of notApplicable)
      out.push(
        `| ${r.scenario.id} | ${deviceOf(r.scenario)} | ${mdEscape((r.notApplicable ?? []).join(', '))} |`,
      );
  }
  out.push('', '## Differences', '');
  const withDifferences = results.filter(
    (r) => r.differences.length > 0 || r.error !== undefined || r.stale.length > 0,
  );
  if (withDifferences.length === 0) out.push('None: every field of every scenario matched.');
  for (const r of withDifferences) {
    out.push(`### ${r.scenario.id} (${r.scenario.title})`, '');
    if (r.pair !== undefined) out.push(`Pair: ${mdEscape(pairText(r.pair))}.`, '');
    if (r.error !== undefined) {
      out.push(`Error: ${r.error}`, '');
      continue;
    }
    out.push('| field | engine | device | reason |', '|---|---|---|---|');
    for (const d of r.differences) {
      const reason =
        d.explainedBy === 'consequence'
          ? 'nothing happened after the refused post'
          : d.explainedBy === undefined
            ? '**unrecorded**'
            : `${d.explainedBy.id}: ${d.explainedBy.why}${d.explainedBy.spec ? ` (spec: ${d.explainedBy.spec})` : ''}`;
      out.push(
        `| ${d.field} | ${mdEscape(d.engine)} | ${mdEscape(d.kernel)} | ${mdEscape(reason)} |`,
      );
    }
    for (const s of r.stale)
      out.push(`| ${mdEscape(observedText(s))} | | | **stale record** ${s.id} did not happen |`);
    out.push('');
  }
  return out.join('\n');
}
