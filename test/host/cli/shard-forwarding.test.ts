/**
 * `--shard` reaches the guest the way `--scenario` does (issue 36): `run` puts it into the
 * guest's `run --runtime host` arguments, `probe --kernel` into the guest's `probe`
 * arguments. The guest boot is replaced by a recorder of what it would have been asked.
 */
import { Command } from 'commander';
import { beforeEach, describe, expect, it, vi } from 'vitest';

const asked = vi.hoisted(() => ({ guestArgs: [] as string[][] }));

vi.mock('../../../src/cli/devices-or-guest.js', async (original) => ({
  ...(await original<typeof import('../../../src/cli/devices-or-guest.js')>()),
  onDevicesOrGuest: async (options: { guestArgs: string[] }) => {
    asked.guestArgs.push([...options.guestArgs]);
    return 0;
  },
}));

vi.mock('../../../src/probe/probe-host.js', async (original) => ({
  ...(await original<typeof import('../../../src/probe/probe-host.js')>()),
  probeKernelLine: async (options: { line: string; guestArgs: string[] }) => {
    asked.guestArgs.push([...options.guestArgs]);
    return {
      kernel: { line: options.line, release: 'test', rdmaCore: 'test' },
      results: [],
      fuzz: [],
      coverage: [],
      blocks: [],
      resources: [],
    };
  },
}));

const { registerRun } = await import('../../../src/cli/commands/run.js');
const { registerProbe } = await import('../../../src/cli/commands/probe.js');

async function parse(args: string[]): Promise<void> {
  const program = new Command('rdma-interop').exitOverride();
  registerRun(program);
  registerProbe(program);
  const out = process.stdout.write;
  process.stdout.write = (() => true) as typeof process.stdout.write;
  try {
    await program.parseAsync(args, { from: 'user' });
  } finally {
    process.stdout.write = out;
  }
}

describe('--shard reaches the guest', () => {
  beforeEach(() => {
    asked.guestArgs.length = 0;
  });

  it('run: beside --scenario in the guest run', async () => {
    await parse(['run', '--runtime', 'guest', '--scenario', 'rxe-fetch-add*', '--shard', '1/2']);
    expect(asked.guestArgs).toEqual([
      [
        'run',
        '--runtime',
        'host',
        '--scenario',
        'rxe-fetch-add*',
        '--siw',
        'stock',
        '--shard',
        '1/2',
      ],
    ]);
  });

  it('run --kernels: in every line’s guest', async () => {
    await parse(['run', '--kernels', '6.1,7.3', '--device', 'siw0', '--shard', '3/4']);
    expect(asked.guestArgs).toHaveLength(2);
    for (const args of asked.guestArgs) expect(args.join(' ')).toContain('--shard 3/4');
  });

  it('probe --kernel: in the guest probe’s selection', async () => {
    await parse(['probe', '--kernel', '6.1', '--device', 'rxe0', '--shard', '2/3']);
    expect(asked.guestArgs).toHaveLength(1);
    expect(asked.guestArgs[0]?.slice(1).join(' ')).toMatch(
      /^probe --runtime host .*--device rxe0 .*--shard 2\/3$/,
    );
  });
});
