import { createSocket, type Socket } from 'node:dgram';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { makeRdmaWrite, makeSend } from '../../../src/codec/iwarp/build.js';
import { decodeFpdu, encodeFpdu } from '../../../src/codec/iwarp/mpa.js';
import { encodeRdmapMessage } from '../../../src/codec/iwarp/rdmap.js';
import { buildTcpFrame, buildUdpFrame } from '../../../src/codec/net/build.js';
import { decodeFrame } from '../../../src/codec/net/frame.js';
import { TcpFlag } from '../../../src/codec/net/tcp.js';
import { ArgumentError, UnknownNameError } from '../../../src/errors.js';
import { corruptTcpPayload, flipBit, requestMpaCrc } from '../../../src/runtime/faults/corrupt.js';
import { FaultPipeline } from '../../../src/runtime/faults/pipeline.js';
import { Prng } from '../../../src/runtime/faults/prng.js';
import { LinkRelay } from '../../../src/runtime/faults/relay.js';
import {
  type FaultSpec,
  formatFaults,
  NO_FAULTS,
  parseFaults,
} from '../../../src/runtime/faults/spec.js';
import { waitFor } from '../../helpers/wait-for.js';

const ETHERNET = 1;

/** Frame `i`: a UDP datagram whose payload is its index (4 bytes). */
function frameOf(i: number): Uint8Array {
  const payload = new Uint8Array(4);
  new DataView(payload.buffer).setUint32(0, i);
  return buildUdpFrame(
    { sourceIp: '192.0.2.1', destinationIp: '192.0.2.2' },
    { sourcePort: 0xc123, destinationPort: 4791 },
    payload,
  );
}

function indexOf(frame: Uint8Array): number {
  return new DataView(frame.buffer, frame.byteOffset).getUint32(frame.length - 4);
}

function tcpFrame(ports: [number, number], data: Uint8Array): Uint8Array {
  return buildTcpFrame(
    { sourceIp: '198.51.100.1', destinationIp: '198.51.100.2' },
    {
      sourcePort: ports[0],
      destinationPort: ports[1],
      sequenceNumber: 0x1234_5678,
      acknowledgementNumber: 0x0abc_def1,
      flags: TcpFlag.PSH | TcpFlag.ACK,
      options: [],
    },
    data,
  );
}

function tcpChecksumValid(frame: Uint8Array): boolean | undefined {
  const decoded = decodeFrame(ETHERNET, frame);
  if (!decoded.ok) throw decoded.error;
  const t = decoded.value.transport;
  return t?.kind === 'tcp' ? t.header.checksumValid : undefined;
}

function run(spec: FaultSpec, frames: number): { out: number[]; pipeline: FaultPipeline } {
  const out: number[] = [];
  const pipeline = new FaultPipeline(spec, new Prng(spec.seed), (f) => out.push(indexOf(f)));
  for (let i = 0; i < frames; i++) pipeline.push(frameOf(i));
  return { out, pipeline };
}

