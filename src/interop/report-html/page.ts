/**
 * report.html: one self-contained page (inline style, script and SVG; no network) with the
 * scenario × device (× kernel) matrix, filters, and for each result its ladder, completions,
 * memory words and differences with their recorded reasons and spec sections. The same
 * page shows one run (`run --report`) or several kernel lines (`run --kernels --report`),
 * the latter with the values that changed between kernels.
 */
import { html } from 'ghtml';
import { fieldName } from '../../judge/observation.js';
import type { Comparison } from '../comparison/index.js';
import { pairText } from '../link/sides.js';
import { SCRIPT, STYLE } from './client.js';
import { type DifferenceLookup, differenceClass, ladderSvg } from './ladder.js';
import type { DifferenceEntry, FindingEntry, RunInput, ScenarioEntry } from './model.js';
import { completionsOf, isOtherField, memoryOffsets, packetsOf } from './packets.js';
import { packetTimes } from './timing.js';

/** The suite's verdicts, in the page's order (`kernel-crash` is the tester's alone). */
const VERDICTS = ['match', 'known', 'finding', 'fail', 'not-run', 'not-applicable'] as const;
const VERDICT_TEXT: Readonly<Record<string, string>> = {
  match: 'match',
  known: 'known',
  finding: 'finding',
  fail: 'FAIL',
  'not-run': 'NOT RUN',
  'not-applicable': 'n/a',
};

/** The public RFC text of a section, for links from spec citations (IBTA is not public). */
function rfcLink(rfc: string, section: string | undefined): string {
  return `https://www.rfc-editor.org/rfc/rfc${rfc}${section === undefined ? '' : `#section-${section}`}`;
}

/** A spec citation with each `RFC nnnn §x.y` (and a following bare `§x.y`) linked. */
export function specHtml(spec: string): string {
  const out: string[] = [];
  let last = 0;
  let rfc: string | undefined;
  for (const m of spec.matchAll(/RFC (\d{4})(?: §(\d+(?:\.\d+)*))?|§(\d+(?:\.\d+)*)/g)) {
    const at = m.index ?? 0;
    out.push(html`${spec.slice(last, at)}`);
    if (m[1] !== undefined) rfc = m[1];
    const section = m[2] ?? m[3];
    out.push(
      rfc === undefined
        ? html`${m[0]}`
        : html`<a href="${rfcLink(rfc, section)}" target="_blank" rel="noopener">${m[0]}</a>`,
    );
    last = at + m[0].length;
  }
  out.push(html`${spec.slice(last)}`);
  return out.join('');
}

function reasonHtml(d: DifferenceEntry, findings: ReadonlyMap<string, FindingEntry>): string {
  if (d.explainedBy === null) return html`<strong>unrecorded</strong>: no record explains it`;
  if (d.explainedBy === 'consequence-of-refused-post')
    return 'nothing happened after the refused post';
  const f = findings.get(d.explainedBy);
  return html`<code>${d.explainedBy}</code>!${f === undefined ? '' : html`: ${f.why}`}!${
    f?.spec ? html` <span class="spec">(spec: !${specHtml(f.spec)})</span>` : ''
  }`;
}

/** Tooltips carry the reason's start; its whole text and spec are under the ladder once. */
const TOOLTIP_CHARS = 160;

function reasonText(d: DifferenceEntry, findings: ReadonlyMap<string, FindingEntry>): string {
  if (d.explainedBy === null) return 'unrecorded difference';
  if (d.explainedBy === 'consequence-of-refused-post')
    return 'nothing happened after the refused post';
  const f = findings.get(d.explainedBy);
  const text = `${d.explainedBy}${f === undefined ? '' : `: ${f.why}`}`;
  return text.length <= TOOLTIP_CHARS ? text : `${text.slice(0, TOOLTIP_CHARS - 1)}…`;
}

function lookupOf(s: ScenarioEntry, findings: ReadonlyMap<string, FindingEntry>): DifferenceLookup {
  const byField = new Map(s.differences.map((d) => [d.field, d]));
  return {
    of: (field) =>
      byField.get(field) ??
      (field.endsWith('.') ? s.differences.find((d) => d.field.startsWith(field)) : undefined),
    reason: (d) => reasonText(d, findings),
  };
}

function cellClass(d: DifferenceEntry | undefined): string {
  return d === undefined ? '' : `d-${differenceClass(d)}`;
}

