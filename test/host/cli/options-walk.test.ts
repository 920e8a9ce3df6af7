/**
 * Every command x option pair of the command line, taken from the program's own
 * definition (src/cli/program.ts), so an option added without an entry here fails: each
 * either shows its effect in the output before any guest boots (the guest's QEMU command
 * line, from a stand-in QEMU), or is refused as a usage error (exit 2, one line), or
 * names the test that sees its effect (in a guest, or with a Docker engine) and is shown
 * here to reach the runtime unrefused. Then the combinations that would leave an option
 * doing nothing are refused, every option whose value can be wrong is checked by
 * commander's own validation (options-request.test.ts: every option of a command that runs
 * itself elsewhere, parsed, requested and parsed there). No guest boots: set-up stops at its first
 * step (stand-in `dpkg-query` and `id`: packages missing, not root), and guest assets are
 * empty or fake directories. The cases run a few at a time (it.concurrent). On a host
 * with RDMA devices (scripts/test.sh runs there too) the entries whose effect here is a
 * run on this host's devices check the form they take there, or are skipped with the
 * reason (NEEDS_NO_DEVICES, listed in test/expected-skips.json).
 */
import type { Command, Option } from 'commander';
import { afterAll, describe, expect, it } from 'vitest';
import { commandName } from '../../../src/cli/errors.js';
import { allCommands, buildProgram } from '../../../src/cli/program.js';
import { RUN_ENTRIES } from './options-walk/entries-run.js';
import { TOOL_ENTRIES } from './options-walk/entries-tools.js';
import {
  cli,
  type Entry,
  expectRefused,
  HOST_DEVICES,
  NO_SETUP,
  removeScratch,
} from './options-walk/harness.js';
import { REFUSED, VALUES } from './options-walk/values.js';

afterAll(removeScratch);

const ENTRIES: Readonly<Record<string, Entry>> = { ...RUN_ENTRIES, ...TOOL_ENTRIES };

/** Every command x option pair of the program, as `rdma-interop <command> --option`. */
function optionPairs(): { key: string; command: Command; option: Option }[] {
  return allCommands(buildProgram()).flatMap((command) =>
    command.options.map((option) => ({
      key: `${commandName(command)} ${option.long ?? option.flags}`,
      command,
      option,
    })),
  );
}

/**
 * Entries whose case runs `bench verbs`, which on a host with RDMA devices runs there
 * against perftest for minutes (no guest to stop at): skipped on such a host, and listed
 * in test/expected-skips.json with this reason.
 */
const NEEDS_NO_DEVICES: Readonly<Record<string, string>> = {
  'rdma-interop bench --report': 'bench verbs would run on the devices of this host',
  'rdma-interop bench --no-summary': 'bench verbs would run on the devices of this host',
};

describe('every command x option pair of the command line', () => {
  it('has an entry here, and every entry names a pair that exists', () => {
    const keys = optionPairs().map((p) => p.key);
    expect(keys.length).toBeGreaterThan(40);
    expect(Object.keys(ENTRIES).sort()).toEqual([...keys].sort());
  });

  const check = async (_key: string, entry: Entry) => {
    if ('effect' in entry) await entry.effect();
    else if ('refused' in entry) await entry.refused();
    else {
      expect(entry.coveredBy).not.toBe('');
      await entry.accepted();
    }
  };
  const anyHost = Object.entries(ENTRIES).filter(([key]) => NEEDS_NO_DEVICES[key] === undefined);
  const noDevices = Object.entries(ENTRIES).filter(([key]) => NEEDS_NO_DEVICES[key] !== undefined);
  it.concurrent.each(anyHost)('%s', check);
  it.skipIf(HOST_DEVICES.length > 0).each(noDevices)('%s', check);
  it('every entry that needs a host without devices exists, with its reason', () => {
    for (const [key, reason] of Object.entries(NEEDS_NO_DEVICES)) {
      expect(ENTRIES[key], key).toBeDefined();
      expect(reason.length).toBeGreaterThan(10);
    }
  });
});

describe('option values: checked by commander before any work', () => {
  const valued = optionPairs().filter((p) => p.option.required || p.option.optional);

  it('every option that takes a value has a bad value here, or a reason it takes any', () => {
    expect(Object.keys(VALUES).sort()).toEqual(valued.map((p) => p.key).sort());
  });

  it.concurrent.each(valued.filter((p) => 'bad' in (VALUES[p.key] ?? {})))(
    '$key',
    async ({ key, command, option }) => {
      const check = VALUES[key];
      if (check === undefined || !('bad' in check)) throw new Error(`no bad value for ${key}`);
      // commander's own validation: choices, or a parser that throws InvalidArgumentError.
      expect(option.argChoices !== undefined || option.parseArg !== undefined).toBe(true);
      const path = commandName(command).split(' ').slice(1);
      const r = await cli([...path, option.long ?? '', check.bad]);
      expectRefused(
        r,
        commandName(command),
        // Flags are escaped: an optional value (`--coverage [kind]`) has regex brackets.
        new RegExp(
          `option '${option.flags.replace(/[[\]]/g, '\\$&')}' argument '${check.bad}' is invalid`,
        ),
      );
    },
  );
});

describe('combinations in which an option would do nothing are refused', () => {
  it.concurrent.each(REFUSED)('%j', async (args, message) => {
    const command = `rdma-interop ${args[0] === 'docker' ? 'docker run' : args[0]}`;
    expectRefused(await cli(args, NO_SETUP), command, message);
  });
});