describe('--faults: the fault relay spec', () => {
  it('parses the documented example into exact values', () => {
    const spec = parseFaults(
      'drop=0.02,dup=0.01,reorder=8,delay=1ms,jitter=2ms,corrupt=0.001,corrupt-payload=0.0005,seed=7',
    );
    expect(spec).toEqual({
      drop: 0.02,
      dup: 0.01,
      reorder: 8,
      reorderRate: 0.05,
      delayMs: 1,
      jitterMs: 2,
      corrupt: 0.001,
      corruptPayload: 0.0005,
      mpaCrc: 0,
      seed: 7,
    });
    expect(parseFaults('delay=500us,jitter=0.2s,seed=3')).toMatchObject({
      delayMs: 0.5,
      jitterMs: 200,
    });
    expect(formatFaults(spec)).toBe(
      'drop=0.02,dup=0.01,reorder=8,delay=1ms,jitter=2ms,corrupt=0.001,corrupt-payload=0.0005,seed=7',
    );
    expect(parseFaults(formatFaults(spec))).toEqual(spec);
  });

  it('refuses an unknown key, a repeated key and every bad value, naming the key', () => {
    expect(() => parseFaults('drops=0.1')).toThrow(UnknownNameError);
    expect(() => parseFaults('drops=0.1')).toThrow(/unknown fault key 'drops' \(known: drop, dup/);
    const bad: [string, RegExp][] = [
      ['drop=1.5', /faults\.drop: '1\.5' is not a probability/],
      ['drop=', /faults\.drop: '' is not a probability/],
      ['dup=-0.1', /faults\.dup: /],
      ['reorder=2.5', /faults\.reorder: /],
      ['reorder=5000', /faults\.reorder: /],
      ['delay=5', /faults\.delay: '5' is not a duration/],
      ['jitter=1h', /faults\.jitter: /],
      ['seed=-1', /faults\.seed: /],
      ['mpa-crc=yes', /faults\.mpa-crc: 'yes' is not 0 or 1/],
      ['mpa-crc=2', /faults\.mpa-crc: /],
      ['seed=4294967296', /faults\.seed: /],
      ['drop', /faults\.drop: has no value/],
      ['drop=0.1,drop=0.2', /faults\.drop: is given twice/],
      ['', /faults: expected key=value/],
    ];
    for (const [text, message] of bad) {
      expect(() => parseFaults(text), text).toThrow(ArgumentError);
      expect(() => parseFaults(text), text).toThrow(message);
    }
  });
});

describe('the seeded generator (xoshiro128**)', () => {
  it('gives the reference outputs of state [1, 2, 3, 4]', () => {
    // By hand from the algorithm: rotl(s1 * 5, 7) * 9 after each state update.
    const prng = Prng.fromState([1, 2, 3, 4]);
    expect([prng.nextU32(), prng.nextU32(), prng.nextU32()]).toEqual([11520, 0, 5927040]);
  });

  it('is deterministic per seed and stream, and seeds and streams differ', () => {
    const take = (p: Prng) => Array.from({ length: 8 }, () => p.nextU32());
    expect(take(new Prng(7))).toEqual(take(new Prng(7)));
    expect(take(new Prng(7))).not.toEqual(take(new Prng(8)));
    expect(take(new Prng(7, 0))).not.toEqual(take(new Prng(7, 1)));
    const p = new Prng(7);
    const draws = Array.from({ length: 10_000 }, () => p.next());
    expect(Math.min(...draws)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...draws)).toBeLessThan(1);
    const mean = draws.reduce((a, b) => a + b, 0) / draws.length;
    expect(Math.abs(mean - 0.5)).toBeLessThan(0.02);
  });
});