/** The inside of a result: ladder, memory, other fields, differences (in a template). */
function resultBody(
  run: RunInput,
  s: ScenarioEntry,
  findings: ReadonlyMap<string, FindingEntry>,
): string {
  const diffs = lookupOf(s, findings);
  const engine = packetsOf(s.engine);
  const device = packetsOf(s.device_fields);
  const pcap = s.pcap === undefined ? undefined : run.pcap(s.pcap);
  const times = pcap === undefined ? new Map<string, bigint>() : packetTimes(pcap, device);
  const svg = ladderSvg({
    engine,
    device,
    times,
    engineCompletions: completionsOf(s.engine),
    deviceCompletions: completionsOf(s.device_fields),
    deviceName: s.device,
    diffs,
  });
  const before = run.memoryBefore(s.id) ?? {};
  const offsets = memoryOffsets(s.engine, s.device_fields);
  const dev = s.device_fields ?? {};
  const memory =
    offsets.length === 0
      ? ''
      : html`<table class="fields"><tr><th>memory word</th><th>before</th><th>engine after</th><th>${s.device} after</th></tr>!${offsets.map(
          (o) => {
            const field = fieldName({ kind: 'memory', offset: o });
            const d = diffs.of(field);
            return html`<tr><td>${field}</td><td>${before[field] ?? '—'}</td><td>${s.engine[field] ?? '—'}</td><td class="${cellClass(d)}" title="${d === undefined ? '' : diffs.reason(d)}">${dev[field] ?? '—'}</td></tr>`;
          },
        )}</table>`;
  const others = [...new Set([...Object.keys(s.engine), ...Object.keys(dev)])].filter(isOtherField);
  const otherTable =
    others.length === 0
      ? ''
      : html`<table class="fields"><tr><th>other field</th><th>engine</th><th>${s.device}</th></tr>!${others.map(
          (field) => {
            const d = diffs.of(field);
            return html`<tr><td>${field}</td><td>${s.engine[field] ?? '—'}</td><td class="${cellClass(d)}" title="${d === undefined ? '' : diffs.reason(d)}">${dev[field] ?? '—'}</td></tr>`;
          },
        )}</table>`;
  const shown = s.differences.filter((d) => d.explainedBy !== 'consequence-of-refused-post');
  const folded = s.differences.length - shown.length;
  const reasons = [
    ...new Set(shown.flatMap((d) => (d.explainedBy === null ? [] : [d.explainedBy]))),
  ];
  const differences =
    shown.length === 0 && folded === 0 && s.stale.length === 0
      ? ''
      : html`<table class="fields diffs"><tr><th>difference</th><th>engine</th><th>${s.device}</th><th>explained by</th></tr>!${shown.map(
          (d) =>
            html`<tr><td>${d.field}</td><td>${d.engine}</td><td class="${cellClass(d)}">${d.device}</td><td class="reason">!${d.explainedBy === null ? '<strong class="d-unrecorded">unrecorded</strong>' : html`<code>${d.explainedBy}</code>`}</td></tr>`,
        )}!${
          folded === 0
            ? ''
            : html`<tr><td colspan="3" class="d-consequence">${folded} more field${folded === 1 ? '' : 's'}: ${s.differences
                .filter((d) => d.explainedBy === 'consequence-of-refused-post')
                .map((d) => d.field)
                .join(
                  ', ',
                )}</td><td class="reason">nothing happened after the refused post</td></tr>`
        }!${s.stale.map(
          (id) =>
            html`<tr><td colspan="3">recorded behaviour did not happen</td><td class="reason d-unrecorded"><code>${id}</code>: stale record</td></tr>`,
        )}</table>!${reasons.map((id) => html`<p class="why">!${reasonHtml({ field: '', engine: '', device: '', explainedBy: id }, findings)}</p>`)}`;
  const error = s.error === undefined ? '' : html`<p class="d-unrecorded">Error: ${s.error}</p>`;
  const lacks =
    s.notApplicable === undefined
      ? ''
      : html`<p class="why note">Not applicable on ${s.device}: it lacks ${s.notApplicable.join(', ')}.</p>`;
  // Not compared: repeats on the wire, the exact words of Reads judged by their window.
  const note =
    s.device_note === undefined
      ? ''
      : html`<p class="why note">${s.device} noted: ${s.device_note}</p>`;
  return `${error}${lacks}${note}${svg}<div class="tables">${memory}${otherTable}</div>${differences}`;
}

function anchorOf(run: RunInput, s: ScenarioEntry): string {
  return `r-${run.line}-${s.id}`.replace(/[^A-Za-z0-9_-]/g, '_');
}

function columnOf(s: ScenarioEntry): string {
  return `${s.device} ${s.postApi}`;
}

function dataAttributes(run: RunInput, s: ScenarioEntry): string {
  return html`data-verdict="${s.verdict}" data-family="${s.family}" data-device="${s.device}" data-kernel="${run.line}" data-id="${s.id}"`;
}

