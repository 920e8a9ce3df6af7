/**
 * `decode --fields <tshark names>` against `tshark -T fields -e <the same names>`: the two
 * outputs must be the same text (header line included), on the committed RoCE captures of
 * real rxe runs and on generated captures covering every header the field table reads
 * (RoCE: BTH, RETH, AtomicETH, AETH, AtomicAckETH, ImmDt, IETH, DETH, IPv6; iWARP with the
 * MPA CRC on: MPA Request/Reply with and without private data, every RDMAP opcode of
 * RFC 5040 and RFC 7306, a Terminate). The field table's types, bases and bitmasks are
 * checked against `tshark -G fields`, their origin.
 * The iWARP captures without MPA CRC (test/fixtures/siw-rping.pcap, link-siw-read.pcap,
 * as every stock siw capture) are here too: the lazy decoder once reported each of their
 * FPDUs twice (issue 25).
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runDecode } from '../../../src/cli/commands/decode.js';
import { TSHARK_FIELDS } from '../../../src/codec/capture/tshark-fields.js';
import {
  encodeMpaStream,
  encodeRdmapMessage,
  makeAtomicRequest,
  makeAtomicResponse,
  makeImmediateData,
  makeMpaFrame,
  makeRdmaWrite,
  makeReadRequest,
  makeReadResponse,
  makeSend,
  makeTerminate,
  type RdmapMessage,
  terminatedHeadersOf,
} from '../../../src/codec/iwarp/index.js';
import { decodeFrame } from '../../../src/codec/net/frame.js';
import { decodeCapture } from '../../../src/codec/pcap/capture.js';
import { buildRoceFrame } from '../../../src/codec/roce/frame.js';
import type { ExtensionHeaders } from '../../../src/codec/roce/headers.js';
import { bthOpcodeByName } from '../../../src/codec/roce/opcodes.js';
import { makeTempDir, TcpConversation, withTcpPort, writeTempPcap } from '../../helpers/pcap.js';
import {
  INFINIBAND_PAYLOAD_PROTOCOLS,
  TSHARK_AVAILABLE,
  TSHARK_PATH,
  tsharkColumns,
  tsharkFieldsText,
} from '../../helpers/tshark.js';
import { diffWithTshark as diffMerged } from '../../helpers/tshark-diff.js';

/** Every field the table prints (protocols are filter-only). */
const FIELDS = [...TSHARK_FIELDS.values()]
  .filter((f) => f.type !== 'FT_PROTOCOL')
  .map((f) => f.name);

/** Compares the two outputs; returns the frames and the non-empty values compared. */
function diffOne(file: string, fields: readonly string[] = FIELDS) {
  const ours = runDecode(file, { fields: fields.join(','), header: true });
  expect(ours.stderr).toBe('');
  expect(ours.exitCode).toBe(0);
  const theirs = tsharkFieldsText(file, fields, { disableProtocols: INFINIBAND_PAYLOAD_PROTOCOLS });
  expect(ours.stdout).toBe(theirs);
  const rows = theirs.trimEnd().split('\n').slice(1);
  const values = rows.flatMap((r) => r.split('\t')).filter((c) => c !== '').length;
  return { frames: rows.length, values };
}

const RXE_FIXTURES = readdirSync('test/fixtures/link')
  .filter((f) => f.startsWith('link-rxe-') && f.endsWith('.pcap'))
  .map((f) => join('test/fixtures/link', f));
const FIXTURES = [
  ...RXE_FIXTURES,
  // Real siw captures, MPA CRC off (the CRC field on the wire as zeros).
  'test/fixtures/siw-rping.pcap',
  'test/fixtures/link/link-siw-read.pcap',
  // A stock siw Terminate (layer LLP, Error Type 1: no LLP error code under tshark's name).
  'test/fixtures/siw-send-no-recv.pcap',
  // The patched siw's RFC 7306 exchanges, a Terminate among them.
  ...readdirSync('test/fixtures/siw-rfc7306')
    .filter((f) => f.endsWith('.pcap'))
    .map((f) => join('test/fixtures/siw-rfc7306', f)),
];

