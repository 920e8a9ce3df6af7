/**
 * `decode` for people who use tshark (issue 25): the display filter (operators, precedence,
 * presence, crc/icrc as fields, the older key=value form), `-c`, `--header`, `-` for
 * standard input, frame numbers from 1 in every output, and every option's value checked
 * by commander (exit 2, one line, no stack trace).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runDecode } from '../../../src/cli/commands/decode.js';

const CLI = join(process.cwd(), 'dist', 'cli', 'main.js');
/** Four RoCE packets of a real rxe run: FetchAdd (op 20), CmpSwap (19), two Atomic ACKs (18). */
const PAIR = 'test/fixtures/link/link-rxe-atomic-pair.pcap';
/** A real siw Read: TCP handshake, MPA Request/Reply, a Read Request and its Response. */
const SIW_READ = 'test/fixtures/link/link-siw-read.pcap';

const fields = (filter: string, list = 'frame.number,infiniband.bth.opcode'): string =>
  runDecode(PAIR, { fields: list, filter }).stdout;

function cli(args: string[], input?: Buffer) {
  const r = spawnSync(process.execPath, [CLI, 'decode', ...args], {
    encoding: 'utf8',
    ...(input === undefined ? {} : { input }),
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('decode --filter: a display-filter subset', () => {
  it('comparisons ==, !=, <, >, <=, >= on tshark names, frame by frame', () => {
    expect(fields('infiniband.bth.opcode == 18')).toBe('3\t18\n4\t18\n');
    expect(fields('infiniband.bth.opcode != 18')).toBe('1\t20\n2\t19\n');
    expect(fields('infiniband.bth.opcode < 19')).toBe('3\t18\n4\t18\n');
    expect(fields('infiniband.bth.opcode > 19')).toBe('1\t20\n');
    expect(fields('infiniband.bth.opcode <= 19')).toBe('2\t19\n3\t18\n4\t18\n');
    expect(fields('infiniband.bth.opcode ge 0x14')).toBe('1\t20\n');
  });

  it('and binds tighter than or; not and parentheses; presence of a field', () => {
    // psn 1222084 is the CmpSwap (frame 2) and the second ACK (frame 4).
    expect(
      fields(
        'infiniband.bth.opcode == 20 || infiniband.bth.opcode == 18 && infiniband.bth.psn == 1222084',
      ),
    ).toBe('1\t20\n4\t18\n');
    expect(
      fields(
        '(infiniband.bth.opcode == 20 or infiniband.bth.opcode == 18) and infiniband.bth.psn == 1222084',
      ),
    ).toBe('4\t18\n');
    expect(fields('not infiniband.aeth')).toBe('1\t20\n2\t19\n');
    expect(fields('!(infiniband.atomicacketh) && infiniband.atomiceth.cmpdt > 0')).toBe('2\t19\n');
    expect(fields('iwarp_ddp')).toBe('');
  });

  it('the ICRC status (RoCE) and the MPA CRC status (iWARP) are fields', () => {
    expect(fields('icrc == valid', 'frame.number,icrc')).toBe(
      '1\tvalid\n2\tvalid\n3\tvalid\n4\tvalid\n',
    );
    expect(fields('icrc == invalid')).toBe('');
    // The siw Read runs without MPA CRC: its FPDUs' crc is not-in-use.
    const r = runDecode(SIW_READ, {
      fields: 'frame.number,iwarp_rdma.opcode',
      filter: 'crc == not-in-use && iwarp_rdma.opcode == 1',
    });
    expect(r.stdout).toBe('8\t0x01\n');
  });

  it('project names filter item by item with --summary; the key=value form still reads', () => {
    const a = runDecode(PAIR, { filter: 'opcode == RC_COMPARE_SWAP || qp == 0x14' });
    expect(a.stdout.split('\n').filter((l) => /^\d+ .* RoCEv2 /.test(l))).toEqual([
      expect.stringMatching(/^2 .* RC_COMPARE_SWAP /),
    ]);
    const b = runDecode(PAIR, {
      filter: 'opcode=rc_fetch_add|18,psn=1222083',
      fields: 'frame,opcode',
    });
    expect(b.stdout).toBe('1\tRC_FETCH_ADD\n3\tRC_ATOMIC_ACKNOWLEDGE\n');
  });

  it('a bad filter is a usage error naming the position: exit 2, one line, no stack', () => {
    for (const [filter, position] of [
      ['infiniband.bth.opcode ==', 25],
      ['infiniband.bth.opcode == 20 &&', 31],
      ['(icrc == valid', 15],
      ['nosuch.field == 1', 1],
      ['infiniband.bth.psn == x1', 23],
      ['crc == good', 8],
      ['opcode == not-an-opcode', 11],
      ['qn=1,qp=abc', 9],
    ] as const) {
      const r = cli(['--filter', filter, PAIR]);
      expect(r.status, filter).toBe(2);
      expect(r.stdout).toBe('');
      const lines = r.stderr.trimEnd().split('\n');
      expect(lines, filter).toHaveLength(1);
      expect(lines[0], filter).toContain(`bad filter at position ${position}: `);
      expect(lines[0]).toMatch(/^rdma-interop decode: error: option '--filter <expression>'/);
    }
  });
});

describe('decode -c, --header, standard input, frame numbers', () => {
  it('-c <n> reads the first n frames in every output mode, with no cut-file warning', () => {
    expect(runDecode(SIW_READ, { count: 3, fields: 'frame.number' }).stdout).toBe('1\n2\n3\n');
    const summary = runDecode(PAIR, { count: 2, summary: true });
    expect(summary.stderr).toBe('');
    expect(summary.stdout).toMatch(/^pcap: 2 frames, 2 RoCEv2 packets/m);
    const jsonl = runDecode(PAIR, { count: 1, jsonl: true });
    expect(
      jsonl.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).kind),
    ).toEqual(['roce', 'summary']);
    const text = runDecode(PAIR, { count: 3 });
    expect(text.stdout).toMatch(/^pcap: 3 frames/m);
  });

  it('--header names the columns first (tshark -E header=y); without --fields it is refused', () => {
    expect(runDecode(PAIR, { fields: 'frame.number,ip.src', header: true, count: 1 }).stdout).toBe(
      'frame.number\tip.src\n1\t192.0.2.1\n',
    );
    const r = cli(['--header', PAIR]);
    expect(r.status).toBe(2);
    expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
  });

  it("'-' reads the capture from standard input", () => {
    const r = cli(['--fields', 'frame.number,udp.srcport', '-'], readFileSync(PAIR));
    expect(r.status).toBe(0);
    expect(r.stdout).toBe(
      execFileSync(
        process.execPath,
        [CLI, 'decode', '--fields', 'frame.number,udp.srcport', PAIR],
        {
          encoding: 'utf8',
        },
      ),
    );
    expect(r.stdout.split('\n')[0]).toBe('1\t49513');
  });

  it('frame numbers start at 1 in every output mode', () => {
    const first = (s: string) => s.split('\n')[0]!;
    expect(first(runDecode(PAIR).stdout)).toMatch(/^Frame 1 /);
    expect(first(runDecode(PAIR, { summary: true }).stdout)).toMatch(/^1 /);
    expect(first(runDecode(PAIR, { fields: 'frame' }).stdout)).toBe('1');
    expect(first(runDecode(PAIR, { fields: 'frame.number' }).stdout)).toBe('1');
    expect(JSON.parse(first(runDecode(PAIR, { jsonl: true }).stdout)).frame).toBe(1);
    const doc = JSON.parse(runDecode(PAIR, { json: true }).stdout) as {
      items: { frame: number }[];
    };
    expect(doc.items.map((i) => i.frame)).toEqual([1, 2, 3, 4]);
  });

  it("every option's value is checked by commander: exit 2, one line", () => {
    for (const args of [
      ['--profile', 'rfc9999'],
      ['--roce-port', '65536'],
      ['--roce-port', 'x'],
      ['-c', '0'],
      ['-c', '1.5'],
      ['--fields', 'frame.number,nope'],
      ['--fields', 'infiniband'],
    ]) {
      const r = cli([...args, PAIR]);
      expect(r.status, args.join(' ')).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr.trimEnd().split('\n'), args.join(' ')).toHaveLength(1);
      expect(r.stderr).toMatch(/^rdma-interop decode: error: option '/);
    }
  });
});