function matrixHtml(runs: readonly RunInput[]): string {
  const columns: { key: string; device: string; column: string; line: string }[] = [];
  const rows: { name: string; family: string }[] = [];
  const cells = new Map<string, { run: RunInput; s: ScenarioEntry }>();
  for (const run of runs)
    for (const s of run.results.scenarios) {
      const key = `${columnOf(s)}\u0000${run.line}`;
      if (!columns.some((c) => c.key === key))
        columns.push({ key, device: s.device, column: columnOf(s), line: run.line });
      if (!rows.some((r) => r.name === s.name)) rows.push({ name: s.name, family: s.family });
      cells.set(`${s.name}\u0000${key}`, { run, s });
    }
  const several = runs.length > 1;
  // A device's kernel lines side by side: the comparison reads along a row.
  const order = (c: (typeof columns)[number]) => runs.findIndex((r) => r.line === c.line);
  const firstSeen = (c: (typeof columns)[number]) =>
    columns.findIndex((x) => x.column === c.column);
  columns.sort((a, b) => firstSeen(a) - firstSeen(b) || order(a) - order(b));
  const head = columns.map(
    (c) =>
      html`<th data-column data-device="${c.device}" data-kernel="${c.line}">${c.column}!${several ? html`<br>kernel ${c.line}` : ''}</th>`,
  );
  const body = rows.map(
    (r) =>
      html`<tr><td class="name" title="${r.family}">${r.name}</td>!${columns.map((c) => {
        const cell = cells.get(`${r.name}\u0000${c.key}`);
        return cell === undefined
          ? html`<td class="cell" data-column data-device="${c.device}" data-kernel="${c.line}"></td>`
          : html`<td class="cell" data-column data-device="${c.device}" data-kernel="${c.line}"><a class="v v-${cell.s.verdict}" href="#${anchorOf(cell.run, cell.s)}" title="${cell.s.id}" !${dataAttributes(cell.run, cell.s)}>${VERDICT_TEXT[cell.s.verdict] ?? cell.s.verdict}</a></td>`;
      })}</tr>`,
  );
  return html`<div class="matrix-wrap"><table class="matrix"><thead><tr><th>scenario</th>!${head}</tr></thead><tbody>!${body}</tbody></table></div>`;
}

function filtersHtml(runs: readonly RunInput[]): string {
  const all = runs.flatMap((r) => r.results.scenarios);
  const options = (values: string[]) =>
    [...new Set(values)].sort().map((v) => html`<option value="${v}">${v}</option>`);
  const count = (v: string) => all.filter((s) => s.verdict === v).length;
  return html`<div class="filters">
<span>verdict:</span>!${VERDICTS.map(
    (v) =>
      html`<label><input type="checkbox" data-filter="verdict" value="${v}" checked> <span class="v v-${v}">${VERDICT_TEXT[v]}</span> ${count(v)}</label>`,
  )}
<label>family <select data-filter="family"><option value="">all</option>!${options(all.map((s) => s.family))}</select></label>
<label>device <select data-filter="device"><option value="">all</option>!${options(all.map((s) => s.device))}</select></label>
<label>kernel <select data-filter="kernel"><option value="">all</option>!${options(runs.map((r) => r.line))}</select></label>
<label>id <input type="search" data-filter="text" placeholder="part of a scenario id"></label>
<span class="meta"><span id="shown">${all.length}</span> of ${all.length} results shown</span>
</div>`;
}

function resultsHtml(runs: readonly RunInput[]): string {
  return runs
    .flatMap((run) => {
      const findings = new Map(run.results.findings.map((f) => [f.id, f]));
      return run.results.scenarios.map((s) => {
        const shown = s.differences.filter(
          (d) => d.explainedBy !== 'consequence-of-refused-post',
        ).length;
        return html`<details class="result" id="${anchorOf(run, s)}" !${dataAttributes(run, s)}><summary><span class="v v-${s.verdict}">${VERDICT_TEXT[s.verdict] ?? s.verdict}</span> <code>${s.id}</code> ${s.title} <span class="meta">${s.device} ${s.postApi}${s.pair === undefined ? '' : ` · ${pairText(s.pair)}`}${runs.length > 1 ? ` · kernel ${run.line}` : ''} · ${s.seconds.toFixed(2)} s${shown > 0 ? ` · ${shown} difference${shown === 1 ? '' : 's'}` : ''}</span></summary><div class="body"></div><template>!${resultBody(run, s, findings)}</template></details>`;
      });
    })
    .join('\n');
}