const VA = 0x0123456789abcdefn;
const reth = { virtualAddress: VA, rKey: 0x1a2b3c4d, dmaLength: 0x2345 };
const payload = (n: number) => Uint8Array.from({ length: n }, (_, i) => (i * 37 + 11) & 0xff);
const ROCE_CASES: readonly {
  name: string;
  headers: ExtensionHeaders;
  payload?: number;
  v6?: true;
}[] = [
  { name: 'RC_SEND_FIRST', headers: {}, payload: 16 },
  {
    name: 'RC_SEND_ONLY_WITH_IMMEDIATE',
    headers: { ImmDt: { immediateData: 0xdeadbeef } },
    payload: 4,
  },
  { name: 'RC_SEND_ONLY_WITH_INVALIDATE', headers: { IETH: { rKey: 0x0badf00d } }, payload: 2 },
  { name: 'RC_RDMA_WRITE_FIRST', headers: { RETH: reth }, payload: 12 },
  {
    name: 'RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE',
    headers: { RETH: reth, ImmDt: { immediateData: 0x01020304 } },
    payload: 5,
    v6: true,
  },
  { name: 'RC_RDMA_READ_REQUEST', headers: { RETH: reth } },
  {
    name: 'RC_RDMA_READ_RESPONSE_ONLY',
    headers: { AETH: { syndrome: 0x05, msn: 0xfedcba } },
    payload: 8,
  },
  { name: 'RC_ACKNOWLEDGE', headers: { AETH: { syndrome: 0x62, msn: 0x000104 } } },
  {
    name: 'RC_ATOMIC_ACKNOWLEDGE',
    headers: {
      AETH: { syndrome: 0x1f, msn: 0x000106 },
      AtomicAckETH: { originalRemoteData: 0xfedcba9876543210n },
    },
  },
  {
    name: 'RC_COMPARE_SWAP',
    headers: {
      AtomicETH: {
        virtualAddress: VA,
        rKey: 0x1a2b3c4d,
        swapOrAddData: 0x0fedcba987654321n,
        compareData: 0x8877665544332211n,
      },
    },
    v6: true,
  },
  {
    name: 'UD_SEND_ONLY',
    headers: { DETH: { qKey: 0x11223344, reserved: 0, sourceQp: 0x00c0ff } },
    payload: 6,
  },
];

function roceCapture(): string {
  const frames = ROCE_CASES.map((c, i) =>
    buildRoceFrame(
      c.v6
        ? { sourceIp: '2001:db8::1', destinationIp: '2001:db8::2', ipv6: true }
        : { sourceIp: '192.0.2.1', destinationIp: '192.0.2.2' },
      {
        bth: {
          opcode: bthOpcodeByName(c.name),
          destinationQp: 0x012345 + i,
          psn: 0xabcde0 + i,
          ackRequest: i % 2 === 0,
          solicitedEvent: i % 3 === 0,
          partitionKey: 0xffff - i,
        },
        headers: c.headers,
        ...(c.payload === undefined ? {} : { payload: payload(c.payload) }),
      },
      49152 + (i % 3),
    ),
  );
  return writeTempPcap(frames);
}

