/**
 * Real capture files from the real tools: tcpdump (classic pcap; Ethernet on `lo`, Linux
 * cooked SLL2 on `any`, SLL v1 with `-y LINUX_SLL`) and dumpcap (pcapng, whose files carry
 * option-laden SHB/IDB blocks and an Interface Statistics Block that the reader must skip).
 * A RoCEv2 packet is sent over UDP to port 4791 on the loopback interface, IPv4 and IPv6,
 * and must come back out of each file decoded. Needs root and the tools; skipped otherwise.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  decodeCaptureMessages,
  type RoceItem,
} from '../../../../src/codec/capture/decode-capture.js';
import { decodeCapture } from '../../../../src/codec/pcap/capture.js';
import { decodePcapng } from '../../../../src/codec/pcap/pcapng.js';
import { encodeRocePacket } from '../../../../src/codec/roce/packet.js';
import { makeTempDir } from '../../../helpers/pcap.js';
import { tsharkColumns } from '../../../helpers/tshark.js';
import { waitFor } from '../../../helpers/wait-for.js';

const CAN_CAPTURE =
  process.getuid?.() === 0 &&
  existsSync('/usr/bin/tcpdump') &&
  existsSync('/usr/bin/dumpcap') &&
  existsSync('/usr/bin/tshark');

const PACKET = encodeRocePacket({
  bth: { opcode: 0x05, destinationQp: 0x00c0de, psn: 0x0a0b0c, solicitedEvent: true },
  headers: { ImmDt: { immediateData: 0x89abcdef } },
  payload: Uint8Array.of(0x10, 0x32, 0x54, 0x76, 0x98),
});

/** Starts a capture tool and resolves once it reports that it is listening. */
function startCapture(cmd: string, args: string[]): Promise<ChildProcess> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    const timer = setTimeout(() => reject(new Error(`${cmd} did not start: ${err}`)), 20_000);
    child.stderr?.on('data', (d: Buffer) => {
      err += d.toString();
      if (/listening on|Capturing on/i.test(err)) {
        clearTimeout(timer);
        resolve(child);
      }
    });
    child.on('error', reject);
  });
}

function stop(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.on('exit', () => resolve());
    child.kill('SIGINT');
  });
}

async function send(family: 'udp4' | 'udp6', host: string, packet = PACKET): Promise<void> {
  const socket = createSocket(family);
  await new Promise<void>((resolve, reject) =>
    socket.send(packet, 4791, host, (e) => (e ? reject(e) : resolve())),
  );
  socket.close();
}

/** A packet for another QP, sent until every tool has written one: the filters are armed. */
const PROBE = encodeRocePacket({
  bth: { opcode: 0x04, destinationQp: 0x00beef, psn: 1 },
  headers: {},
  payload: Uint8Array.of(0x01),
});

/** How many RoCE packets for `qp` the capture file holds so far (0 while it is unreadable). */
function packetsFor(file: string, qp: number): number {
  if (!existsSync(file)) return 0;
  const r = decodeCaptureMessages(readFileSync(file));
  if (!r.ok) return 0;
  return r.value.items.filter(
    (i) => i.kind === 'roce' && i.packet.ok && i.packet.value.bth.destinationQp === qp,
  ).length;
}

