/**
 * Seeded, field-aware packet fuzzing of rxe with the RoCE tester's own packets (issue 21),
 * the RoCE side of iwarp-fuzz.ts: the well-formed requests the assertions send (Write,
 * Write with Immediate, Read, FetchAdd, Send) are mutated one field at a time with the
 * codec's tables: a BTH field or an extension header field (EXTENSION_HEADER_LAYOUT) set
 * to 0, to its limit or to a random value, the opcode set to any other (other transports'
 * opcodes and reserved ones included: the wrong opcode for an RC QP), or the transport
 * bytes truncated or extended; the ICRC is always recomputed (a bad ICRC is dropped
 * before anything else looks at the packet, IBTA Annex A17.3.3). Each packet goes to a
 * fresh rxe QP at its expected PSN. After each packet a guard region (an MR with no
 * remote rights) must be unchanged; after each batch, the kernel log and a loopback
 * FetchAdd on rxe_t. A finding is minimized (bytes cut from the end while it still
 * reproduces) and kept as data.
 */
import { BTH_LENGTH, type BthFields } from '../codec/roce/bth.js';
import { EXTENSION_HEADER_LAYOUT } from '../codec/roce/headers.js';
import { bthOpcodeInfo, type ExtensionHeader } from '../codec/roce/opcodes.js';
import { decodeRocePacket, encodeRocePacket, ICRC_LENGTH } from '../codec/roce/packet.js';
import type { Mr } from '../verbs/mr.js';
import {
  type FuzzLoopOptions,
  type FuzzOutcome,
  type FuzzSummary,
  fieldValue,
  minimizeTail,
  mutationDraws,
  runFuzzBatches,
} from './fuzz-loop.js';
import { rawTesterDatagram } from './roce-datagram.js';
import { build, type RoceTarget, type TesterPacket } from './roce-packets.js';
import {
  DEVICE_PSN,
  loopbackFetchAdd,
  ROCE_TESTER_MTU,
  type RoceRunEnvironment,
  TESTER_PSN,
} from './roce-responder-run.js';
import { ROCE_TESTBED } from './roce-testbed.js';

const PAYLOAD = Uint8Array.of(0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11);

/** The well-formed requests the mutations start from (those of the assertions). */
const BASES: readonly ((t: RoceTarget) => TesterPacket)[] = [
  (t) => build.write(t, TESTER_PSN, 0, PAYLOAD),
  (t) => build.write(t, TESTER_PSN, 0, PAYLOAD, { opcode: 'RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE' }),
  (t) => build.read(t, TESTER_PSN, 0, 8),
  (t) => build.fetchAdd(t, TESTER_PSN, 8, 0x0102030405060708n),
  (t) => build.send(t, TESTER_PSN, PAYLOAD),
];

/**
 * The BTH fields a mutation may set, with their largest value (IBTA Vol. 1 §9.2, Figure
 * 109: the widths `bth.ts` encodes; its encoder refuses anything wider). DestQP is left
 * out: another QPN only reaches no QP (the assertions' unknown-QPN row covers it).
 */
const BTH_LIMITS = {
  padCount: 3,
  transportVersion: 0xf,
  partitionKey: 0xffff,
  reserved6: 0x3f,
  psn: 0xffffff,
  reserved7: 0x7f,
  solicitedEvent: 1,
  migrationRequest: 1,
  ackRequest: 1,
  fecn: 1,
  becn: 1,
} as const satisfies Partial<Record<keyof BthFields, number>>;

/** One mutated packet: how it was made (for the report) and its datagram for a target. */
export interface RoceFuzzPacket {
  readonly mutation: string;
  readonly datagram: (t: RoceTarget) => Uint8Array;
}

