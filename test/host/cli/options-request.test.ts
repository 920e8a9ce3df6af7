/**
 * Every option of the commands that run themselves elsewhere (run in the guest and in its
 * siw passes' child processes, probe in its guests, bench verbs in the guest:
 * src/cli/request.ts): each command's forwarding table names every option it has, and
 * each option, given a value other than its default, is parsed, turned into that run's
 * request by the code the command itself calls, and parsed again as the run elsewhere
 * parses it: a forwarded option arrives as given, one that stays here does not, and what
 * the run decides for itself (its report directory, a pass's siw) always does. In process,
 * no CLI spawned (options-walk.test.ts walks the built CLI).
 */
import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import {
  BENCH_FORWARDING,
  benchGuestArgs,
  registerBench,
} from '../../../src/cli/commands/bench.js';
import {
  PROBE_FORWARDING,
  probeGuestArgs,
  registerProbe,
} from '../../../src/cli/commands/probe.js';
import { registerRun } from '../../../src/cli/commands/run.js';
import {
  RUN_FORWARDING,
  type RunOptions,
  runElsewhereArgs,
} from '../../../src/cli/commands/run-request.js';
import type { Forwarding } from '../../../src/cli/request.js';

/** The commands that run themselves elsewhere, each with its own definition. */
const REGISTER = { run: registerRun, probe: registerProbe, bench: registerBench } as const;
type Forwarder = keyof typeof REGISTER;

/** `name`'s definition alone (no program hooks: a parse changes nothing in this process). */
function definition(name: Forwarder): Command {
  const program = new Command('rdma-interop').exitOverride();
  REGISTER[name](program);
  const command = program.commands[0];
  if (command === undefined) throw new Error(`no ${name}`);
  return command;
}

/** The options `argv` (`run --device rxe0 ...`) parses to, the action not run. */
function parseArgs(argv: readonly string[]): Record<string, unknown> {
  const name = argv[0] as Forwarder;
  const program = new Command('rdma-interop').exitOverride();
  REGISTER[name](program);
  const command = program.commands[0] as Command;
  command
    .exitOverride()
    .configureOutput({ writeOut: () => {}, writeErr: () => {} })
    .action(() => {});
  program.parse([...argv], { from: 'user' });
  return command.opts();
}

/**
 * Per option, the arguments that give it a value other than its default; `refused`: an
 * option that is refused whatever its value (renamed), so nothing can go along.
 */
const GIVEN: Readonly<Record<string, readonly string[] | 'refused'>> = {
  'run runtime': ['--runtime', 'guest'],
  'run device': ['--device', 'rxe0,siw0'],
  'run address': ['--device', 'lab_roce', '--address', 'fd37::1'],
  'run gidIndex': ['--device', 'lab_roce', '--gid-index', '1'],
  'run scenario': ['--scenario', 'rxe-*atomic*'],
  'run report': ['--report', '/tmp/user-report'],
  'run strict': ['--strict'],
  'run json': ['--json'],
  'run list': ['--list'],
  'run link': ['--link'],
  'run peer': ['--device', 'lab_roce', '--peer', '192.0.2.9:4000'],
  'run peerKernel': ['--peer-kernel', '7.3'],
  'run peerSiw': ['--peer-siw', 'rfc7306'],
  'run siw': ['--siw', 'both'],
  'run fixes': ['--fixes'],
  'run faults': ['--faults', 'drop=0.5,seed=3'],
  'run timeout': ['--timeout', '60'],
  'run kernel': ['--kernel', '7.3'],
  'run modules': ['--modules', '/tmp'],
  'run kernels': ['--kernels', '6.1,7.3'],
  'run cacheDir': ['--cache-dir', '/tmp/user-cache'],
  'run shard': ['--shard', '2/3'],
  'run coverage': ['--coverage'],
  'probe runtime': ['--runtime', 'guest'],
  'probe device': ['--device', 'siw0'],
  'probe assertion': ['--assertion', 'siw-mpa-*'],
  'probe kernel': ['--kernel', '7.3'],
  'probe kernels': ['--kernels', '6.1,7.3'],
  'probe siw': ['--siw', 'rfc7306'],
  'probe report': ['--report', '/tmp/user-report'],
  'probe list': ['--list'],
  'probe fuzz': ['--fuzz', '3'],
  'probe guided': ['--guided', '3'],
  'probe minimize': ['--minimize', '20'],
  'probe coverage': ['--coverage', 'blocks'],
  'probe seed': ['--seed', '7'],
  'probe timeout': ['--timeout', '60'],
  'probe cacheDir': ['--cache-dir', '/tmp/user-cache'],
  'probe shard': ['--shard', '2/3'],
  'probe fixes': ['--fixes'],
  'probe benchmark': ['--benchmark'],
  'bench report': ['--report', '/tmp/user-figures.json'],
  'bench json': 'refused',
  'bench summary': ['--no-summary'],
  'bench cacheDir': ['--cache-dir', '/tmp/user-cache'],
};

/**
 * One run elsewhere: the command's forwarding table, how the command makes that run's
 * arguments from its parsed options (the code the command itself calls), and what that
 * run decides for itself whatever this one was given.
 */
interface Elsewhere {
  readonly command: Forwarder;
  readonly table: Readonly<Record<string, Forwarding>>;
  readonly args: (options: Record<string, unknown>) => string[];
  readonly decided: Readonly<Record<string, unknown>>;
}

