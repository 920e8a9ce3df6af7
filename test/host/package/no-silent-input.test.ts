/**
 * Issue 25, "no silent input": each case the issue lists, through the entry points a user
 * imports, and the lookup convention (UnknownNameError names the unknown name and the
 * layer). The rule: no raw TypeError/RangeError escapes an exported function, and no
 * unknown name or out-of-range number is accepted.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import * as codec from '../../../src/codec/index.js';
import * as engine from '../../../src/engine/index.js';
import { ArgumentError, RdmaInteropError, UnknownNameError } from '../../../src/index.js';
import * as runtime from '../../../src/runtime/index.js';
import * as verbs from '../../../src/verbs/index.js';
import { ROOT } from '../docs/examples.js';

/** What `fn` threw (it must throw). */
function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error('did not throw');
}

describe('the lookup convention: UnknownNameError, naming the name and the layer', () => {
  it.each([
    [
      'engine',
      'access flag',
      'IBV_ACCESS_REMOTE_ATOMIC',
      () => engine.accessMask(['IBV_ACCESS_REMOTE_ATOMIC' as never]),
    ],
    [
      'verbs',
      'access flag',
      'IBV_ACCESS_REMOTE_ATOMIC',
      () => verbs.accessMaskOf(['IBV_ACCESS_REMOTE_ATOMIC' as never]),
    ],
    ['codec', 'BTH opcode name', 'RC_NOPE', () => codec.bthOpcodeByName('RC_NOPE')],
    ['codec', 'RDMAP message kind', 'nope', () => codec.rdmapOpcodeOf('nope' as never)],
    ['codec', 'atomic operation kind', 'nope', () => codec.atomicOpcodeOf('nope' as never)],
    ['codec', 'Terminate code id', 'nope', () => codec.terminateCodeById('nope')],
    [
      'codec',
      'RoCE extension header',
      'NOPE',
      () => codec.decodeExtensionHeader('NOPE' as never, new Uint8Array(16), 0),
    ],
    ['engine', 'engine failure', 'nope', () => engine.failureRow('nope' as never)],
    ['engine', 'engine failure', 'nope', () => engine.terminateCodeOf('nope' as never)],
    ['engine', 'work-completion flag', 'NOPE', () => engine.wcFlagsValue(['NOPE' as never])],
    ['runtime', 'kernel line', '6.2', () => runtime.kernelLine('6.2')],
    ['runtime', 'signal name', 'SIGNOPE', () => runtime.signalExitCode('SIGNOPE' as never)],
  ] as const)('%s %s %s', (origin, kind, name, lookup) => {
    const error = thrown(lookup);
    expect(error).toBeInstanceOf(UnknownNameError);
    expect(error).toBeInstanceOf(ArgumentError);
    expect(error).toMatchObject({ origin, kind, unknown: name });
    expect((error as Error).message).toContain(`unknown ${kind} '${name}'`);
  });

  it('a known name still works, and lists what is known when it does not', () => {
    expect(engine.accessMask(['LOCAL_WRITE', 'REMOTE_ATOMIC'])).toBe(9);
    expect(codec.bthOpcodeByName('RC_FETCH_ADD')).toBe(0x14);
    expect(runtime.kernelLine('6.12').rdmaCore).toBe('56.1');
    const error = thrown(() => engine.accessMask(['toString' as never])) as UnknownNameError;
    expect(error.known).toContain('REMOTE_ATOMIC');
  });
});

