import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { notRun } from '../../helpers/not-run.js';
import { cliShim, extractBlocks, KNOWN_LANGUAGES, notRunReason, ROOT } from '../docs/examples.js';

// docker/README.md follows the documentation's convention (test/host/docs/examples.ts
// checks README.md and docs/*.md): every sh block runs, or is marked not-run with a
// reason; and it, README.md and docs/docker.md give the commands for both kinds of host.

const FILE = 'docker/README.md';
const blocks = extractBlocks(FILE, readFileSync(join(ROOT, FILE), 'utf8'));
const scratch = mkdtempSync(join(tmpdir(), 'rdma-docker-readme-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('docker/README.md: its code blocks follow the convention of docs/*.md', () => {
  it('has sh blocks, each fence naming ts, sh, text or nothing', () => {
    expect(blocks.filter((b) => b.language === 'sh').length).toBeGreaterThanOrEqual(3);
    const unknown = blocks
      .filter((b) => !(KNOWN_LANGUAGES as readonly string[]).includes(b.language))
      .map((b) => `${b.id}: \`\`\`${b.language}`);
    expect(unknown).toEqual([]);
  });

  for (const block of blocks.filter((b) => b.language === 'sh')) {
    const reason = notRunReason(blocks, block);
    // A block marked not-run is counted as not run by the closing line, never passed.
    if (reason !== undefined) notRun(`${block.id} runs`, reason);
    else {
      it(`${block.id} runs, every command exiting 0`, () => {
        const r = spawnSync('bash', ['-euo', 'pipefail', '-c', block.code], {
          cwd: ROOT,
          encoding: 'utf8',
          timeout: 120_000,
          env: { ...process.env, PATH: `${cliShim(scratch)}:${process.env.PATH ?? ''}` },
        });
        expect(r.status, `${r.stdout}${r.stderr}`).toBe(0);
      });
    }
  }
});

describe('the commands for both kinds of host', () => {
  /** The sh code of a Markdown file, all blocks joined. */
  const shCode = (file: string) =>
    extractBlocks(file, readFileSync(join(ROOT, file), 'utf8'))
      .filter((b) => b.language === 'sh')
      .map((b) => b.code)
      .join('');

  it.each(['README.md', FILE, 'docs/docker.md'])(
    '%s: a host with devices (a registry base, privileged and device-nodes-only) and one without (the local base, the guest)',
    (file) => {
      const code = shCode(file);
      // With RDMA devices: a registry's base, the privileged container, the device nodes only.
      expect(code).toMatch(/^rdma-interop docker build --base node:26-bookworm-slim$/m);
      expect(code).toMatch(/^rdma-interop docker run -- .*--report/m);
      expect(code).toMatch(/^rdma-interop docker run --mode devices -- /m);
      // Without: the local base's set-up, the build from it, the run (in the guest).
      expect(code).toMatch(/^bash scripts\/setup\/docker\.sh/m);
      expect(code).toMatch(/^rdma-interop docker build +(#|$)/m);
    },
  );

  it('the CLI has the options those commands use', () => {
    const r = spawnSync(
      process.execPath,
      [join(ROOT, 'dist', 'cli', 'main.js'), 'docker', 'run', '--help'],
      { encoding: 'utf8' },
    );
    expect(r.status, r.stderr).toBe(0);
    for (const option of [
      '--runtime <where>',
      '--mode <mode>',
      '--handover <how>',
      '--base <image>',
    ])
      expect(r.stdout).toContain(option);
    const build = spawnSync(
      process.execPath,
      [join(ROOT, 'dist', 'cli', 'main.js'), 'docker', 'build', '--help'],
      { encoding: 'utf8' },
    );
    expect(build.stdout).toContain('--base <image>');
  });
});
