/**
 * comparison.md: the runs (host, kernel, rdma-core, Node, devices with their provider),
 * then per device every value that differs between the runs that have it (the value
 * unlike the first run's in bold, the explaining record after it), then the verdicts.
 */
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

export function renderComparisonMarkdown(c: Comparison): string {
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
  return out.join('\n');
}