const GUEST_SHARE = '/tmp/share/report';
const FIGURES = '/tmp/share/verbs.json';
const asRun = (o: Record<string, unknown>) => o as unknown as RunOptions;
const ELSEWHERE: Readonly<Record<string, Elsewhere>> = {
  "run's guest": {
    command: 'run',
    table: RUN_FORWARDING,
    args: (o) => runElsewhereArgs(definition('run'), asRun(o), { report: GUEST_SHARE }),
    decided: { runtime: 'host', report: GUEST_SHARE },
  },
  "run --siw both's stock pass": {
    command: 'run',
    table: RUN_FORWARDING,
    args: (o) => runElsewhereArgs(definition('run'), asRun(o), { report: '/tmp/r', siw: 'stock' }),
    decided: { runtime: 'host', report: '/tmp/r', siw: 'stock' },
  },
  "run --siw rfc7306's patched pass": {
    command: 'run',
    table: RUN_FORWARDING,
    args: (o) =>
      runElsewhereArgs(definition('run'), asRun(o), {
        report: '/tmp/r/siw-rfc7306',
        siw: 'rfc7306',
        device: ['siw0'],
      }),
    decided: { runtime: 'host', report: '/tmp/r/siw-rfc7306', siw: 'rfc7306', device: ['siw0'] },
  },
  "probe's guests": {
    command: 'probe',
    table: PROBE_FORWARDING,
    args: (o) =>
      probeGuestArgs(definition('probe'), o as unknown as Parameters<typeof probeGuestArgs>[1]),
    decided: { runtime: 'host' },
  },
  "bench verbs' guest": {
    command: 'bench',
    table: BENCH_FORWARDING,
    args: () => benchGuestArgs(definition('bench'), FIGURES),
    decided: { report: FIGURES, summary: false },
  },
};

describe('every option of a command that runs itself elsewhere: parse, request, parse there', () => {
  it.each(Object.keys(REGISTER))('%s: its forwarding table names every option it has', (name) => {
    const table = Object.values(ELSEWHERE).find((e) => e.command === name)?.table ?? {};
    const options = definition(name as Forwarder).options.map((o) => o.attributeName());
    expect(Object.keys(table).sort()).toEqual([...options].sort());
    for (const way of Object.values(table))
      if (way !== 'forward') expect(way.stays.length).toBeGreaterThan(10);
  });

  const cases = Object.entries(ELSEWHERE).flatMap(([where, elsewhere]) =>
    definition(elsewhere.command).options.map((option) => ({
      name: `${where}: ${option.long ?? option.flags}`,
      where,
      elsewhere,
      option,
    })),
  );
  it.each(cases)('$name', ({ elsewhere, option }) => {
    const attribute = option.attributeName();
    const way = elsewhere.table[attribute];
    expect(way, `${elsewhere.command} ${option.long}: not in its forwarding table`).toBeDefined();
    const given = GIVEN[`${elsewhere.command} ${attribute}`];
    expect(given, `no value given for ${elsewhere.command} ${option.long}`).toBeDefined();
    if (given === undefined) return;
    if (given === 'refused') {
      expect(() => parseArgs([elsewhere.command, option.long ?? '', 'x'])).toThrow();
      expect(way).not.toBe('forward');
      return;
    }
    const defaults = parseArgs([elsewhere.command]);
    const here = parseArgs([elsewhere.command, ...given]);
    // The value given differs from the default, so a forward that drops it shows.
    expect(here[attribute]).not.toEqual(defaults[attribute]);
    const argv = elsewhere.args(here);
    expect(argv[0]).toBe(elsewhere.command);
    const there = parseArgs(argv);
    const expected =
      attribute in elsewhere.decided
        ? elsewhere.decided[attribute]
        : way === 'forward'
          ? here[attribute]
          : defaults[attribute];
    expect(there[attribute]).toEqual(expected);
    // Whatever it was given, the run elsewhere gets what it decides for itself.
    for (const [key, value] of Object.entries(elsewhere.decided)) expect(there[key]).toEqual(value);
  });

  it('writes the arguments the commands wrote by hand before (a guest run, a probe, a bench)', () => {
    const run = parseArgs(['run', '--device', 'rxe0', '--scenario', 'rxe-*', '--strict', '--json']);
    expect(runElsewhereArgs(definition('run'), asRun(run), { report: GUEST_SHARE })).toEqual([
      'run',
      '--runtime',
      'host',
      '--device',
      'rxe0',
      '--scenario',
      'rxe-*',
      '--report',
      GUEST_SHARE,
      '--strict',
      '--json',
      '--siw',
      'stock',
    ]);
    const probe = parseArgs(['probe', '--device', 'siw0', '--fuzz', '3']);
    expect(
      probeGuestArgs(definition('probe'), probe as unknown as Parameters<typeof probeGuestArgs>[1]),
    ).toEqual([
      'probe',
      '--runtime',
      'host',
      '--device',
      'siw0',
      '--siw',
      'stock',
      '--fuzz',
      '3',
      '--seed',
      '1',
    ]);
    expect(benchGuestArgs(definition('bench'), FIGURES)).toEqual([
      'bench',
      'verbs',
      '--report',
      FIGURES,
      '--no-summary',
    ]);
  });
});
