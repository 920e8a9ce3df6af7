import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

// Mixed link pairs on real guests (issue 22), through the CLI as a user runs them. Each
// pair is one boot of two guests; a pair that differs runs both ways round in that boot
// (A requests from B, then B from A). CI runs the three pairs of the issue (18 s each
// under TCG on a quiet 2-core host, 50 s when busy):
//   - rxe on 6.1 (bookworm's rdma-core 44) with rxe on 7.3 (rdma-core 56.1), every rxe
//     link scenario;
//   - the patched siw (6.1) with the stock siw (7.3), every siw link scenario: RFC 7306
//     requests towards a peer without the extension, and the plain RDMAP ones;
//   - the patched siw on 6.1 with the patched siw on 7.3 (17 s of guest time, boot
//     included): the set-up builds the patched module for every kernel line
//     (scripts/setup.sh, scripts/setup/siw-patched.sh).

const CLI = join(process.cwd(), 'dist', 'cli', 'main.js');
const WORD = '0x0123456789abcdef';

interface Side {
  readonly guest: string;
  readonly provider: string;
  readonly kernel: string;
  readonly rdmaCore: string;
}

interface Entry {
  readonly id: string;
  readonly verdict: string;
  readonly pair: { readonly requester: Side; readonly responder: Side };
  readonly device_fields: Record<string, string> | null;
  readonly differences: readonly { field: string; explainedBy: string | null }[];
  readonly error?: string;
}

interface Run {
  readonly status: number | null;
  readonly output: string;
  readonly scenarios: readonly Entry[];
  readonly report: string;
}

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

async function runPair(args: readonly string[]): Promise<Run> {
  const dir = mkdtempSync(join(tmpdir(), 'rdma-interop-pairs-'));
  dirs.push(dir);
  const child = spawn(process.execPath, [CLI, 'run', '--link', ...args, '--report', dir], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (c: Buffer) => {
    output += c.toString();
  });
  child.stderr.on('data', (c: Buffer) => {
    output += c.toString();
  });
  const status = await new Promise<number | null>((resolve) => child.on('close', resolve));
  const results = join(dir, 'results.json');
  const scenarios = existsSync(results)
    ? (JSON.parse(readFileSync(results, 'utf8')) as { scenarios: Entry[] }).scenarios
    : [];
  const md = join(dir, 'report.md');
  return { status, output, scenarios, report: existsSync(md) ? readFileSync(md, 'utf8') : '' };
}

function entry(run: Run, id: string): Entry {
  const found = run.scenarios.find((s) => s.id === id);
  if (found === undefined) throw new Error(`${id} missing from results.json\n${run.output}`);
  return found;
}

const failing = (run: Run) =>
  run.scenarios
    .filter((s) => s.verdict !== 'match' && s.verdict !== 'known')
    .map((s) => ({ id: s.id, verdict: s.verdict, error: s.error }));

describe('rxe 6.1 with rxe 7.3, both ways round', () => {
  let run: Run;
  it('boots the pair once and runs every rxe link scenario each way', async () => {
    run = await runPair(['--device', 'rxe0', '--peer-kernel', '7.3']);
    expect(run.output).toMatch(
      /A: kernel 6\.1\.\S+, siw stock; B: kernel 7\.3\.\S+, siw stock; both ways round/,
    );
    expect(failing(run)).toEqual([]);
    expect(run.status, run.output).toBe(0);
    expect(run.scenarios.filter((s) => s.id.endsWith('--b-to-a'))).toHaveLength(
      run.scenarios.length / 2,
    );
  }, 600_000);

  it('each result names its pair: kernel, rdma-core and provider of each side', () => {
    const forward = entry(run, 'link-rxe-fetch-add').pair;
    const reverse = entry(run, 'link-rxe-fetch-add--b-to-a').pair;
    expect(forward.requester).toMatchObject({ guest: 'A', provider: 'rxe' });
    expect(forward.requester.kernel).toMatch(/^6\.1\./);
    expect(forward.requester.rdmaCore).toMatch(/^44\./);
    expect(forward.responder).toMatchObject({ guest: 'B', provider: 'rxe', rdmaCore: '56.1' });
    expect(forward.responder.kernel).toMatch(/^7\.3\./);
    expect(reverse).toEqual({ requester: forward.responder, responder: forward.requester });
    expect(run.report).toContain('## Results by pair');
  });

  it('the 7.3 requester and the 6.1 responder agree on the atomics, exactly', () => {
    const sum = '0x12345678abcdf011';
    for (const id of ['link-rxe-fetch-add', 'link-rxe-fetch-add--b-to-a']) {
      const fields = entry(run, id).device_fields ?? {};
      expect(fields['requester.wc1.fetched']).toBe(WORD);
      expect(fields['mem[8]']).toBe(sum);
      expect(fields['wire.resp1.atomicacketh']).toBe(WORD);
    }
  });
});

