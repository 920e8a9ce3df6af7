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
import { release } from 'node:os';
import { BTH_LENGTH, type BthFields } from '../../codec/roce/bth.js';
import { EXTENSION_HEADER_LAYOUT } from '../../codec/roce/headers.js';
import { bthOpcodeInfo, type ExtensionHeader } from '../../codec/roce/opcodes.js';
import { decodeRocePacket, encodeRocePacket, ICRC_LENGTH } from '../../codec/roce/packet.js';
import type { Mr } from '../../verbs/mr.js';
import { type FuzzFinding, type FuzzSummary, seededRandom } from './iwarp-fuzz.js';
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

/** A field's value from a draw: 0, its limit, or a random value below it. */
function fieldValue(limit: bigint, value: number): bigint {
  if (value < 0.3) return 0n;
  if (value < 0.6) return limit;
  return BigInt(Math.floor(value * Number(limit)));
}

/** The `index`-th packet of `seed`'s sequence (each packet draws from its own generator). */
export function roceFuzzPacket(seed: number, index: number): RoceFuzzPacket {
  const random = seededRandom((seed * 0x85ebca6b + index) >>> 0);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const base = Math.floor(random() * BASES.length);
  const kind = pick(['bth', 'header', 'opcode', 'truncate', 'extend'] as const);
  const choice = random();
  const value = random();
  const extra = Math.floor(random() * 64) + 1;
  return {
    mutation: `base ${base} ${kind} ${choice.toFixed(6)} ${value.toFixed(6)}`,
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
const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');

/** Sends one datagram to a fresh connected QP; resolves with what looked wrong, if anything. */
async function sendOne(
  env: RoceRunEnvironment,
  guard: Mr,
  datagram: (t: RoceTarget) => Uint8Array,
): Promise<{ wrong: string | undefined; sent: Uint8Array }> {
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
    const intact = guard.buffer.every((b, i) => b === guardByte(i));
    return { wrong: intact ? undefined : 'the guard region (no remote rights) changed', sent };
  } finally {
    qp.close();
    mr.close();
  }
}

/** Cuts bytes off the transport's end while `reproduces` still holds (at most `tries`). */
async function minimize(
  datagram: Uint8Array,
  reproduces: (d: Uint8Array) => Promise<boolean>,
  tries = 8,
): Promise<Uint8Array> {
  let best = datagram.subarray(0, datagram.length - ICRC_LENGTH);
  let step = Math.floor((best.length - BTH_LENGTH) / 2);
  for (let i = 0; i < tries && step > 0; i++) {
    const shorter = best.subarray(0, best.length - step);
    if (await reproduces(rawTesterDatagram(shorter))) best = shorter;
    else step = Math.floor(step / 2);
  }
  return rawTesterDatagram(best);
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
): Promise<FuzzSummary> {
  const findings: FuzzFinding[] = [];
  const guard = env.device.pd.allocMr(GUARD_LENGTH, ['LOCAL_WRITE']);
  let batches = 0;
  try {
    guard.buffer.forEach((_, i) => {
      guard.buffer[i] = guardByte(i);
    });
    const restoreGuard = () =>
      guard.buffer.forEach((_, i) => {
        guard.buffer[i] = guardByte(i);
      });
    for (let start = 0; start < count; start += batch) {
      env.log.mark();
      const end = Math.min(count, start + batch);
      const sentInBatch: { index: number; bytes: Uint8Array }[] = [];
      for (let index = start; index < end; index++) {
        const packet = roceFuzzPacket(seed, index);
        let outcome: Awaited<ReturnType<typeof sendOne>>;
        try {
          outcome = await sendOne(env, guard, packet.datagram);
        } catch (error) {
          outcome = {
            wrong: `the tester failed: ${error instanceof Error ? error.message : String(error)}`,
            sent: new Uint8Array(0),
          };
        }
        sentInBatch.push({ index, bytes: outcome.sent });
        if (outcome.wrong !== undefined) {
          restoreGuard();
          const minimized =
            outcome.sent.length === 0
              ? outcome.sent
              : await minimize(outcome.sent, async (d) => {
                  const again = await sendOne(env, guard, () => d);
                  restoreGuard();
                  return again.wrong !== undefined;
                });
          findings.push({
            seed,
            index,
            mutation: packet.mutation,
            why: outcome.wrong,
            bytes: hex(outcome.sent),
            minimized: hex(minimized),
          });
        }
      }
      batches++;
      const problems = env.log.troubleSinceLastCheck();
      const works = await loopbackFetchAdd(env.device).catch(() => false);
      if (problems.length > 0 || !works) {
        // The batch hurt the kernel: its packets are the reproducer (the batch is small).
        findings.push({
          seed,
          index: sentInBatch[sentInBatch.length - 1]?.index ?? start,
          mutation: `batch ${start}-${end - 1}`,
          why: [...problems, ...(works ? [] : ['rxe_t no longer completes a FetchAdd'])].join(
            ' | ',
          ),
          bytes: sentInBatch.map((p) => hex(p.bytes)).join(','),
          minimized: sentInBatch.map((p) => hex(p.bytes)).join(','),
        });
        if (!works) break;
      }
      onProgress(`fuzz rxe: ${end}/${count} packets, ${findings.length} findings`);
    }
  } finally {
    guard.close();
  }
  return {
    kernel: release(),
    device: ROCE_TESTBED.device,
    seed,
    packets: count,
    batches,
    findings,
  };
}
