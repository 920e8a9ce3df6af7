/**
 * `rdma-interop findings` (issue 33) as a user runs it: host only, Markdown by default,
 * HTML and JSON on request, the three files with --report, and every bad value a one-line
 * usage error (exit 2) or, for a directory it cannot read, a one-line error (exit 1).
 */
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { rdmaInterop } from './run-cli.js';

function findings(args: string[]): { status: number; stdout: string; stderr: string } {
  return rdmaInterop(['findings', ...args]);
}

describe('rdma-interop findings', () => {
  it('prints the Markdown report, defects still present upstream first', () => {
    const r = findings([]);
    expect(r.status).toBe(0);
    expect(r.stdout.split('\n')[0]).toBe(
      '# findings: rxe, siw, librxe and libsiw where they differ from the engine',
    );
    const headings = r.stdout.split('\n').filter((l) => l.startsWith('## '));
    expect(headings[0]).toMatch(/^## Defects still present upstream \(\d+\)$/);
    expect(r.stdout).toContain(
      '| record | component | class | rule | source | reproducer | patch | 6.1 | 6.12 | 7.3 |',
    );
  });

  it('--format json and --kernels select what is printed', () => {
    const r = findings(['--format', 'json', '--kernels', '7.3,6.1']);
    expect(r.status).toBe(0);
    const doc = JSON.parse(r.stdout) as { schema: string; lines: string[] };
    expect(doc.schema).toBe('rdma-interop/findings@1');
    expect(doc.lines).toEqual(['7.3', '6.1']);
    expect(findings(['--format', 'html', '--kernels', 'all']).stdout).toMatch(/^<!DOCTYPE html>/);
  });

  it('--report writes findings.md, findings.html and findings.json', () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'findings-cli-')), 'out');
    const r = findings(['--report', dir]);
    expect(r.status).toBe(0);
    for (const f of ['findings.md', 'findings.html', 'findings.json'])
      expect(existsSync(join(dir, f)), f).toBe(true);
    expect(readFileSync(join(dir, 'findings.md'), 'utf8')).toBe(r.stdout);
  });

  it.each([
    [
      ['--kernels', '5.4'],
      /--kernels <lines>' argument '5.4' is invalid\. Unknown kernel line 5\.4/,
    ],
    [['--kernels', ','], /Unknown kernel line \(none\)/],
    [['--format', 'pdf'], /argument 'pdf' is invalid\. Allowed choices are md, html, json/],
    [['--results', '/nonexistent/run'], /Expected a directory/],
    [['--report'], /option '--report <dir>' argument missing/],
  ])('%j is a one-line usage error (exit 2)', (args, message) => {
    const r = findings(args);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/^rdma-interop findings: error: /);
    expect(r.stderr).toMatch(message);
    expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
  });

  it('a directory without results is a one-line error (exit 1), no stack', () => {
    const r = findings(['--results', mkdtempSync(join(tmpdir(), 'findings-cli-'))]);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/^rdma-interop findings: error.*no results\.json in it/);
    expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(r.stdout).toBe('');
  });
});
