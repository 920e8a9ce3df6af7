import { execFileSync, type SpawnSyncReturns, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// Issue 37, `--peer`: the link scenarios across "two hosts" in the kernel stage's guest (no
// boot of its own): two soft devices of each kind, each on its own end of a veth pair, a
// `peer serve` child on one and `run --peer` on the other. Two devices of one host reach
// each other only through the wire when the local table no longer answers first: a rule
// per pair sends the locally generated packets for the far address out of the near veth
// (rxe_net.c rxe_udp_encap_recv finds its device by the receiving netdev, so a packet
// delivered through `lo` would reach no rxe), and accept_local lets the far end take a
// packet from an address of its own host. The verdicts must be those of the same scenarios
// run with both halves in one process, and pass as in the guest pair's link run
// (link-guests.test.ts): every rxe scenario a match, siw's a match or known. The routing is restored afterwards.

const CLI = join(process.env.RDMA_INTEROP_ROOT ?? process.cwd(), 'dist/cli/main.js');

interface Pair {
  readonly kind: 'rxe' | 'siw';
  readonly netdevs: readonly [string, string];
  readonly addresses: readonly [string, string];
  readonly devices: readonly [string, string];
  /** The link scenarios run across, and the loopback suite's scenario of the same operation. */
  readonly scenarios: Readonly<Record<string, string>>;
}

const PAIRS: readonly Pair[] = [
  {
    kind: 'rxe',
    netdevs: ['pv0', 'pv1'],
    addresses: ['198.18.1.1', '198.18.2.1'],
    devices: ['peer_ra', 'peer_rb'],
    scenarios: {
      'link-rxe-write': 'rxe-write',
      'link-rxe-read': 'rxe-read',
      'link-rxe-fetch-add': 'rxe-fetch-add',
    },
  },
  {
    kind: 'siw',
    netdevs: ['pv2', 'pv3'],
    addresses: ['198.18.3.1', '198.18.4.1'],
    devices: ['peer_ia', 'peer_ib'],
    scenarios: {
      'link-siw-write': 'siw-write',
      'link-siw-send': 'siw-send',
      'link-siw-read': 'siw-read',
    },
  },
];

const sh = (cmd: string, ...args: string[]) =>
  execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
const quiet = (cmd: string, ...args: string[]) => {
  try {
    sh(cmd, ...args);
  } catch {
    // already gone, or never made
  }
};
const sysctl = (key: string, value: string) => sh('sysctl', '-qw', `${key}=${value}`);

const started = performance.now();
const report = mkdtempSync(join(tmpdir(), 'rdma-interop-peer-'));

beforeAll(() => {
  quiet('modprobe', 'veth');
  sysctl('net.ipv4.conf.all.accept_local', '1');
  sysctl('net.ipv4.conf.all.rp_filter', '0');
  // The local table after the pairs' rules: the far address leaves by the veth.
  sh('ip', 'rule', 'add', 'pref', '200', 'lookup', 'local');
  sh('ip', 'rule', 'del', 'pref', '0', 'lookup', 'local');
  for (const [n, pair] of PAIRS.entries()) {
    const [a, b] = pair.netdevs;
    sh('ip', 'link', 'add', a, 'type', 'veth', 'peer', 'name', b);
    for (const [i, dev] of pair.netdevs.entries()) {
      sh('ip', 'addr', 'add', `${pair.addresses[i]}/32`, 'dev', dev);
      sh('ip', 'link', 'set', dev, 'up');
      sysctl(`net.ipv4.conf.${dev}.accept_local`, '1');
      sysctl(`net.ipv4.conf.${dev}.rp_filter`, '0');
    }
    const mac = (dev: string) => readFileSync(`/sys/class/net/${dev}/address`, 'utf8').trim();
    for (const [i, dev] of pair.netdevs.entries()) {
      const far = pair.addresses[1 - i] as string;
      const farDev = pair.netdevs[1 - i] as string;
      const table = String(100 + 2 * n + i);
      sh(
        'ip',
        'route',
        'add',
        `${far}/32`,
        'dev',
        dev,
        'src',
        pair.addresses[i] as string,
        'table',
        table,
      );
      sh('ip', 'rule', 'add', 'pref', '100', 'to', far, 'iif', 'lo', 'lookup', table);
      sh('ip', 'neigh', 'replace', far, 'lladdr', mac(farDev), 'dev', dev, 'nud', 'permanent');
    }
    for (const [i, dev] of pair.netdevs.entries())
      sh('rdma', 'link', 'add', pair.devices[i] as string, 'type', pair.kind, 'netdev', dev);
  }
});

afterAll(async () => {
  // librdmacm keeps its device contexts until its process exits: every run was a child.
  for (const pair of PAIRS)
    for (const d of pair.devices)
      spawn('rdma', ['link', 'delete', d], { detached: true, stdio: 'ignore' }).unref();
  const all = PAIRS.flatMap((p) => p.devices);
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline && all.some((d) => existsSync(`/sys/class/infiniband/${d}`)))
    await new Promise((r) => setTimeout(r, 200));
  for (const [n, pair] of PAIRS.entries()) {
    for (const [i] of pair.netdevs.entries())
      quiet('ip', 'rule', 'del', 'pref', '100', 'lookup', String(100 + 2 * n + i));
    quiet('ip', 'link', 'del', pair.netdevs[0]);
  }
  quiet('ip', 'rule', 'add', 'pref', '0', 'lookup', 'local');
  quiet('ip', 'rule', 'del', 'pref', '200', 'lookup', 'local');
  rmSync(report, { recursive: true, force: true });
  process.stderr.write(
    `peer: ${((performance.now() - started) / 1000).toFixed(1)} s in this file\n`,
  );
  for (const d of all) expect(existsSync(`/sys/class/infiniband/${d}`)).toBe(false);
  expect(sh('ip', 'rule', 'show')).toMatch(/^0:\s+from all lookup local/m);
});