describe.skipIf(!CAN_CAPTURE)('captures written by tcpdump and dumpcap', () => {
  const dir = makeTempDir();
  const files = {
    lo: join(dir, 'lo.pcap'),
    any: join(dir, 'any.pcap'),
    sll1: join(dir, 'sll1.pcap'),
    ng: join(dir, 'lo.pcapng'),
  };
  const filter = 'udp dst port 4791';

  beforeAll(async () => {
    const tools = await Promise.all([
      startCapture('tcpdump', ['-i', 'lo', '-U', '-w', files.lo, filter]),
      startCapture('tcpdump', ['-i', 'any', '-U', '-w', files.any, filter]),
      startCapture('tcpdump', ['-i', 'any', '-y', 'LINUX_SLL', '-U', '-w', files.sll1, filter]),
      startCapture('dumpcap', ['-i', 'lo', '-f', filter, '-w', files.ng]),
    ]);
    // dumpcap announces "Capturing on" a moment before its filter is armed: waited for by
    // evidence, not a sleep (issue 38): probes go out until every file holds one.
    const all = Object.values(files);
    await waitFor(
      'every capture tool to record a probe packet',
      async () => {
        await send('udp4', '127.0.0.1', PROBE);
        return all.every((f) => packetsFor(f, 0x00beef) > 0) ? true : undefined;
      },
      { intervalMs: 100 },
    );
    await send('udp4', '127.0.0.1');
    await send('udp6', '::1');
    // Every tool has written both before it is stopped (SIGINT then flushes the file).
    await waitFor('every capture file to hold both packets', () =>
      all.every((f) => packetsFor(f, 0x00c0de) >= 2) ? true : undefined,
    );
    await Promise.all(tools.map(stop));
  }, 60_000);

  afterAll(() => {
    execFileSync('rm', ['-rf', dir]);
  });

  const expectRoce = (file: string, linkType: number) => {
    const r = decodeCaptureMessages(readFileSync(file));
    if (!r.ok) throw r.error;
    const roce = r.value.items.filter((i): i is RoceItem => i.kind === 'roce');
    // Other tests may send to 4791 at the same time; ours are the ones with our QP.
    const ours = roce.filter((i) => i.packet.ok && i.packet.value.bth.destinationQp === 0x00c0de);
    expect(ours.map((i) => i.frame.network?.kind)).toEqual(['ipv4', 'ipv6']);
    for (const item of ours) {
      if (!item.packet.ok) throw item.packet.error;
      expect(item.packet.value.opcode.name).toBe('RC_SEND_ONLY_WITH_IMMEDIATE');
      expect(item.packet.value.headers.ImmDt?.immediateData).toBe(0x89abcdef);
      expect(item.packet.value.payload).toEqual(Uint8Array.of(0x10, 0x32, 0x54, 0x76, 0x98));
      expect(item.frame.network?.header.destination).toMatch(/^(127\.0\.0\.1|::1)$/);
    }
    const file0 = decodeCapture(readFileSync(file));
    expect(file0.ok && file0.value.records.every((x) => x.linkType === linkType)).toBe(true);
  };

  it('tcpdump -i lo: Ethernet frames with zero MACs', () => {
    expectRoce(files.lo, 1);
    const r = decodeCaptureMessages(readFileSync(files.lo));
    const first = r.ok ? r.value.items.find((i) => i.kind === 'roce') : undefined;
    expect(
      first?.kind === 'roce' &&
        first.frame.link.kind === 'ethernet' &&
        first.frame.link.header.source,
    ).toBe('00:00:00:00:00:00');
  });

  // tshark decodes the cooked headers independently; ours must agree field by field.
  const expectSllLikeTshark = (file: string) => {
    const r = decodeCaptureMessages(readFileSync(file));
    if (!r.ok) throw r.error;
    const ours = r.value.items.flatMap((i) =>
      i.kind === 'roce' && i.frame.link.kind === 'sll'
        ? [
            [
              String(i.frame.link.header.packetType),
              String(i.frame.link.header.hardwareType),
              `0x${i.frame.link.header.protocol.toString(16).padStart(4, '0')}`,
              i.frame.link.header.address,
              i.frame.link.header.interfaceIndex === undefined
                ? ''
                : String(i.frame.link.header.interfaceIndex),
            ],
          ]
        : [],
    );
    const theirs = tsharkColumns(file, [
      'sll.pkttype',
      'sll.hatype',
      'sll.etype',
      'sll.src.eth',
      'sll.ifindex',
    ]).map((row) =>
      ['sll.pkttype', 'sll.hatype', 'sll.etype', 'sll.src.eth', 'sll.ifindex'].map(
        (f) => row[f]?.[0] ?? '',
      ),
    );
    expect(ours.length).toBeGreaterThanOrEqual(2);
    expect(ours).toEqual(theirs);
  };

  it('tcpdump -i any: Linux cooked v2', () => {
    expectRoce(files.any, 276);
    expectSllLikeTshark(files.any);
  });

  it('tcpdump -i any -y LINUX_SLL: Linux cooked v1', () => {
    expectRoce(files.sll1, 113);
    expectSllLikeTshark(files.sll1);
  });

  it('dumpcap: pcapng with options and statistics blocks', () => {
    expectRoce(files.ng, 1);
    const ng = decodePcapng(readFileSync(files.ng));
    expect(ng.ok && ng.value.skippedBlocks).toBeGreaterThan(0);
  });
});