/** An iWARP conversation with the MPA CRC on: every RDMAP opcode, from both sides. */
function iwarpCapture(privateData: boolean): string {
  const extra = privateData ? { privateData: Uint8Array.of(0xde, 0xad, 0xbe, 0xef, 0x01) } : {};
  const request = makeMpaFrame('mpa-request', { crc: true, ...extra });
  const reply = makeMpaFrame('mpa-reply', { crc: true, ...extra });
  const readRequest = makeReadRequest({
    messageSequenceNumber: 1,
    sinkSTag: 0x0a0b0c0d,
    sinkTaggedOffset: 0x0001020304050607n,
    readSize: 0x1234,
    sourceSTag: 0x5a6b7c8d,
    sourceTaggedOffset: 0x1011121314151617n,
  });
  const client: RdmapMessage[] = [
    makeRdmaWrite({ stag: 0x11223344, taggedOffset: 0x0102030405060708n, payload: payload(5) }),
    readRequest,
    makeSend({ messageSequenceNumber: 1, payload: payload(11) }),
    makeSend({
      kind: 'send-invalidate',
      messageSequenceNumber: 2,
      payload: payload(1),
      invalidateSTag: 0x0badcafe,
    }),
    makeSend({ kind: 'send-se', messageSequenceNumber: 3, payload: payload(700) }),
    makeSend({
      kind: 'send-se-invalidate',
      messageSequenceNumber: 4,
      payload: payload(2),
      invalidateSTag: 0x00c0ffee,
    }),
    makeAtomicRequest({
      operation: 'fetch-add',
      messageSequenceNumber: 2,
      requestIdentifier: 0x01020304,
      remoteSTag: 0x1a2b3c4d,
      remoteTaggedOffset: 0x0123456789abcdefn,
      addOrSwapData: 0x1111111122222222n,
      addOrSwapMask: 0x8000000000008000n, // not symmetric under a byte or 32-bit-half swap (issue 38)
    }),
    makeAtomicRequest({
      operation: 'cmp-swap',
      messageSequenceNumber: 3,
      requestIdentifier: 0x05060708,
      remoteSTag: 0x1a2b3c4d,
      remoteTaggedOffset: 0x0123456789abcde8n,
      addOrSwapData: 0xfedcba9876543210n,
      addOrSwapMask: 0x00000000ffffffffn,
      compareData: 0x0011223344556677n,
      compareMask: 0xffffffff00000000n,
    }),
    makeImmediateData({ messageSequenceNumber: 5, immediateData: 0x0123456789abcdefn }),
    makeTerminate({
      messageSequenceNumber: 1,
      layer: 0,
      errorType: 1,
      errorCode: 0x02,
      headers: terminatedHeadersOf(encodeRdmapMessage(readRequest))!,
    }),
    // Wireshark takes 18 bytes of copied DDP header unless EType is 1 (a real siw capture's
    // Terminate, DDP layer EType 2, showed it), and the RDMA header after it.
    makeTerminate({
      messageSequenceNumber: 2,
      layer: 1,
      errorType: 2,
      errorCode: 0x01,
      headers: terminatedHeadersOf(encodeRdmapMessage(readRequest))!,
    }),
    makeTerminate({
      messageSequenceNumber: 3,
      layer: 1,
      errorType: 1,
      errorCode: 0x00,
      headers: terminatedHeadersOf(
        encodeRdmapMessage(
          makeRdmaWrite({ stag: 0x0c0d0e0f, taggedOffset: 0x10n, payload: payload(3) }),
        ),
      )!,
    }),
    makeTerminate({
      messageSequenceNumber: 4,
      layer: 2,
      errorType: 0,
      errorCode: 0x03,
      headers: terminatedHeadersOf(encodeRdmapMessage(readRequest))!,
      includeRdmaHeader: false,
    }),
    makeTerminate({ messageSequenceNumber: 5, layer: 0, errorType: 2, errorCode: 0x05 }),
  ];
  const server: RdmapMessage[] = [
    makeReadResponse({ stag: 0x0a0b0c0d, taggedOffset: 0x0001020304050607n, payload: payload(9) }),
    makeAtomicResponse({
      messageSequenceNumber: 1,
      originalRequestIdentifier: 0x01020304,
      originalRemoteDataValue: 0x0123456789abcdefn,
    }),
  ];
  const c = encodeMpaStream(request, client, { peerFrame: reply });
  const s = encodeMpaStream(reply, server, { peerFrame: request });
  const tcp = new TcpConversation({
    clientIp: '198.51.100.1',
    serverIp: '198.51.100.2',
    clientPort: 40000,
    serverPort: 4000,
  }).handshake();
  tcp.send('client', c.frame).send('server', s.frame);
  for (const f of c.fpdus) tcp.send('client', f);
  for (const f of s.fpdus) tcp.send('server', f);
  return writeTempPcap(tcp.frames());
}

