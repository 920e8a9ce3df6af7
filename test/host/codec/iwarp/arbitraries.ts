/** fast-check generators of valid iWARP values, per profile. */
import fc from 'fast-check';
import type {
  ControlBits,
  IwarpProfile,
  MpaRequestReply,
  RdmapMessage,
  TaggedPlacement,
  UntaggedPlacement,
} from '../../../../src/codec/iwarp/index.js';
import {
  ATOMIC_OPCODES,
  acceptedQueueNumbers,
  PROFILE_RDMA_VERSION,
  RDMAP_OPCODES,
} from '../../../../src/codec/iwarp/index.js';

export const u32 = fc.integer({ min: 0, max: 0xffffffff });
export const u64 = fc.bigInt({ min: 0n, max: 0xffffffffffffffffn });
const bytes = (maxLength = 48) => fc.uint8Array({ maxLength });

function control(profile: IwarpProfile): fc.Arbitrary<ControlBits> {
  const rv = PROFILE_RDMA_VERSION[profile];
  return fc.record({
    ddpReserved: fc.integer({ min: 0, max: 15 }),
    ddpVersion: fc.constant(1),
    rdmaVersion: fc.constant(rv),
    rdmapReserved: fc.integer({ min: 0, max: rv === 1 ? 3 : 1 }),
  });
}

const tagged: fc.Arbitrary<TaggedPlacement> = fc.record({
  tagged: fc.constant(true as const),
  last: fc.boolean(),
  stag: u32,
  taggedOffset: u64,
});

function untagged(
  opcode: number,
  profile: IwarpProfile,
  last?: boolean,
): fc.Arbitrary<UntaggedPlacement> {
  return fc.record({
    tagged: fc.constant(false as const),
    last: last === undefined ? fc.boolean() : fc.constant(last),
    queueNumber: fc.constantFrom(...acceptedQueueNumbers(opcode, profile)),
    messageSequenceNumber: u32,
    messageOffset: u32,
  });
}

/** A copied DDP header: 14 bytes with T = 1 or 18 bytes with T = 0. */
const copiedDdpHeader = fc.boolean().chain((t) =>
  fc.uint8Array({ minLength: t ? 14 : 18, maxLength: t ? 14 : 18 }).map((b) => {
    b[0] = t ? b[0]! | 0x80 : b[0]! & 0x7f;
    return b;
  }),
);