describe('the patched siw (6.1) with the stock siw (7.3), both ways round', () => {
  let run: Run;
  it('boots the pair once and runs every siw link scenario each way', async () => {
    run = await runPair([
      '--device',
      'siw0',
      '--siw',
      'rfc7306',
      '--peer-kernel',
      '7.3',
      '--peer-siw',
      'stock',
    ]);
    // Once in three runs the stock 7.3 requester's Read Request got no Read Response from
    // the patched 6.1 responder (link-siw-read--b-to-a, test/fixtures/link/pairs-siw.json):
    // it landed in siw_accept's window before the QP took the socket's data_ready. The
    // requester now waits for B's accept (protocol.ts 'accepted'); a failure if it recurs.
    expect(failing(run)).toEqual([]);
    expect(run.status, run.output).toBe(0);
  }, 600_000);

  it('RFC 7306 §1.1: the stock peer Terminates the Atomic Request; nothing is placed', () => {
    for (const id of ['link-siw-fetch-add', 'link-siw-cmp-swap']) {
      const result = entry(run, id);
      expect(result.pair.requester.provider).toBe('siw+rfc7306');
      expect(result.pair.responder.provider).toBe('siw');
      const fields = result.device_fields ?? {};
      expect(fields.wire).toBe(
        'requester> atomic-request qn=1 msn=1 mo=0 L\nresponder> terminate qn=2 msn=1 mo=0 L layer=2 type=0 code=0x06 hdrct=---',
      );
      // The patched requester sees its atomic flushed; the word is untouched.
      expect(fields['requester.wc1.status']).toBe('WR_FLUSH_ERR');
      expect(fields['mem[8]']).toBe(WORD);
      expect(result.differences.map((d) => d.explainedBy)).toEqual([
        'siw-peer-terminate-flushes-requester',
        'siw-unexpected-opcode-terminate-layout',
      ]);
    }
  });

  it('the other way round the stock libsiw refuses the RFC 7306 post; plain RDMAP works', () => {
    expect(entry(run, 'link-siw-fetch-add--b-to-a').device_fields?.post1).toBe('EINVAL');
    for (const id of [
      'link-siw-write',
      'link-siw-send',
      'link-siw-read',
      'link-siw-send-solicited',
    ])
      for (const way of [id, `${id}--b-to-a`]) expect(entry(run, way).verdict).toBe('match');
  });
});

describe('the patched siw on 6.1 with the patched siw on 7.3, both ways round', () => {
  let run: Run;
  it('boots the pair once and runs every siw link scenario each way', async () => {
    run = await runPair([
      '--device',
      'siw0',
      '--siw',
      'rfc7306',
      '--peer-kernel',
      '7.3',
      '--peer-siw',
      'rfc7306',
    ]);
    expect(failing(run)).toEqual([]);
    expect(run.status, run.output).toBe(0);
    expect(run.output).toMatch(
      /A: kernel 6\.1\.\S+, siw rfc7306; B: kernel 7\.3\.\S+, siw rfc7306; both ways round/,
    );
  }, 600_000);

  it('RFC 7306 atomics work each way; only the Send with immediate is refused (by libsiw)', () => {
    for (const id of ['link-siw-fetch-add', 'link-siw-fetch-add--b-to-a']) {
      const result = entry(run, id);
      expect(result.verdict).toBe('match');
      expect(result.pair.requester.provider).toBe('siw+rfc7306');
      expect(result.pair.responder.provider).toBe('siw+rfc7306');
      expect(result.device_fields?.['requester.wc1.fetched']).toBe(WORD);
    }
    expect(
      run.scenarios
        .filter((s) => s.verdict === 'known')
        .map((s) => [
          s.id,
          s.differences.map((d) => ({ field: d.field, explainedBy: d.explainedBy })),
        ]),
    ).toEqual(
      ['link-siw-send-imm', 'link-siw-send-imm--b-to-a'].map((id) => [
        id,
        [
          { field: 'post1', explainedBy: 'libsiw-no-send-imm' },
          { field: 'post1.bad_wr', explainedBy: 'libsiw-no-send-imm' },
        ],
      ]),
    );
  });
});
