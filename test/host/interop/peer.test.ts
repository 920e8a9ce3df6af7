import { readFileSync, rmSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ArgumentError } from '../../../src/errors.js';
import type { RunEnvironment } from '../../../src/interop/environment.js';
import { driveRequester, serveResponder } from '../../../src/interop/link/guest.js';
import { decodeLinkCapture } from '../../../src/interop/link/observed.js';
import type { PairPlace } from '../../../src/interop/link/place.js';
import {
  CONTROL_PORT,
  ControlProtocolError,
  encodeMessage,
  type LinkObservation,
  MessageLines,
} from '../../../src/interop/link/protocol.js';
import { judgeLinkScenario } from '../../../src/interop/link/run.js';
import { linkScenarioById } from '../../../src/interop/link/scenarios.js';
import {
  linkTargetOf,
  PeerError,
  parsePeerAddress,
  peerScenarios,
} from '../../../src/interop/peer/peer.js';

// The two-host link mode (`run --peer`, `peer serve`) without devices: the peer's address,
// the protocol's error paths (a responder that has no device for the target refuses; an
// unreachable peer; a line that is no control message) and the judge keyed on the sides'
// own device names. The run on devices is test/kernel/interop/peer.test.ts.

/** A place on loopback: the devices are never opened by the paths tested here. */
function loopbackPlace(port: number, connectMs = 2000): PairPlace {
  const here = { me: '127.0.0.1', peer: '127.0.0.1' };
  return {
    devices: { rxe0: 'lab_roce', siw0: 'lab_iw' },
    addresses: { rxe0: here, siw0: here },
    control: { listen: '127.0.0.1', connect: '127.0.0.1', port },
    connectMs,
    serveMs: 5000,
  };
}