/** Any valid RDMAP message of `profile`. */
export function rdmapMessage(profile: IwarpProfile): fc.Arbitrary<RdmapMessage> {
  const rows = RDMAP_OPCODES.filter((r) => r.profiles.includes(profile));
  const aOpCodes = ATOMIC_OPCODES.filter((a) => a.profiles.includes(profile)).map((a) => a.aOpCode);
  return fc.constantFrom(...rows).chain((row): fc.Arbitrary<RdmapMessage> => {
    const c = control(profile);
    const u = (last?: boolean) => untagged(row.opcode, profile, last);
    switch (row.kind) {
      case 'rdma-write':
      case 'rdma-read-response':
        return fc.record({
          kind: fc.constant(row.kind),
          ddp: tagged,
          control: c,
          payload: bytes(),
        });
      case 'send':
      case 'send-invalidate':
      case 'send-se':
      case 'send-se-invalidate':
      case 'read-v2-response':
        return fc.record({
          kind: fc.constant(row.kind),
          ddp: u(),
          control: c,
          invalidateSTag: u32,
          payload: bytes(),
        });
      case 'rdma-read-request':
        return fc.record({
          kind: fc.constant(row.kind),
          ddp: u(),
          control: c,
          invalidateSTag: u32,
          sinkSTag: u32,
          sinkTaggedOffset: u64,
          readSize: u32,
          sourceSTag: u32,
          sourceTaggedOffset: u64,
        });
      case 'immediate-data':
      case 'immediate-data-se':
        return fc.record({
          kind: fc.constant(row.kind),
          ddp: u(),
          control: c,
          invalidateSTag: u32,
          immediateData: u64,
        });
      case 'atomic-request':
        return fc.record({
          kind: fc.constant(row.kind),
          ddp: u(),
          control: c,
          invalidateSTag: u32,
          atomicReserved: fc.integer({ min: 0, max: 0x0fffffff }),
          aOpCode: fc.constantFrom(...aOpCodes),
          requestIdentifier: u32,
          remoteSTag: u32,
          remoteTaggedOffset: u64,
          addOrSwapData: u64,
          addOrSwapMask: u64,
          compareData: u64,
          compareMask: u64,
        });
      case 'atomic-response':
        return fc.record({
          kind: fc.constant(row.kind),
          ddp: u(),
          control: c,
          invalidateSTag: u32,
          originalRequestIdentifier: u32,
          originalRemoteDataValue: u64,
        });
      case 'read-v2-request':
        return fc.record({
          kind: fc.constant(row.kind),
          ddp: u(),
          control: c,
          invalidateSTag: u32,
          readSize: u32,
          sourceSTag: u32,
          sourceTaggedOffset: u64,
        });
      case 'send-immediate':
      case 'send-invalidate-immediate':
      case 'send-se-immediate':
      case 'send-invalidate-se-immediate': {
        const kind = row.kind;
        return fc.boolean().chain((last) =>
          fc.record({
            kind: fc.constant(kind),
            ddp: u(last),
            control: c,
            invalidateSTag: u32,
            payload: last ? fc.constant(new Uint8Array(0)) : bytes(),
            immediateData: last ? u64 : fc.constant(undefined),
          }),
        );
      }
      case 'terminate': {
        const kind = row.kind;
        return fc.record({ d: fc.boolean(), r: fc.boolean() }).chain(({ d, r }) =>
          fc.record({
            kind: fc.constant(kind),
            ddp: u(),
            control: c,
            invalidateSTag: u32,
            layer: fc.integer({ min: 0, max: 15 }),
            errorType: fc.integer({ min: 0, max: 15 }),
            errorCode: fc.integer({ min: 0, max: 255 }),
            segmentLengthValid: fc.boolean(),
            ddpHeaderIncluded: fc.constant(d),
            rdmaHeaderIncluded: fc.constant(r),
            terminateReserved: fc.integer({ min: 0, max: 0x1fff }),
            ddpSegmentLength: d ? fc.integer({ min: 0, max: 0xffff }) : fc.constant(undefined),
            terminatedDdpHeader: d ? copiedDdpHeader : fc.constant(undefined),
            terminatedRdmaHeader: r
              ? fc.uint8Array({ minLength: 1, maxLength: 40 })
              : fc.constant(undefined),
          }),
        );
      }
    }
  });
}

/** Any valid MPA Request or Reply. */
export const mpaFrame: fc.Arbitrary<MpaRequestReply> = fc
  .record({ revision: fc.constantFrom(1, 2), enhanced: fc.boolean() })
  .chain(({ revision, enhanced }) =>
    fc.record({
      kind: fc.constantFrom('mpa-request' as const, 'mpa-reply' as const),
      markers: fc.boolean(),
      crc: fc.boolean(),
      reject: fc.boolean(),
      enhanced: fc.constant(enhanced),
      reserved: fc.integer({ min: 0, max: 15 }),
      revision: fc.constant(revision),
      privateData: fc.uint8Array({ maxLength: revision === 2 && enhanced ? 508 : 512 }),
      enhancedParameters:
        revision === 2 && enhanced
          ? fc.record({
              ird: fc.integer({ min: 0, max: 0x3fff }),
              ord: fc.integer({ min: 0, max: 0x3fff }),
              peerToPeer: fc.boolean(),
              sendRtr: fc.boolean(),
              writeRtr: fc.boolean(),
              readRtr: fc.boolean(),
            })
          : fc.constant(undefined),
    }),
  );