function comparisonHtml(comparison: Comparison): string {
  const changed = comparison.fields.filter((f) => f.changed);
  const lines = comparison.runs.map((r) => r.label);
  return html`<details class="changed"><summary><h2>Values that changed between kernels (${changed.length})</h2></summary>
<table class="fields"><tr><th>scenario</th><th>device</th><th>field</th>!${lines.map((l) => html`<th>${l}</th>`)}</tr>!${changed.map(
    (f) =>
      html`<tr><td>${f.scenario}</td><td>${f.device}</td><td>${f.field}</td>!${lines.map((l) => html`<td>${f.values[l] ?? '—'}</td>`)}</tr>`,
  )}</table></details>`;
}

function probesHtml(runs: readonly RunInput[]): string {
  const rows = runs.flatMap((run) => (run.results.probes ?? []).map((p) => ({ run, p })));
  if (rows.length === 0) return '';
  return html`<h2>Wire probes</h2>
<table class="fields"><tr><th>probe</th>!${runs.length > 1 ? '<th>kernel</th>' : ''}<th>verdict</th><th>engine</th><th>siw</th></tr>!${rows.map(
    ({ run, p }) =>
      html`<tr><td>${p.id}</td>!${runs.length > 1 ? html`<td>${run.line}</td>` : ''}<td><span class="v v-${p.verdict}">${VERDICT_TEXT[p.verdict] ?? p.verdict}</span></td><td>${p.error ?? (p.engine || '(nothing)')}</td><td>${p.error === undefined ? p.device || '(nothing)' : ''}</td></tr>`,
  )}</table>`;
}

/** The device facts a probed device carries (issue 37), in the order report.md shows them. */
const DEVICE_FACTS = [
  ['kernelDriver', 'kernel driver'],
  ['provider', 'provider'],
  ['vendorId', 'vendor'],
  ['vendorPartId', 'part'],
  ['firmware', 'firmware'],
  ['portSpeed', 'port speed'],
  ['activeMtu', 'MTU'],
  ['netdev', 'netdev'],
  ['address', 'address'],
  ['gidIndex', 'GID index'],
  ['capabilities', 'capabilities'],
] as const;

function environmentHtml(run: RunInput, several: boolean): string {
  const e = run.results.environment;
  const devices = e.devices.map((d) => `${String(d.name)} (${String(d.provider)})`).join(', ');
  const probed = e.devices.filter((d) => d.kernelDriver !== undefined);
  const facts =
    probed.length === 0
      ? ''
      : html`<table class="fields devices"><tr><th>device</th>!${DEVICE_FACTS.map(([, label]) => html`<th>${label}</th>`)}</tr>!${probed.map(
          (d) =>
            html`<tr><td>${String(d.name)}</td>!${DEVICE_FACTS.map(([key]) => html`<td>${String(d[key] ?? '—')}</td>`)}</tr>`,
        )}</table>`;
  return html`<p class="env">${several ? `kernel line ${run.line}: ` : ''}kernel ${e.kernel}, rdma-core ${e.rdmaCore}, Node ${e.node}${devices === '' ? '' : `; devices ${devices}`}</p>!${facts}`;
}

/** The page for one run or, with several runs and their comparison, for a kernel matrix. */
export function renderReportHtml(runs: readonly RunInput[], comparison?: Comparison): string {
  const all = runs.flatMap((r) => r.results.scenarios);
  const total = (v: string) => all.filter((s) => s.verdict === v).length;
  const title =
    runs.length > 1
      ? `rdma-interop: engine vs devices on kernels ${runs.map((r) => r.line).join(', ')}`
      : 'rdma-interop: engine vs devices';
  return html`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title><style>!${STYLE}</style></head><body>
<h1>${title}</h1>
!${runs.map((r) => environmentHtml(r, runs.length > 1))}
<p class="totals">!${VERDICTS.map((v) => html`<span><span class="v v-${v}">${VERDICT_TEXT[v]}</span> ${total(v)}</span>`)}</p>
!${filtersHtml(runs)}
<h2>Matrix</h2>
<p class="meta">A cell opens its result below. Open a result to draw its ladder: the engine's predicted packets (left) beside the packets captured on the wire (right), then the completions; a difference is coloured (<span class="d-known">recorded behaviour</span>, <span class="d-unrecorded">unrecorded</span>) and its reason is its tooltip and in the table under the ladder.</p>
!${matrixHtml(runs)}
!${comparison === undefined ? '' : comparisonHtml(comparison)}
<h2>Results</h2>
!${resultsHtml(runs)}
!${probesHtml(runs)}
<script>!${SCRIPT}</script>
</body></html>
`;
}