/** A port nothing listens on (one just closed). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const address = server.address();
  await new Promise<void>((r) => server.close(() => r()));
  if (typeof address !== 'object' || address === null) throw new Error('no port');
  return address.port;
}

describe('--peer <host[:port]>', () => {
  it.each([
    ['lab-b', { host: 'lab-b', port: CONTROL_PORT }],
    ['192.0.2.7:4000', { host: '192.0.2.7', port: 4000 }],
    ['fd37::2', { host: 'fd37::2', port: CONTROL_PORT }],
    ['[fd37::2]:4001', { host: 'fd37::2', port: 4001 }],
  ])('%s', (text, want) => {
    expect(parsePeerAddress(text)).toEqual(want);
  });

  it.each([
    ['lab-b:0', /the port is an integer 1-65535/],
    ['lab-b:http', /the port is an integer 1-65535/],
    ['[lab-b]:4000', /brackets hold an IPv6 address/],
    ['fd37::2:x:y/1', /give a host name or address|in brackets/],
    ['', /give a host name or address/],
  ])('refuses %j', (text, message) => {
    expect(() => parsePeerAddress(text)).toThrow(ArgumentError);
    expect(() => parsePeerAddress(text)).toThrow(message);
  });
});

describe('the target a device runs as', () => {
  it('RoCE the by-hand rxe0 programs, iWARP the rdma_cm siw0 ones, InfiniBand refused', () => {
    expect(linkTargetOf({ name: 'mlx5_0', transport: 'roce' })).toBe('rxe0');
    expect(linkTargetOf({ name: 'irdma0', transport: 'iwarp' })).toBe('siw0');
    expect(() => linkTargetOf({ name: 'mlx5_1', transport: 'ib' })).toThrow(PeerError);
    const roce = peerScenarios('rxe0', 'link-*-write');
    expect(roce.map((s) => s.id)).toEqual(['link-rxe-write']);
    expect(peerScenarios('siw0', undefined).every((s) => s.device === 'siw0')).toBe(true);
  });
});

describe('the control protocol between two hosts', () => {
  it('a responder without a device for the target refuses it, and the requester stops there', async () => {
    let listening: (port: number) => void = () => {};
    const port = new Promise<number>((r) => {
      listening = r;
    });
    // This end serves RoCE only: an iWARP scenario's setup is refused before any device opens.
    const serving = serveResponder(loopbackPlace(0), ['rxe0'], (p) => listening(p));
    const out = join(process.env.TMPDIR ?? '/tmp', `peer-test-${process.pid}-${Date.now()}.json`);
    await driveRequester(['link-siw-write', 'link-siw-read'], out, loopbackPlace(await port));
    await serving;
    const observed = JSON.parse(readFileSync(out, 'utf8')) as LinkObservation[];
    rmSync(out, { force: true });
    expect(observed).toHaveLength(1);
    expect(observed[0]?.error).toBe(
      'LinkRefusedError: the responder refused link-siw-write: this end serves lab_roce, no iWARP device',
    );
  });

  it('an unreachable peer fails with the socket error after the connect time', async () => {
    const port = await closedPort();
    const out = join(process.env.TMPDIR ?? '/tmp', `peer-test-${process.pid}-unreachable.json`);
    await expect(
      driveRequester(['link-siw-write'], out, loopbackPlace(port, 300)),
    ).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });

  it('a responder nobody connects to gives up after its time', async () => {
    const place = { ...loopbackPlace(0), serveMs: 200 };
    await expect(serveResponder(place, ['rxe0'])).rejects.toThrow(
      /no requester connected within 0 s/,
    );
  });

  it('a line that is no control message is a typed error, not a crash', async () => {
    const lines = new MessageLines();
    const next = lines.next(1000);
    lines.push(Buffer.from('SSH-2.0-OpenSSH_9.2\r\n'));
    await expect(next).rejects.toBeInstanceOf(ControlProtocolError);
    await expect(lines.next(1000)).rejects.toThrow(/no rdma-interop control message/);
    const good = new MessageLines();
    good.push(Buffer.from(encodeMessage({ type: 'bye' })));
    await expect(good.next(1000)).resolves.toEqual({ type: 'bye' });
  });

  it('a requester that speaks another protocol gets nothing served', async () => {
    let listening: (port: number) => void = () => {};
    const port = new Promise<number>((r) => {
      listening = r;
    });
    const serving = serveResponder(loopbackPlace(0), ['rxe0'], (p) => listening(p));
    const socket = connect(await port, '127.0.0.1');
    socket.write('GET / HTTP/1.1\n\n');
    await expect(serving).rejects.toBeInstanceOf(ControlProtocolError);
    socket.destroy();
  });
});

describe('the judge across two hosts', () => {
  const FIXTURES = join(process.cwd(), 'test', 'fixtures', 'link');
  const fixture = JSON.parse(
    readFileSync(join(FIXTURES, 'environment.json'), 'utf8'),
  ) as RunEnvironment;
  const rxe = fixture.devices.find((d) => d.name === 'rxe0');
  /** Each host with its own device name; B's an unrecorded provider. */
  const A: RunEnvironment = {
    ...fixture,
    devices: rxe === undefined ? [] : [{ ...rxe, name: 'lab_a' }],
  };
  const B: RunEnvironment = {
    ...fixture,
    host: 'lab-b',
    devices: rxe === undefined ? [] : [{ ...rxe, name: 'mlx5_0', provider: 'mlx5' }],
  };
  const observations = JSON.parse(
    readFileSync(join(FIXTURES, 'observations.json'), 'utf8'),
  ) as LinkObservation[];

  it('keys each side on the provider of the device it opened', () => {
    const id = 'link-rxe-read';
    const scenario = linkScenarioById(id);
    if (scenario === undefined) throw new Error(`no ${id}`);
    const capture = decodeLinkCapture(new Uint8Array(readFileSync(join(FIXTURES, `${id}.pcap`))));
    const result = judgeLinkScenario(
      scenario,
      observations.find((o) => o.id === id),
      capture,
      A,
      0,
      {
        environments: { A, B },
        requester: 'A',
        devices: { A: 'lab_a', B: 'mlx5_0' },
        peers: { requester: '192.0.2.1', responder: '192.0.2.2' },
      },
    );
    expect(result.pair?.requester.provider).toBe('rxe');
    expect(result.pair?.responder.provider).toBe('mlx5');
    expect(result.error).toBeUndefined();
    expect(['match', 'expected-difference', 'finding']).toContain(result.verdict);
  });
});