describe('the fault pipeline (one direction)', () => {
  it('drops and duplicates at the asked rates, counts every fault, the same per seed', () => {
    const spec = { ...NO_FAULTS, drop: 0.1, dup: 0.05, seed: 7 };
    const { out, pipeline } = run(spec, 10_000);
    const c = pipeline.counts;
    expect(c.frames).toBe(10_000);
    expect(c.dropped).toBeGreaterThan(900);
    expect(c.dropped).toBeLessThan(1100);
    expect(c.duplicated).toBeGreaterThan(380);
    expect(c.duplicated).toBeLessThan(520);
    expect(c.forwarded).toBe(10_000 - c.dropped + c.duplicated);
    expect(out.length).toBe(c.forwarded);
    // Without reordering, delay or jitter the order is kept (a duplicate follows its original).
    expect(out).toEqual([...out].sort((a, b) => a - b));
    expect(new Set(out).size).toBe(10_000 - c.dropped);
    expect(run(spec, 10_000).out).toEqual(out);
    expect(run({ ...spec, seed: 8 }, 10_000).out).not.toEqual(out);
  });

  it('reorders within the window: each held frame overtaken by at most `reorder` frames', async () => {
    const spec = { ...NO_FAULTS, reorder: 4, reorderRate: 0.1, seed: 11 };
    const { out, pipeline } = run(spec, 2000);
    // Held frames leave within the pipeline's hold limit; waited for, not slept for (issue 38).
    await waitFor('all 2000 frames out of the reorder window', () =>
      out.length >= 2000 ? true : undefined,
    );
    expect([...out].sort((a, b) => a - b)).toEqual(Array.from({ length: 2000 }, (_, i) => i));
    // A frame is reordered when a frame that arrived after it left before it.
    let reordered = 0;
    out.forEach((index, at) => {
      const overtaking = out.slice(0, at).filter((earlier) => earlier > index).length;
      if (overtaking > 0) reordered += 1;
      expect(overtaking).toBeLessThanOrEqual(4);
    });
    expect(pipeline.counts.reordered).toBe(reordered);
    expect(reordered).toBeGreaterThan(150);
    expect(reordered).toBeLessThan(260);
  });

  it('delays every frame by at least `delay` and keeps the order under jitter', async () => {
    const spec = { ...NO_FAULTS, delayMs: 30, jitterMs: 20, seed: 5 };
    const times: number[] = [];
    const out: number[] = [];
    const started = performance.now();
    const pipeline = new FaultPipeline(spec, new Prng(5), (f) => {
      out.push(indexOf(f));
      times.push(performance.now() - started);
    });
    for (let i = 0; i < 20; i++) pipeline.push(frameOf(i));
    expect(out).toEqual([]);
    await waitFor('the 20 delayed frames', () => (out.length >= 20 ? true : undefined));
    expect(out).toEqual(Array.from({ length: 20 }, (_, i) => i));
    expect(Math.min(...times)).toBeGreaterThanOrEqual(29);
    pipeline.close();
  });

  it('spares ARP and the control channel: drop=1 loses everything else', () => {
    const out: Uint8Array[] = [];
    const spec = { ...NO_FAULTS, drop: 1, corrupt: 1 };
    const pipeline = new FaultPipeline(spec, new Prng(2), (f) => out.push(f), [18515]);
    const control = tcpFrame([40_001, 18515], Uint8Array.of(0x7b, 0x7d, 0x0a));
    const mpa = tcpFrame([40_001, 50_002], Uint8Array.of(1, 2, 3));
    const arp = new Uint8Array(60);
    arp[12] = 0x08;
    arp[13] = 0x06;
    pipeline.push(control);
    pipeline.push(mpa);
    pipeline.push(arp);
    pipeline.push(frameOf(1));
    expect(out).toEqual([control, arp]);
    expect(pipeline.counts).toMatchObject({ frames: 4, spared: 2, dropped: 2, forwarded: 2 });
  });

  it('sends nothing after close (held and delayed frames are discarded)', async () => {
    const out: number[] = [];
    const pipeline = new FaultPipeline({ ...NO_FAULTS, delayMs: 20 }, new Prng(1), (f) =>
      out.push(indexOf(f)),
    );
    pipeline.push(frameOf(1));
    pipeline.close();
    pipeline.push(frameOf(2));
    // Absence shown by a later event, not a short sleep (issue 38): a second pipeline with
    // the same delay, given its frame after the first's, delivers it; by then the closed
    // pipeline's frame would have gone out too.
    const later: number[] = [];
    const witness = new FaultPipeline({ ...NO_FAULTS, delayMs: 20 }, new Prng(1), (f) =>
      later.push(indexOf(f)),
    );
    witness.push(frameOf(3));
    await waitFor('the witness frame', () => (later.length > 0 ? true : undefined));
    witness.close();
    expect(later).toEqual([3]);
    expect(out).toEqual([]);
    expect(pipeline.counts.frames).toBe(1);
  });
});

