/**
 * comparison.md: the runs (host, kernel, rdma-core, Node, devices with their provider),
 * then per device every value that differs between the runs that have it (the value
 * unlike the first run's in bold, the explaining record after it), then the verdicts.
 */
import {
  requireArray,
  requireBoolean,
  requireInteger,
  requireObject,
  requireString,
} from '../../arguments.js';
import { renderTestsTable } from '../../rdma-core-tests/compare.js';
import { ABSENT, type ComparedField, type Comparison } from './merge.js';

function md(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\n/g, '<br>');
}

function cell(f: ComparedField, label: string, first: string): string {
  const v = f.values[label] ?? ABSENT;
  const reason = f.reasons[label];
  const shown = v === first ? md(v) : `**${md(v)}**`;
  return reason === undefined ? shown : `${shown} (${md(reason)})`;
}

/** A Comparison as compareReports makes it (issue 25: no raw errors from bad input). */
function checkComparison(c: unknown): void {
  const o = requireObject('interop', 'comparison', c) as Record<string, unknown>;
  requireArray('interop', 'comparison.runs', o.runs).forEach((raw, i) => {
    const r = requireObject('interop', `comparison.runs[${i}]`, raw) as Record<string, unknown>;
    for (const key of ['label', 'host', 'kernel', 'rdmaCore', 'node'] as const)
      requireString('interop', `comparison.runs[${i}].${key}`, r[key], true);
    requireInteger('interop', `comparison.runs[${i}].scenarios`, r.scenarios, 0, 2 ** 31);
    requireArray('interop', `comparison.runs[${i}].devices`, r.devices).forEach((d, j) => {
      const dv = requireObject('interop', `comparison.runs[${i}].devices[${j}]`, d) as Record<
        string,
        unknown
      >;
      requireString('interop', `comparison.runs[${i}].devices[${j}].name`, dv.name);
      requireString('interop', `comparison.runs[${i}].devices[${j}].provider`, dv.provider);
    });
  });
  requireArray('interop', 'comparison.fields', o.fields).forEach((raw, i) => {
    const f = requireObject('interop', `comparison.fields[${i}]`, raw) as Record<string, unknown>;
    for (const key of ['scenario', 'device', 'field'] as const)
      requireString('interop', `comparison.fields[${i}].${key}`, f[key], true);
    requireObject('interop', `comparison.fields[${i}].values`, f.values);
    requireObject('interop', `comparison.fields[${i}].reasons`, f.reasons);
    requireBoolean('interop', `comparison.fields[${i}].changed`, f.changed);
  });
  requireInteger('interop', 'comparison.changedCount', o.changedCount, 0, 2 ** 31);
}

export function renderComparisonMarkdown(c: Comparison): string {
  checkComparison(c);
  const out: string[] = ['# Interop results compared', ''];
  out.push('| run | host | kernel (uname -r) | rdma-core | Node | scenarios | devices |');
  out.push('|---|---|---|---|---|---|---|');
  for (const r of c.runs) {
    const devices = r.devices.map((d) => `${d.name} (${d.provider})`).join(', ');
    out.push(
      `| ${md(r.label)} | ${md(r.host)} | ${md(r.kernel)} | ${md(r.rdmaCore)} | ${md(r.node)} | ${r.scenarios} | ${md(devices)} |`,
    );
  }
  out.push('', `${c.changedCount} of ${c.fields.length} observed values differ between the runs.`);
  const deviceNames = [...new Set(c.runs.flatMap((r) => r.devices.map((d) => d.name)))];
  for (const device of deviceNames) {
    const labels = c.runs
      .filter((r) => r.devices.some((d) => d.name === device))
      .map((r) => r.label);
    const providers = c.runs.flatMap((r) =>
      r.devices.filter((d) => d.name === device).map((d) => d.provider),
    );
    const ofDevice = c.fields.filter((f) => f.device === device);
    const changed = ofDevice.filter((f) => f.changed);
    out.push(
      '',
      `## ${device}`,
      '',
      `Runs: ${labels.map(md).join(', ')}; providers: ${providers.map(md).join(', ')}.`,
      '',
    );
    out.push('### Changed values', '');
    if (changed.length === 0) out.push('None.');
    else {
      out.push(`| scenario | field | ${labels.map(md).join(' | ')} |`);
      out.push(`|---|---|${labels.map(() => '---').join('|')}|`);
      for (const f of changed) {
        const first = f.values[labels[0] ?? ''] ?? ABSENT;
        out.push(
          `| ${md(f.scenario)} | ${md(f.field)} | ${labels.map((l) => cell(f, l, first)).join(' | ')} |`,
        );
      }
    }
    out.push('', '### Verdicts', '');
    out.push(`| scenario | ${labels.map(md).join(' | ')} |`);
    out.push(`|---|${labels.map(() => '---').join('|')}|`);
    for (const f of ofDevice.filter((x) => x.field === 'verdict')) {
      const cells = labels.map((l) => {
        const v = md(f.values[l] ?? ABSENT);
        return f.changed ? `**${v}**` : v;
      });
      out.push(`| ${md(f.scenario)} | ${cells.join(' | ')} |`);
    }
  }
  out.push(...renderTestsTable(c));
  return out.join('\n');
}