describe("the issue's silent inputs, each now refused", () => {
  it('mpaPadLength(1.5) (was 0.5), and -1, NaN, a string, 2^16', () => {
    for (const bad of [1.5, -1, Number.NaN, '4', 0x1_0000]) {
      expect(() => codec.mpaPadLength(bad as number)).toThrow(ArgumentError);
    }
    expect(codec.mpaPadLength(1)).toBe(1);
    expect(codec.mpaPadLength(2)).toBe(0);
  });

  it('validateWorkRequest reports a made-up opcode and a number where a bigint belongs', () => {
    expect(engine.validateWorkRequest({ opcode: 'ATOMIC_FROB', wrId: 7n } as never)).toMatchObject({
      reason: 'invalid-work-request',
      wrId: 7n,
      field: 'opcode',
    });
    const numberAdd = {
      opcode: 'ATOMIC_FETCH_AND_ADD',
      wrId: 7n,
      remoteAddr: 0x7f00_0000_1000n,
      rkey: 0x1234,
      add: 1,
    };
    expect(engine.validateWorkRequest(numberAdd as never)).toMatchObject({ field: 'add' });
    expect(engine.validateWorkRequest({ ...numberAdd, add: 1n } as never)).toBeUndefined();
    expect(() => engine.validateWorkRequest(null as never)).toThrow(ArgumentError);
  });

  it('projectVerbs with an unknown opcode records it invalid (was a raw TypeError); a bad scenario is an ArgumentError', () => {
    const scenario = {
      responder: {
        buffers: [
          {
            stag: 0x1234,
            baseTaggedOffset: 0x7f00_0000_1000n,
            length: 64,
            access: 8,
            protectionDomain: 1,
          },
        ],
      },
      workRequests: [{ opcode: 'ATOMIC_FROB', wrId: 0x0102_0304_0506_0708n }],
    };
    const { iwarp, roce } = engine.projectVerbs(scenario as never);
    expect(iwarp.invalid).toMatchObject([{ field: 'opcode', wrId: 0x0102_0304_0506_0708n }]);
    expect(roce.invalid).toMatchObject([{ field: 'opcode' }]);
    expect(() => engine.projectVerbs({ ...scenario, workRequests: 'x' } as never)).toThrow(
      ArgumentError,
    );
    expect(() => engine.projectVerbs({ ...scenario, profile: 'rfc9999' } as never)).toThrow(
      UnknownNameError,
    );
    const numberOffset = { ...scenario.responder.buffers[0], baseTaggedOffset: 0x1000 };
    expect(() =>
      engine.projectVerbs({ ...scenario, responder: { buffers: [numberOffset] } } as never),
    ).toThrow(engine.TaggedBufferRegistrationError);
  });

  it('decodeExtensionHeader: an unknown header name or a negative offset (were raw TypeError/RangeError)', () => {
    const bytes = new Uint8Array(28);
    expect(() => codec.decodeExtensionHeader('NOPE' as never, bytes, 0)).toThrow(UnknownNameError);
    expect(() => codec.decodeExtensionHeader('RETH', bytes, -1)).toThrow(ArgumentError);
    expect(() => codec.decodeExtensionHeader('RETH', bytes, 1.5)).toThrow(ArgumentError);
    expect(codec.decodeExtensionHeader('RETH', bytes, 0).ok).toBe(true);
    expect(codec.decodeExtensionHeader('RETH', bytes, 20).ok).toBe(false); // truncated: a result
  });

  it('encodePcap and encodeRocePacket given a number where a bigint belongs: EncodeError', () => {
    const error = thrown(() =>
      codec.encodePcap({ linkType: 1 }, [{ timestampNs: 1_000 as never, data: new Uint8Array(4) }]),
    );
    expect(error).toBeInstanceOf(codec.EncodeError);
    expect(error).toMatchObject({ layer: 'pcap', field: 'records[0].timestampNs' });
    expect(() =>
      codec.encodePcapng({ interfaces: [{ linkType: 1 }] }, [
        { timestampNs: 1_000 as never, data: new Uint8Array(4) },
      ]),
    ).toThrow(codec.EncodeError);
    const packet = {
      bth: { opcode: codec.BthOpcode.RC_RDMA_WRITE_ONLY, destinationQp: 0x12, psn: 5 },
      headers: { RETH: { virtualAddress: 0x1000, rKey: 0x1234, dmaLength: 0 } },
    };
    const rocE = thrown(() => codec.encodeRocePacket(packet as never));
    expect(rocE).toBeInstanceOf(codec.EncodeError);
    expect(rocE).toMatchObject({ field: 'RETH.virtualAddress' });
    expect(() => codec.encodeRocePacket({ ...packet, headers: { RETH: 5 } } as never)).toThrow(
      codec.EncodeError,
    );
  });

  it('decodeFpdu with offset -1 or position NaN (returned ok)', () => {
    const fpdu = codec.encodeFpdu(new Uint8Array(8), { crc: true, markers: false });
    expect(codec.decodeFpdu(fpdu, 0, { crc: true, markers: false }).ok).toBe(true);
    expect(() => codec.decodeFpdu(fpdu, -1, { crc: true, markers: false })).toThrow(ArgumentError);
    expect(() =>
      codec.decodeFpdu(fpdu, 0, { crc: true, markers: true, position: Number.NaN }),
    ).toThrow(ArgumentError);
    expect(() => codec.decodeFpdu(fpdu, 0, { crc: 'yes', markers: false } as never)).toThrow(
      ArgumentError,
    );
  });

  it('an unknown option name or profile is refused, not ignored', () => {
    const bytes = new Uint8Array(64);
    expect(() => codec.decodeRdmapMessage(bytes, { profil: 'v2-draft' } as never)).toThrow(
      UnknownNameError,
    );
    expect(() => codec.decodeRdmapMessage(bytes, { profile: 'rfc9999' as never })).toThrow(
      UnknownNameError,
    );
    expect(() => codec.decodeCaptureMessages(bytes, { rocePrt: 4791 } as never)).toThrow(
      UnknownNameError,
    );
    expect(() => codec.decodeMpaStream(bytes, { startSeq: 1 } as never)).toThrow(UnknownNameError);
    expect(() =>
      codec.encodeFpdu(bytes, { crc: true, markers: false, marker: 1 } as never),
    ).toThrow(UnknownNameError);
    expect(codec.decodeRdmapMessage(bytes, { profile: 'v2-draft' }).ok).toBe(false);
  });

  it('a lookup that identifies a wire code takes a number: undefined for one the table lacks', () => {
    expect(codec.bthOpcodeInfo(0x14)?.name).toBe('RC_FETCH_ADD');
    expect(codec.bthOpcodeInfo(0xff)).toBeUndefined(); // reserved: data, not a mistake
    expect(() => codec.bthOpcodeInfo('RC_FETCH_ADD' as never)).toThrow(ArgumentError);
    expect(() => codec.rdmapOpcodeInfo(undefined as never)).toThrow(ArgumentError);
    expect(() => codec.terminateCodeInfo(0, '2' as never, 7)).toThrow(ArgumentError);
  });

  it('every public decoder refuses a value that is no Uint8Array (was a raw TypeError)', () => {
    for (const decode of [
      codec.decodeBth,
      codec.decodeRocePacket,
      codec.decodeDdpSegment,
      codec.decodeRdmapMessage,
      codec.decodeMpaFrame,
      codec.decodeMpaStream,
      codec.decodePcap,
      codec.decodePcapng,
      codec.decodeCapture,
      codec.decodeCaptureMessages,
      codec.decodeEthernet,
      codec.decodeIpv4,
      codec.decodeIpv6,
      codec.decodeTcp,
      codec.decodeUdp,
      codec.decodeSll,
      codec.decodeSll2,
    ] as ((b: unknown) => unknown)[]) {
      for (const bad of [undefined, null, 'bytes', [1, 2, 3]]) {
        const error = thrown(() => decode(bad));
        expect(error, decode.name).toBeInstanceOf(ArgumentError);
        expect(error).toBeInstanceOf(RdmaInteropError);
        expect(error).toMatchObject({ origin: 'codec', field: 'bytes' });
      }
    }
  });

  it('runInGuest and setupGuestAssets refuse a wrong call before any clean-up, set-up or boot', async () => {
    await expect(runtime.runInGuest({ command: 'true' } as never)).rejects.toThrow(ArgumentError);
    await expect(runtime.runInGuest({ command: ['true'], cpus: 0 })).rejects.toThrow(ArgumentError);
    await expect(runtime.runInGuest({ command: ['true'], kernl: '6.1' } as never)).rejects.toThrow(
      UnknownNameError,
    );
    await expect(runtime.setupGuestAssets({ kernelLine: '6.2' })).rejects.toThrow(UnknownNameError);
    await expect(runtime.setupGuestAssets({ kernelLne: '6.1' } as never)).rejects.toThrow(
      UnknownNameError,
    );
    await expect(runtime.setupGuestAssets(null as never)).rejects.toThrow(ArgumentError);
  });
});