describe('corruption', () => {
  const data = Uint8Array.from({ length: 64 }, (_, i) => (i * 37 + 5) & 0xff);

  it('a bit flip changes exactly one bit of the IP payload; TCP then refuses the segment', () => {
    const prng = new Prng(3);
    for (let n = 0; n < 50; n++) {
      const original = tcpFrame([40_001, 50_002], data);
      const frame = original.slice();
      expect(flipBit(frame, prng)).toBe(true);
      const changed = [...frame].flatMap((b, i) => (b !== original[i] ? [i] : []));
      expect(changed).toHaveLength(1);
      const at = changed[0] ?? 0;
      expect(at).toBeGreaterThanOrEqual(14 + 20);
      const diff = (frame[at] ?? 0) ^ (original[at] ?? 0);
      expect(diff & (diff - 1)).toBe(0);
      expect(tcpChecksumValid(original)).toBe(true);
      expect(tcpChecksumValid(frame)).toBe(false);
    }
    // Not IPv4: untouched.
    const arp = new Uint8Array(60);
    arp[12] = 0x08;
    arp[13] = 0x06;
    expect(flipBit(arp, prng)).toBe(false);
    expect(arp.every((b, i) => b === (i === 12 ? 0x08 : i === 13 ? 0x06 : 0))).toBe(true);
  });

  /** An RDMA Write of `data` as one FPDU with its CRC (RFC 5044 §4), as siw sends it. */
  const WRITE_FPDU = encodeFpdu(
    encodeRdmapMessage(
      makeRdmaWrite({ stag: 0x1234_5678, taggedOffset: 0x7f00_0000_1000n, payload: data }),
    ),
    { crc: true, markers: false },
  );
  /** Where the Write's data lies in a frame: after Ethernet, IPv4, TCP, MPA length, DDP header. */
  const DATA_AT = 14 + 20 + 20 + 2 + 14;

  it('a payload change hits the Write data of the FPDU, TCP checksum valid, CRC not', () => {
    const prng = new Prng(4);
    const hit = new Set<number>();
    for (let n = 0; n < 50; n++) {
      const original = tcpFrame([40_001, 50_002], WRITE_FPDU);
      const frame = original.slice();
      expect(corruptTcpPayload(frame, prng)).toBe(true);
      const changed = [...frame].flatMap((b, i) => (b !== original[i] ? [i] : []));
      // One data byte, and the checksum field (unless the new sum happens to be equal in a byte).
      const inData = changed.filter((i) => i >= DATA_AT && i < DATA_AT + data.length);
      expect(inData).toHaveLength(1);
      hit.add(inData[0] ?? -1);
      expect(
        changed.every((i) => inData.includes(i) || i === 14 + 20 + 16 || i === 14 + 20 + 17),
      ).toBe(true);
      expect(tcpChecksumValid(frame)).toBe(true);
      // Only the MPA CRC catches it (RFC 5044 §8).
      const crcOf = (f: Uint8Array) => {
        const fpdu = decodeFpdu(f, 14 + 20 + 20, { crc: true, markers: false });
        return fpdu.ok ? fpdu.value.crcState : 'undecodable';
      };
      expect([crcOf(original), crcOf(frame)]).toEqual(['valid', 'invalid']);
    }
    // Spread over the data, never the headers or the CRC.
    expect(hit.size).toBeGreaterThan(20);
  });

  it('leaves a segment alone that starts with no tagged FPDU carrying data (no draw)', () => {
    const prng = new Prng(4);
    const before = new Prng(4);
    const send = encodeFpdu(
      encodeRdmapMessage(makeSend({ messageSequenceNumber: 1, payload: data })),
      { crc: true, markers: false },
    );
    for (const bytes of [data, send, WRITE_FPDU.subarray(0, 40)]) {
      const frame = tcpFrame([40_001, 50_002], bytes);
      const original = frame.slice();
      expect(corruptTcpPayload(frame, prng)).toBe(false);
      expect(frame).toEqual(original);
    }
    expect(prng.below(1000)).toBe(before.below(1000));
  });

  it('spares the control channel, segments without data and non-TCP frames', () => {
    const prng = new Prng(4);
    const control = tcpFrame([18515, 50_002], WRITE_FPDU);
    expect(corruptTcpPayload(control.slice(), prng, [18515])).toBe(false);
    const ack = tcpFrame([40_001, 50_002], new Uint8Array(0));
    expect(corruptTcpPayload(ack.slice(), prng)).toBe(false);
    expect(corruptTcpPayload(frameOf(1).slice(), prng)).toBe(false);
  });

  it('spares the MPA Request and Reply (no CRC yet), not an FPDU after them', () => {
    const prng = new Prng(5);
    for (const key of ['MPA ID Req Frame', 'MPA ID Rep Frame']) {
      const start = new Uint8Array(20 + 8);
      start.set(new TextEncoder().encode(key));
      const frame = tcpFrame([40_001, 50_002], start);
      const original = frame.slice();
      expect(corruptTcpPayload(frame, prng)).toBe(false);
      expect(frame).toEqual(original);
    }
    // An FPDU after them is corrupted (see below: mpa-crc=1 rewrites the Request's C bit).
    expect(corruptTcpPayload(tcpFrame([40_001, 50_002], WRITE_FPDU), prng)).toBe(true);
  });
});

