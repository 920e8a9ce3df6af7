import { describe, expect, it } from 'vitest';
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
});
