/**
 * When each captured packet was on the wire: the codec decodes the scenario's pcap and
 * each observed packet (as the device's fields name it) gets the timestamp of the frame
 * it came from, so the ladder can show time per step.
 */
import { decodeCaptureMessages } from '../../codec/capture/decode-capture.js';
import type { WirePacket } from './packets.js';

function psnText(psn: number): string {
  return `psn=0x${psn.toString(16).padStart(6, '0')}`;
}

/**
 * Packet key -> capture timestamp (ns), for the observed packets found in the pcap.
 * iWARP: the capture's RDMAP messages in order, matched to the wire lines by position
 * and kind (the lines were made from the same decode). RoCEv2: by opcode and PSN, the
 * first frame of each (a retransmission is counted once in the fields, link/observed.ts).
 */
export function packetTimes(
  pcap: Uint8Array,
  observed: readonly WirePacket[],
): ReadonlyMap<string, bigint> {
  const times = new Map<string, bigint>();
  const decoded = decodeCaptureMessages(pcap);
  if (!decoded.ok) return times;
  const messages: { kind: string; sequence: string | undefined; at: bigint }[] = [];
  for (const item of decoded.value.items) {
    if (item.kind === 'fpdu' && item.fpdu.message.ok)
      messages.push({
        kind: item.fpdu.message.value.kind,
        sequence: undefined,
        at: item.timestampNs,
      });
    else if (item.kind === 'roce' && item.packet.ok)
      messages.push({
        kind: item.packet.value.opcode.name,
        sequence: psnText(item.packet.value.bth.psn),
        at: item.timestampNs,
      });
  }
  const iwarp = observed.every((p) => p.field === 'wire');
  if (iwarp) {
    observed.forEach((p, i) => {
      const m = messages[i];
      if (m !== undefined && m.kind === p.kind) times.set(p.key, m.at);
    });
    return times;
  }
  for (const p of observed) {
    const m = messages.find((x) => x.kind === p.kind && x.sequence === p.sequence);
    if (m !== undefined) times.set(p.key, m.at);
  }
  return times;
}