describe('mpa-crc=1: the MPA Request asks for CRCs (RFC 5044 §7.1)', () => {
  /** An MPA Request: key, then |M|C|R|Res|Rev| = 0x00 0x02 (rev 2), PD_Length 0. */
  function request(key = 'MPA ID Req Frame', bits = 0x00): Uint8Array {
    const bytes = new Uint8Array(20);
    bytes.set(new TextEncoder().encode(key));
    bytes[16] = bits;
    bytes[17] = 2;
    return tcpFrame([40_001, 50_002], bytes);
  }
  const C_BIT_AT = 14 + 20 + 20 + 16;

  it('sets the C bit of a Request and nothing else, the TCP checksum still valid', () => {
    const frame = request();
    const original = frame.slice();
    expect(parseFaults('mpa-crc=1,seed=3')).toMatchObject({ mpaCrc: 1, seed: 3 });
    expect(formatFaults(parseFaults('mpa-crc=1,corrupt-payload=0.02,seed=3'))).toBe(
      'corrupt-payload=0.02,mpa-crc=1,seed=3',
    );
    expect(requestMpaCrc(frame)).toBe(true);
    expect(frame[C_BIT_AT]).toBe(0x40);
    const changed = [...frame].flatMap((b, i) => (b !== original[i] ? [i] : []));
    expect(changed.filter((i) => i !== 14 + 20 + 16 && i !== 14 + 20 + 17)).toEqual([C_BIT_AT]);
    expect(tcpChecksumValid(frame)).toBe(true);
  });

  it('leaves the Reply, a Request asking already, and other segments alone', () => {
    for (const frame of [
      request('MPA ID Rep Frame'),
      request('MPA ID Req Frame', 0x40),
      tcpFrame([40_001, 50_002], new Uint8Array(40)),
      frameOf(3),
    ]) {
      const original = frame.slice();
      expect(requestMpaCrc(frame)).toBe(false);
      expect(frame).toEqual(original);
    }
  });

  it('the pipeline counts the Requests it set, without a draw (the fault sequence is unchanged)', () => {
    const spec = { ...NO_FAULTS, drop: 0.3, mpaCrc: 1, seed: 11 };
    const got: Uint8Array[] = [];
    const pipeline = new FaultPipeline(spec, new Prng(spec.seed), (f) => got.push(f));
    const plain = run({ ...spec, mpaCrc: 0 }, 40);
    for (let i = 0; i < 40; i++) pipeline.push(i === 0 ? request() : frameOf(i));
    expect(pipeline.counts.dropped).toBe(plain.pipeline.counts.dropped);
    const requestKept = got.some((f) => f[C_BIT_AT] === 0x40);
    expect(pipeline.counts.mpaCrcRequested).toBe(requestKept ? 1 : 0);
  });
});

describe('the relay on loopback (two sockets stand in for the guests)', () => {
  async function guest(): Promise<{ socket: Socket; port: number; got: number[] }> {
    const socket = createSocket('udp4');
    const got: number[] = [];
    socket.on('message', (m) => got.push(indexOf(new Uint8Array(m))));
    await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
    return { socket, port: socket.address().port, got };
  }

  it('forwards both ways with the seeded faults and counts them per direction', async () => {
    const a = await guest();
    const b = await guest();
    const spec = { ...NO_FAULTS, drop: 0.2, dup: 0.1, seed: 9 };
    const relay = await LinkRelay.open(spec, 0, [a.port, b.port]);
    try {
      const [towardsB, towardsA] = relay.ports;
      for (let i = 0; i < 200; i++) {
        a.socket.send(frameOf(i), towardsB, '127.0.0.1');
        b.socket.send(frameOf(1000 + i), towardsA, '127.0.0.1');
        // Pacing, so that loopback UDP's socket buffers do not overflow; not synchronisation.
        if (i % 20 === 19) await sleep(5);
      }
      // Waited for: every frame counted and every forwarded one received (issue 38).
      await waitFor('the relay to count and deliver every frame', () => {
        const c = relay.counts();
        return c.aToB.frames === 200 &&
          c.bToA.frames === 200 &&
          b.got.length >= c.aToB.forwarded &&
          a.got.length >= c.bToA.forwarded
          ? true
          : undefined;
      });
      const { aToB, bToA } = relay.counts();
      expect(aToB.frames).toBe(200);
      expect(bToA.frames).toBe(200);
      expect(b.got.length).toBe(aToB.forwarded);
      expect(a.got.length).toBe(bToA.forwarded);
      expect(aToB.forwarded).toBe(200 - aToB.dropped + aToB.duplicated);
      expect(aToB.dropped).toBeGreaterThan(20);
      expect(b.got.every((i) => i < 200)).toBe(true);
      expect(a.got.every((i) => i >= 1000)).toBe(true);
      // Each direction draws from its own stream: A->B is what a lone pipeline of stream 0 does.
      const alone: number[] = [];
      const pipeline = new FaultPipeline(spec, new Prng(9, 0), (f) => alone.push(indexOf(f)));
      for (let i = 0; i < 200; i++) pipeline.push(frameOf(i));
      expect(b.got).toEqual(alone);
    } finally {
      await relay.close();
      a.socket.close();
      b.socket.close();
    }
  });
});
