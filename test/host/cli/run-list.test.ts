import { describe, expect, it } from 'vitest';
import { SCENARIOS } from '../../../src/interop/scenarios.js';
import { listRowOf, rowsOf, runCli as run } from './run-cli.js';

describe('rdma-interop run --list', () => {
  it('lists every scenario with device, post API, family and title (no wire probes: issue 31)', () => {
    const rows = rowsOf(run(['--list']).stdout);
    expect(rows).toEqual(SCENARIOS.map(listRowOf));
    expect(rows).toContainEqual(['siw-fetch-add', 'siw0', 'post_send', 'atomics', 'FetchAdd']);
    // The families issue 10 added across processes, RNR timers and siw.
    expect(rows).toContainEqual([
      'rxe-concurrent-fetch-add-processes-ex',
      'rxe0',
      'ibv_wr_*',
      'concurrency',
      'three processes, one QP each, 1000 FetchAdd(+1) each, on one word, ibv_wr_*',
    ]);
    expect(rows).toContainEqual([
      'rxe-rnr-retry-3-late-recv',
      'rxe0',
      'post_send',
      'rnr',
      'Send, rnr_retry 3, receive posted 300 ms late (found by a retry)',
    ]);
    // Issue 23: the solicited event on every device and API; rdma_cm-connected rxe pairs.
    expect(rows).toContainEqual([
      'siw-solicited-event',
      'siw0',
      'post_send',
      'solicited',
      'Send with SE into a CQ armed for solicited completions',
    ]);
    expect(rows).toContainEqual([
      'rxe-cm-fetch-add-ex',
      'rxe0',
      'ibv_wr_*',
      'rdma-cm',
      'FetchAdd, ibv_wr_*, rdma_cm',
    ]);
    // rdma_cm sets the QP attributes a by-hand row needs: no by-hand row on rdma_cm pairs.
    expect(rows.map((r) => r[0])).not.toContain('rxe-cm-qp-no-atomic');
    expect(rows.filter((r) => r[1] === 'siw0').map((r) => r[3])).toEqual(
      expect.arrayContaining(['atomic-errors', 'rnr', 'concurrency']),
    );
    // rnr_retry and min_rnr_timer need the by-hand bring-up: no such row on siw.
    expect(rows.map((r) => r[0])).not.toContain('siw-rnr-retry-2');
  });

  it('honours --scenario (a glob) and --device', () => {
    const ids = rowsOf(run(['--list', '--scenario', 'rxe-*-ex', '--device', 'rxe0']).stdout).map(
      (r) => r[0],
    );
    expect(ids).toEqual(SCENARIOS.filter((s) => s.postPath === 'ex').map((s) => s.id));
    const siw = rowsOf(run(['--list', '--device', 'siw0']).stdout).map((r) => r[1]);
    expect(new Set(siw)).toEqual(new Set(['siw0']));
  });

  it('a filter that matches nothing says so and boots nothing (exit 2)', () => {
    const result = run(['--scenario', 'no-such-*']);
    expect(result.status).toBe(2);
    expect(result.stderr).toBe(
      "rdma-interop run: error: no scenario matches 'no-such-*' (see 'rdma-interop run --help')\n",
    );
    // The former wire probes: the error says where they went.
    const probes = run(['--scenario', 'siw-probe-*']);
    expect(probes.status).toBe(2);
    expect(probes.stderr).toContain(
      "the wire probes are the tester's assertions now: rdma-interop probe --assertion 'siw-probe-*'",
    );
  });

  it('rejects an unknown device and an unknown runtime with usage errors', () => {
    // Any device name goes (issue 37: probed where the suite runs); a malformed one does not.
    const device = run(['--device', 'mlx5/0']);
    expect(device.status).toBe(2);
    expect(device.stderr).toMatch(/bad device name mlx5\/0; give RDMA device names/);
    const runtime = run(['--runtime', 'moon']);
    expect(runtime.status).toBe(2);
    expect(runtime.stderr).toMatch(/Allowed choices are auto, host, guest/);
  });
});