interface ResultsScenario {
  readonly id: string;
  readonly verdict: string;
  readonly error?: string;
  readonly differences: readonly { field: string; device: string }[];
}

/** A --scenario glob of `ids` (picomatch takes a one-item brace literally). */
const glob = (ids: readonly string[]) => (ids.length === 1 ? (ids[0] ?? '') : `{${ids.join(',')}}`);

const scenarios = (file: string) =>
  (JSON.parse(readFileSync(file, 'utf8')) as { scenarios: ResultsScenario[] }).scenarios;

/** `peer serve` on B's device (a child), then `run --peer` on A's; both results. */
async function acrossPair(
  pair: Pair,
  port: number,
  ids: readonly string[],
  serve = pair.devices[1],
): Promise<{ run: SpawnSyncReturns<string>; served: number | null; serveErr: string }> {
  const server = spawn(
    process.execPath,
    [
      CLI,
      'peer',
      'serve',
      '--device',
      serve,
      '--listen',
      pair.addresses[1],
      '--port',
      String(port),
      '--timeout',
      '60',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let serveErr = '';
  const listening = new Promise<void>((resolve) => {
    server.stderr.on('data', (c: Buffer) => {
      serveErr += c.toString();
      if (serveErr.includes('on control port')) resolve();
    });
    server.on('exit', () => resolve());
  });
  const served = new Promise<number | null>((resolve) => server.on('exit', resolve));
  await listening;
  const dir = join(report, `${pair.kind}-${port}`);
  const run = spawnSync(
    process.execPath,
    [
      CLI,
      'run',
      '--device',
      pair.devices[0],
      '--peer',
      `${pair.addresses[1]}:${port}`,
      '--scenario',
      glob(ids),
      '--report',
      dir,
    ],
    { encoding: 'utf8', timeout: 120_000 },
  );
  // A run that failed before it connected leaves the server waiting: not for its timeout.
  const stop = setTimeout(() => server.kill(), 5000);
  const status = await served;
  clearTimeout(stop);
  return { run, served: status, serveErr };
}

/**
 * `peer serve` and `run --peer` in one child process (servePeer and runPeer at once):
 * the verdicts of each scenario, for the two-process run to equal.
 */
function oneProcess(pair: Pair, port: number, ids: readonly string[]): ResultsScenario[] {
  const root = process.env.RDMA_INTEROP_ROOT ?? process.cwd();
  const script = `
    const { servePeer, runPeer } = await import(${JSON.stringify(join(root, 'dist/interop/peer/peer.js'))});
    const [a, b] = ${JSON.stringify(pair.devices)};
    const [, host] = ${JSON.stringify(pair.addresses)};
    const serving = servePeer({ device: b, listen: host, port: ${port}, timeoutSeconds: 60 });
    const run = await runPeer({ device: a, peer: { host, port: ${port} }, scenario: ${JSON.stringify(glob(ids))} });
    await serving;
    process.stdout.write(JSON.stringify(run.results.map((r) => ({ id: r.scenario.id, verdict: r.verdict, ...(r.error === undefined ? {} : { error: r.error }) }))));
    process.exit(0);
  `;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    encoding: 'utf8',
    timeout: 120_000,
  });
  expect(r.status, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as ResultsScenario[];
}

describe('run --peer: the link scenarios across two devices that do not share a netdev', () => {
  for (const [n, pair] of PAIRS.entries())
    it(`${pair.kind}: the verdicts of the one-process run of the same scenarios`, async () => {
      const ids = Object.keys(pair.scenarios);
      const t0 = performance.now();
      const { run, served, serveErr } = await acrossPair(pair, 18600 + n, ids);
      const t1 = performance.now();
      expect(run.status, `${run.stdout}\n${run.stderr}\n${serveErr}`).toBe(0);
      expect(served, serveErr).toBe(0);
      const dir = join(report, `${pair.kind}-${18600 + n}`);
      for (const f of ['results.json', 'junit.xml', 'report.md', 'report.html'])
        expect(existsSync(join(dir, f)), f).toBe(true);
      const across = scenarios(join(dir, 'results.json'));
      const results = JSON.parse(readFileSync(join(dir, 'results.json'), 'utf8')) as {
        pair?: Record<string, { devices: { name: string; provider: string }[] }>;
        scenarios: { device: string; target?: string; pair?: unknown }[];
      };
      expect(results.pair?.A?.devices.map((d) => d.name)).toEqual([pair.devices[0]]);
      expect(results.pair?.B?.devices.map((d) => d.name)).toEqual([pair.devices[1]]);
      for (const row of results.scenarios)
        expect(row).toMatchObject({ device: pair.devices[0], target: `${pair.kind}0` });
      // The one-process run of the same scenarios: both halves in one child process.
      const one = oneProcess(pair, 18620 + n, ids);
      const t2 = performance.now();
      process.stderr.write(
        `peer: ${pair.kind} ${ids.length} scenarios across two processes ${((t1 - t0) / 1000).toFixed(1)} s, in one ${((t2 - t1) / 1000).toFixed(1)} s: ${across.map((s) => `${s.id}=${s.verdict}`).join(' ')}\n`,
      );
      const verdicts = (rows: readonly { id: string; verdict: string; error?: string }[]) =>
        rows.map((s) => [s.id, s.verdict, s.error]).sort();
      // As the guest pair's link run: every rxe scenario a match, siw's passes.
      for (const s of across)
        expect(['match', 'known'], `${s.id}: ${s.error}`).toContain(s.verdict);
      if (pair.kind === 'rxe') for (const s of across) expect(s.verdict).toBe('match');
      expect(across.map((s) => s.id).sort()).toEqual([...ids].sort());
      expect(verdicts(across)).toEqual(verdicts(one));
    });

  it('a peer that serves another transport refuses clearly; an unreachable one is a typed error', async () => {
    const [rxe, siw] = PAIRS as [Pair, Pair];
    // A RoCE requester (peer_ra) against a peer serving its iWARP device (peer_ib).
    const mixed: Pair = { ...rxe, addresses: [rxe.addresses[0], siw.addresses[1]] };
    const { run, served } = await acrossPair(mixed, 18610, ['link-rxe-write'], siw.devices[1]);
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(
      /^rdma-interop run: error: the responder refused link-rxe-write: this end serves peer_ib, no RoCE device$/m,
    );
    expect(run.stderr).not.toMatch(/\n\s+at /);
    expect(served).toBe(0);
    const gone = spawnSync(
      process.execPath,
      [CLI, 'run', '--device', rxe.devices[0], '--peer', `${rxe.addresses[1]}:18611`],
      { encoding: 'utf8', timeout: 60_000 },
    );
    expect(gone.status).toBe(1);
    expect(gone.stderr).toMatch(
      /^rdma-interop run: error: cannot reach the peer at 198\.18\.2\.1:18611: ECONNREFUSED \(is 'rdma-interop peer serve' running there\?\)$/m,
    );
    expect(gone.stderr).not.toMatch(/\n\s+at /);
  });
});
