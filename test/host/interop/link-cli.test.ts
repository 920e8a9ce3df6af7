import { describe, expect, it } from 'vitest';
import { FAULT_LINK_SCENARIOS } from '../../../src/interop/link/fault-scenarios.js';
import { LINK_SCENARIOS } from '../../../src/interop/link/scenarios.js';
import { listRowOf, rowsOf, runCli as run } from '../cli/run-cli.js';

describe('rdma-interop run --link (no boot)', () => {
  it('--list shows the link scenarios with device, post API, family and title', () => {
    const rows = rowsOf(run(['--link', '--list']).stdout);
    expect(rows).toEqual(LINK_SCENARIOS.map(listRowOf));
    expect(rows).toContainEqual([
      'link-rxe-misaligned-ex',
      'rxe0',
      'ibv_wr_*',
      'link-naks',
      'misaligned FetchAdd (NAK invalid request), ibv_wr_* (across the link)',
    ]);
  });

  it('honours --device and --scenario; a filter that matches nothing boots nothing (exit 2)', () => {
    const siw = rowsOf(run(['--link', '--list', '--device', 'siw0']).stdout).map((r) => r[0]);
    expect(siw).toEqual(LINK_SCENARIOS.filter((s) => s.device === 'siw0').map((s) => s.id));
    const naks = rowsOf(run(['--link', '--list', '--scenario', '*-bad-rkey']).stdout).map(
      (r) => r[0],
    );
    expect(naks).toEqual(['link-rxe-atomic-bad-rkey', 'link-rxe-write-bad-rkey']);
    const none = run(['--link', '--scenario', 'rxe-*']);
    expect(none.status).toBe(2);
    expect(none.stderr).toBe(
      "rdma-interop run: error: no scenario matches 'rxe-*' (see 'rdma-interop run --help')\n",
    );
  });

  it('--faults selects the faulty-wire scenarios: the lost-wire one with drop=1, else the rest', () => {
    const ids = (args: string[]) => rowsOf(run(args).stdout).map((r) => r[0]);
    expect(ids(['--link', '--list', '--faults', 'drop=0.02,dup=0.01,seed=7'])).toEqual([
      'link-rxe-fetch-add-x1000',
      'link-rxe-fetch-add-4qp',
      'link-rxe-read-atomic-mix',
      'link-rxe-write-imm-stream',
    ]);
    expect(ids(['--link', '--list', '--faults', 'drop=1'])).toEqual(['link-rxe-retry-exhausted']);
    // The siw hammers and streams need RFC 7306 (atomics, immediates) from both guests' siw.
    const patched = ['--link', '--list', '--faults', 'drop=0.02', '--siw', 'rfc7306'];
    expect(ids([...patched, '--device', 'siw0'])).toEqual([
      'link-siw-fetch-add-x1000',
      'link-siw-fetch-add-4qp',
      'link-siw-read-atomic-mix',
      'link-siw-write-imm-stream',
    ]);
    // corrupt-payload selects the MPA CRC case (mpa-crc=1 makes the peers negotiate the CRC).
    const crc = ['--faults', 'corrupt-payload=0.02,mpa-crc=1,seed=7', '--siw', 'rfc7306'];
    expect(ids(['--link', '--list', ...crc])).toEqual(['link-siw-mpa-crc']);
    // The long variant (npm run soak) only by a pattern.
    expect(ids(['--link', '--list', '--scenario', 'link-rxe-fetch-add-4qp*'])).toEqual([
      'link-rxe-fetch-add-4qp',
      'link-rxe-fetch-add-4qp-x1000',
    ]);
    const stock = run(['--link', '--list', '--faults', 'drop=0.02', '--device', 'siw0']);
    expect(stock.status).toBe(2);
    expect(stock.stderr).toContain('no scenario');
    expect(ids(['--link', '--list', '--scenario', 'link-rxe-fetch-add*'])).toEqual([
      'link-rxe-fetch-add',
      'link-rxe-fetch-add-x1000',
      'link-rxe-fetch-add-4qp',
      'link-rxe-fetch-add-4qp-x1000',
    ]);
    expect(rowsOf(run(['--link', '--list', '--faults', 'drop=1']).stdout)).toEqual(
      FAULT_LINK_SCENARIOS.filter((s) => s.id.endsWith('retry-exhausted')).map(listRowOf),
    );
  });

  it('a bad --faults value, or --faults without --link, is a usage error naming the key', () => {
    const unknown = run(['--link', '--faults', 'loss=0.1']);
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toContain("faults: unknown fault key 'loss' (known: drop, dup, reorder");
    const range = run(['--link', '--faults', 'drop=0.02,jitter=2']);
    expect(range.status).toBe(2);
    expect(range.stderr).toContain("faults.jitter: '2' is not a duration such as 1ms");
    expect(range.stderr.trim().split('\n')).toHaveLength(1);
    const idle = run(['--faults', 'drop=0.1', '--list']);
    expect(idle.status).toBe(2);
    expect(idle.stderr).toContain('--faults sets the wire between the two guests of --link');
  });
});
