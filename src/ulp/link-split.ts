/**
 * Cutting a link capture per ULP workload. Each device's link is captured whole for the
 * boot (QEMU's filter-dump, src/runtime/pair.ts); guest A sends a marker datagram (UDP to
 * the discard port, three copies: the faulty wire may drop one) before and after each
 * workload, and the frames between a workload's first `begin` and its first `end` marker
 * (or the next workload's `begin`, or the end of the capture) are that workload's. The
 * markers themselves are left out: RoCEv2 traffic carries no port of its own, so nothing
 * else tells NVMe's packets from NFS's on rxe0's link.
 */
import { decodeCapture, encodePcap } from '../codec/pcap/index.js';
import { linkAddress, PAIR_LINKS } from '../runtime/pair.js';
import { ULP_DEVICES, type UlpDeviceName, type UlpWorkloadName } from './workloads.js';

const MARKER = 'rdma-interop-ulp ';

/** The text of a marker datagram. */
export function linkMarker(
  phase: 'begin' | 'end',
  workload: UlpWorkloadName,
  device: UlpDeviceName,
): string {
  return `${MARKER}${phase} ${workload} ${device}`;
}

/**
 * Each ULP device's link and the pair's addresses on it: rxe0 and siw0 on their own links,
 * the TCP reference on rxe0's (its netdev carries TCP as well).
 */
export const ULP_PAIR_ADDRESSES: Readonly<
  Record<UlpDeviceName, { readonly link: string; readonly A: string; readonly B: string }>
> = Object.fromEntries(
  (Object.keys(ULP_DEVICES) as UlpDeviceName[]).map((d) => {
    const linkDevice = d === 'tcp' ? 'rxe0' : d;
    const link = PAIR_LINKS.find((l) => l.device === linkDevice);
    if (link === undefined) throw new Error(`no pair link for ${d}`);
    return [d, { link: link.device, A: linkAddress(link, 0), B: linkAddress(link, 1) }];
  }),
) as Record<UlpDeviceName, { readonly link: string; readonly A: string; readonly B: string }>;

const ascii = new TextDecoder('latin1');

/** The marker a frame carries (`begin nvme rxe0`), if any: found in its last bytes. */
function markerOf(data: Uint8Array): string | undefined {
  // Ethernet + IPv4 + UDP headers are 42 bytes; the marker is the rest (short frames pad).
  const text = ascii.decode(data.subarray(0, Math.min(data.length, 160)));
  const at = text.indexOf(MARKER);
  if (at < 0) return undefined;
  const m = /^(begin|end) ([a-z]+) ([a-z0-9]+)/.exec(text.slice(at + MARKER.length));
  return m === null ? undefined : `${m[1]} ${m[2]}-${m[3]}`;
}

/** One workload's frames of a link capture, as a pcap of their own (with frame counts). */
export interface LinkCut {
  readonly pcap: Uint8Array;
  readonly frames: number;
  /** Whether the `end` marker was seen (else the cut runs to the next begin or the end). */
  readonly ended: boolean;
}

/**
 * Cuts `pcap` (a classic pcap or pcapng) into one capture per workload key
 * (`<workload>-<device>`) named by its markers. Throws on a capture it cannot read.
 */
export function splitLinkCapture(pcap: Uint8Array): Map<string, LinkCut> {
  const decoded = decodeCapture(pcap);
  if (!decoded.ok) throw new Error(`the link capture: ${decoded.error.message}`);
  const records = decoded.value.records;
  const linkType = records[0]?.linkType ?? 1;
  const cuts = new Map<string, LinkCut>();
  let open: { key: string; from: number } | undefined;
  const close = (to: number, ended: boolean) => {
    if (open === undefined) return;
    const chosen = records.slice(open.from, to).filter((r) => markerOf(r.data) === undefined);
    cuts.set(open.key, {
      pcap: encodePcap(
        { linkType },
        chosen.map((r) => ({
          timestampNs: r.timestampNs,
          data: r.data,
          originalLength: r.originalLength,
        })),
      ),
      frames: chosen.length,
      ended,
    });
    open = undefined;
  };
  records.forEach((r, i) => {
    const marker = markerOf(r.data);
    if (marker === undefined) return;
    const [phase, key] = marker.split(' ') as [string, string];
    if (phase === 'begin' && open?.key !== key && !cuts.has(key)) {
      close(i, false);
      open = { key, from: i };
    } else if (phase === 'end' && open?.key === key) close(i, true);
  });
  close(records.length, false);
  return cuts;
}