describe('no caller treats a lookup that throws as one that returns undefined', () => {
  // kernelLine used to return undefined for a directory or a typo; code written against
  // that (comparing its result with undefined, or reading `.rdmaCore` through `?.`) would
  // now throw where it meant to test. The package's own test is findKernelLine. Main's CLI
  // (src/cli/options.ts, run.ts, run-link.ts) has such calls: this test names them at merge.
  const THROWING = [
    'kernelLine',
    'terminateCodeById',
    'failureRow',
    'bthOpcodeByName',
    'rdmapOpcodeOf',
    'atomicOpcodeOf',
  ];
  const misuse = new RegExp(`\\b(${THROWING.join('|')})\\([^()]*\\)(\\?\\.| [!=]== undefined)`);
  const sources = (dir: string): string[] =>
    readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) =>
      e.isDirectory()
        ? sources(join(dir, e.name))
        : e.name.endsWith('.ts')
          ? [join(dir, e.name)]
          : [],
    );

  it('src/ and test/ hold none', () => {
    const found = [...sources('src'), ...sources('test')].flatMap((file) =>
      readFileSync(join(ROOT, file), 'utf8')
        .split('\n')
        .flatMap((line, i) => (misuse.test(line) ? [`${file}:${i + 1}: ${line.trim()}`] : [])),
    );
    expect(found).toEqual([]);
  });
});
