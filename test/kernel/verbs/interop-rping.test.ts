/**
 * Programs written with the wrapper talk to rdma-core's `rping` (librdmacm/examples/rping.c,
 * Debian's rdmacm-utils on PATH, as the guest sees the host's root) over rdma_cm, in both
 * roles, on rxe0 and siw0 (issue 34), with the data checked on both sides:
 * - the wrapper's client against `rping -s -v`: the C server prints every buffer it RDMA
 *   Read from us ("server ping data: ..."), and our sink gets back what it wrote;
 * - `rping -c -V -v` against the wrapper's server: the C client compares what we RDMA
 *   Wrote back with what it sent ("data mismatch!" and a failing exit otherwise), and we
 *   check every buffer we read from it against rping's pattern.
 * siw needs rdma_cm: its QPs reach RTS only over an iw_cm connection, which is why the
 * pingpong family (ibv_*_pingpong, connected by hand) runs on rxe0 only
 * (interop-c-pingpong.test.ts).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { waitFor } from '../../helpers/wait-for.js';
import { rpingClient, rpingPattern, rpingServer } from './rping-peer.js';

const PINGS = 10;
const SIZE = 200;

/** `rping args` with line-buffered output (stdbuf: "rdma_listen" shows as it happens). */
function startRping(args: readonly string[]): {
  child: ChildProcess;
  output: () => string;
  done: Promise<{ code: number | null; out: string; err: string }>;
} {
  const child = spawn('stdbuf', ['-oL', 'rping', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout?.on('data', (d: Buffer) => {
    out += d.toString();
  });
  child.stderr?.on('data', (d: Buffer) => {
    err += d.toString();
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  const done = new Promise<{ code: number | null; out: string; err: string }>((resolve) => {
    child.on('error', (e) => resolve({ code: -1, out, err: `${err}${String(e)}` }));
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, out, err });
    });
  });
  return { child, output: () => out, done };
}

/** The data lines `-v` printed after `prefix`, NUL-terminated strings as rping prints them. */
function printed(out: string, prefix: string): string[] {
  return out
    .split('\n')
    .filter((l) => l.startsWith(prefix))
    .map((l) => l.slice(prefix.length));
}

/** Ping `n`'s buffer as the C string rping prints. */
function text(n: number): string {
  return rpingPattern(n, SIZE).toString('latin1', 0, SIZE - 1);
}

for (const [device, address, port] of [
  ['rxe0', '192.0.2.1', 22200],
  ['siw0', '198.51.100.1', 22210],
] as const) {
  describe(`the wrapper against rdma-core rping on ${device}`, () => {
    it('as the client of rping -s: the C server read our buffers, ours came back written', async () => {
      const server = startRping([
        '-s',
        '-d',
        '-v',
        '-S',
        String(SIZE),
        '-a',
        address,
        '-p',
        String(port),
      ]);
      try {
        await waitFor('rping -s to listen', () =>
          server.output().includes('rdma_listen') ? true : undefined,
        );
        const r = await rpingClient({ address, port, size: SIZE, count: PINGS });
        const c = await server.done;
        expect(c.code, c.err).toBe(0);
        const expected = Array.from({ length: PINGS }, (_, n) => text(n));
        expect(printed(c.out, 'server ping data: ')).toEqual(expected);
        expect(r.data.map((b, n) => b.equals(rpingPattern(n, SIZE)))).toEqual(
          expected.map(() => true),
        );
      } finally {
        server.child.kill('SIGKILL');
      }
    });

    it('as the server of rping -c -V: the C client validated every echo, we read its pattern', async () => {
      let client: ReturnType<typeof startRping> | undefined;
      const r = await rpingServer({
        address,
        port: port + 1,
        count: PINGS,
        started: () => {
          client = startRping([
            '-c',
            '-V',
            '-v',
            '-a',
            address,
            '-p',
            String(port + 1),
            '-C',
            String(PINGS),
            '-S',
            String(SIZE),
          ]);
        },
      });
      if (client === undefined) throw new Error('rping -c was not started');
      const c = await client.done;
      expect(c.code, c.err).toBe(0);
      expect(c.err).not.toMatch(/data mismatch/);
      expect(printed(c.out, 'ping data: ')).toEqual(
        Array.from({ length: PINGS }, (_, n) => text(n)),
      );
      expect(r.data.map((b, n) => b.equals(rpingPattern(n, SIZE)))).toEqual(r.data.map(() => true));
      expect(r.data.length).toBe(PINGS);
    });
  });
}