describe.skipIf(!TSHARK_AVAILABLE)('decode --fields agrees with tshark -T fields', () => {
  it("the field table's types, bases and bitmasks are tshark 4.0's (tshark -G fields)", () => {
    const g = new Map<string, string[]>();
    const out = execFileSync(TSHARK_PATH, ['-G', 'fields'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
      maxBuffer: 256 * 1024 * 1024,
    });
    for (const line of out.split('\n')) {
      const c = line.split('\t');
      if (c[0] === 'F') g.set(c[2]!, c);
      if (c[0] === 'P') g.set(c[2]!, ['P', c[1]!, c[2]!, 'FT_PROTOCOL', '', '', '0x0']);
    }
    for (const f of TSHARK_FIELDS.values()) {
      const c = g.get(f.name);
      expect(c, `${f.name} is no tshark 4.0 field`).toBeDefined();
      expect([c![3], c![5], Number(c![6])], f.name).toEqual([f.type, f.base, f.mask]);
    }
  });

  it('on the committed rxe captures (RoCEv2, real runs)', () => {
    let frames = 0;
    let values = 0;
    for (const file of FIXTURES) {
      const r = diffOne(file);
      frames += r.frames;
      values += r.values;
    }
    expect(FIXTURES.length).toBeGreaterThanOrEqual(7);
    expect(frames).toBeGreaterThanOrEqual(20);
    console.log(
      `tshark diff, committed captures: ${FIXTURES.length} files, ${frames} frames, ${FIELDS.length} fields, ${values} values`,
    );
  });

  // A CI run's stock siw connection came from port 44818, which tshark 4.0 gives to
  // EtherNet/IP: tshark then showed its MPA Request, Reply and FPDUs as no iWARP at all,
  // where decode (MPA by content, on any port) decoded them (TSHARK_MPA_ON_ANY_PORT).
  it('on a siw capture moved to a port tshark registers for another protocol (44818, enip)', () => {
    const original = 'test/fixtures/link/link-siw-read.pcap';
    const moved = join(makeTempDir('tshark-port-'), 'siw-read-44818.pcap');
    writeFileSync(moved, withTcpPort(readFileSync(original), 49383, 44818));
    // The RDMAP opcodes tshark shows, frame by frame: the same on either port.
    const opcodes = (file: string) =>
      tsharkColumns(file, ['frame.number', 'iwarp_rdma.opcode'])
        .filter((r) => (r['iwarp_rdma.opcode'] ?? []).length > 0)
        .map((r) => `${r['frame.number']?.[0]}:${r['iwarp_rdma.opcode']?.join('|')}`);
    expect(opcodes(original).length).toBeGreaterThan(0);
    expect(opcodes(moved)).toEqual(opcodes(original));
    expect(diffOne(moved)).toEqual(diffOne(original));
    // The move keeps every TCP checksum as valid as it was (the codec verifies them).
    const checksums = (file: string) => {
      const c = decodeCapture(readFileSync(file));
      if (!c.ok) throw c.error;
      return c.value.records.map((r) => {
        const f = decodeFrame(r.linkType, r.data);
        return f.ok && f.value.transport?.kind === 'tcp'
          ? f.value.transport.header.checksumValid
          : 'not tcp';
      });
    };
    expect(checksums(moved)).toEqual(checksums(original));
    expect(checksums(original)).toContain(true);
  });

  it("the kernel tests' merge (test/helpers/tshark-diff.ts): the rxe captures concatenated", () => {
    const dir = makeTempDir('tshark-diff-');
    const diffs = diffMerged(RXE_FIXTURES, dir, join(process.cwd(), 'dist/cli/main.js'));
    for (const d of diffs) expect(d.ours).toBe(d.theirs);
    expect(diffs.reduce((n, d) => n + d.frames, 0)).toBe(20);
  });

  it('on generated RoCEv2 packets of every extension header, IPv4 and IPv6', () => {
    const r = diffOne(roceCapture());
    expect(r.frames).toBe(ROCE_CASES.length);
    console.log(`tshark diff, RoCE: ${r.frames} frames, ${r.values} values`);
  });

  it('on generated iWARP conversations (MPA CRC on) with every RDMAP opcode', () => {
    for (const pd of [false, true]) {
      const r = diffOne(iwarpCapture(pd));
      expect(r.frames).toBeGreaterThan(12);
      console.log(
        `tshark diff, iWARP (private data ${pd}): ${r.frames} frames, ${r.values} values`,
      );
    }
  });
});