/** The `index`-th packet of `seed`'s sequence (each packet draws from its own generator). */
export function roceFuzzPacket(seed: number, index: number): RoceFuzzPacket {
  const { random, base, kind, choice, value, extra, mutation } = mutationDraws(
    seed,
    index,
    0x85ebca6b,
    BASES.length,
    ['bth', 'header', 'opcode', 'truncate', 'extend'] as const,
  );
  return {
    mutation,
    datagram: (t) => {
      const packet = BASES[base]!(t);
      const transport = packet.datagram.subarray(0, packet.datagram.length - ICRC_LENGTH);
      const decoded = decodeRocePacket(packet.datagram);
      if (!decoded.ok) throw new Error(`base ${base} does not decode: ${decoded.error.message}`);
      const fields = decoded.value;
      switch (kind) {
        case 'bth': {
          const names = Object.keys(BTH_LIMITS) as (keyof typeof BTH_LIMITS)[];
          const name = names[Math.floor(choice * names.length)]!;
          const limit = BTH_LIMITS[name];
          const v = Number(fieldValue(BigInt(limit), value));
          if (name === 'padCount') {
            // The encoder derives PadCnt from the payload and refuses another: set its
            // two bits (byte 1, bits 5-4, IBTA Vol. 1 §9.2) in the transport bytes.
            const out = Uint8Array.from(transport);
            out[1] = (out[1]! & ~0x30) | (v << 4);
            return rawTesterDatagram(out);
          }
          const bth = { ...fields.bth, [name]: limit === 1 ? v === 1 : v };
          return rawTesterDatagram(encodeRocePacket({ ...fields, bth }).subarray(0, -ICRC_LENGTH));
        }
        case 'header': {
          const headers = (bthOpcodeInfo(fields.bth.opcode)?.headers ?? []) as ExtensionHeader[];
          const slots = headers.flatMap((h) =>
            EXTENSION_HEADER_LAYOUT[h].map((f) => ({ header: h, field: f })),
          );
          if (slots.length === 0) return packet.datagram;
          const { header, field } = slots[Math.floor(choice * slots.length)]!;
          const limit = (1n << BigInt(field.width * 8)) - 1n;
          const v = fieldValue(limit, value);
          const current = fields.headers[header] as Record<string, unknown>;
          const next = { ...current, [field.name]: field.width === 8 ? v : Number(v) };
          return rawTesterDatagram(
            encodeRocePacket({
              ...fields,
              headers: { ...fields.headers, [header]: next },
            }).subarray(0, -ICRC_LENGTH),
          );
        }
        case 'opcode': {
          const out = Uint8Array.from(transport);
          out[0] = Math.floor(choice * 256);
          return rawTesterDatagram(out);
        }
        case 'truncate':
          return rawTesterDatagram(
            transport.subarray(0, Math.max(1, Math.floor(choice * transport.length))),
          );
        case 'extend': {
          const out = new Uint8Array(transport.length + extra);
          out.set(transport);
          for (let i = transport.length; i < out.length; i++) out[i] = Math.floor(random() * 256);
          return rawTesterDatagram(out);
        }
      }
    },
  };
}

const GUARD_LENGTH = 4096;
const guardByte = (i: number): number => (i * 29 + 7) & 0xff;

/** Sends one datagram to a fresh connected QP; says what looked wrong, if anything. */
async function sendOne(
  env: RoceRunEnvironment,
  guard: Mr,
  datagram: (t: RoceTarget) => Uint8Array,
): Promise<FuzzOutcome> {
  const qp = env.device.createQp();
  const mr = env.device.allocateMemory(256);
  try {
    env.device.connect(
      qp,
      { tester: TESTER_PSN, device: DEVICE_PSN },
      { mtu: ROCE_TESTER_MTU, maxDestRdAtomic: 16, retryCnt: 1, rnrRetry: 0, timeout: 10 },
    );
    qp.postRecv({ wrId: 1n, sgList: [mr.sge(128, 128)] });
    const sent = datagram({ qpn: qp.qpNum, va: mr.addr, rKey: mr.rkey });
    env.wire.clear();
    env.wire.send(sent);
    await env.wire.collect(1, 40, 10);
    // The shared CQ would overflow over a long run: drop what the packet completed.
    while (env.device.cq.poll(16).length > 0);
    if (guard.buffer.every((b, i) => b === guardByte(i))) return { wrong: undefined, sent };
    // Put the guard back, so that the next packet (or the minimizer's retry) is judged alone.
    fillGuard(guard);
    return { wrong: 'the guard region (no remote rights) changed', sent };
  } finally {
    qp.close();
    mr.close();
  }
}

function fillGuard(guard: Mr): void {
  guard.buffer.forEach((_, i) => {
    guard.buffer[i] = guardByte(i);
  });
}

/**
 * Runs `count` packets of `seed` against the RoCE tester's rxe device in batches of
 * `batch`; `onProgress` gets a line per batch.
 */
export async function fuzzRxe(
  env: RoceRunEnvironment,
  count: number,
  seed: number,
  batch = 25,
  onProgress: (line: string) => void = () => {},
  options: FuzzLoopOptions = {},
): Promise<FuzzSummary> {
  const guard = env.device.pd.allocMr(GUARD_LENGTH, ['LOCAL_WRITE']);
  try {
    fillGuard(guard);
    return await runFuzzBatches(
      {
        device: ROCE_TESTBED.device,
        sender: 'tester',
        broken: 'rxe_t no longer completes a FetchAdd',
        log: env.log,
        mutation: (index) => roceFuzzPacket(seed, index).mutation,
        send: (index) => sendOne(env, guard, roceFuzzPacket(seed, index).datagram),
        // Bytes are cut off the transport (never below the BTH); the ICRC is made again.
        minimize: async (sent) =>
          rawTesterDatagram(
            await minimizeTail(
              sent.subarray(0, sent.length - ICRC_LENGTH),
              async (t) =>
                (await sendOne(env, guard, () => rawTesterDatagram(t))).wrong !== undefined,
              BTH_LENGTH,
            ),
          ),
        stillWorks: () => loopbackFetchAdd(env.device),
      },
      count,
      seed,
      batch,
      onProgress,
      options,
    );
  } finally {
    guard.close();
  }
}
