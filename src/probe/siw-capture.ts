/**
 * The iWARP tester's conversations with siw0, kept for the report: tcpdump on `lo` (siw0's
 * address is local, so the peer's TCP connections to it run over the loopback device, as
 * in scripts/capture-siw.sh) for every TCP segment to or from that address, for the whole
 * of one siw pass. Each assertion and each fuzz packet is a connection of its own, with
 * its MPA Request and Reply, so `rdma-interop decode` reads every stream of the file.
 * `-U` writes each packet as it comes: a guest that dies mid-pass leaves a readable file.
 */
import { spawn } from 'node:child_process';
import type { SiwVariantName } from './assertion.js';
import { SIW_ADDRESS } from './siw-peer.js';

/** How long tcpdump gets to open its socket, and to write the last segments at the end. */
const READY_MS = 10_000;
const FLUSH_MS = 300;

/** The pcap of a siw pass, as the guest names it (the host adds `<line>-`). */
export function siwPcapName(variant: SiwVariantName): string {
  return variant === 'stock' ? 'siw0.pcap' : `siw0-${variant}.pcap`;
}

/** A running capture. */
export interface SiwCapture {
  /** Stops tcpdump once the last segments are written. */
  stop(): Promise<void>;
}

/**
 * Starts tcpdump writing into `file`; resolves once it listens, or with undefined (the
 * reason passed to `onLine`) when it cannot: the pass then runs without a capture.
 */
export async function startSiwCapture(
  file: string,
  onLine: (line: string) => void,
): Promise<SiwCapture | undefined> {
  const filter = `tcp and host ${SIW_ADDRESS}`;
  const tcpdump = spawn(
    'tcpdump',
    ['-i', 'lo', '--immediate-mode', '-U', '-s', '0', '-w', file, filter],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  const exited = new Promise<void>((resolve) => {
    tcpdump.on('exit', () => resolve());
    tcpdump.on('error', () => resolve());
  });
  let stderr = '';
  const listening = await new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(false), READY_MS);
    tcpdump.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      // tcpdump says "listening on lo, link-type ..." once its socket is open.
      if (stderr.includes('listening on')) {
        clearTimeout(timer);
        resolve(true);
      }
    });
    void exited.then(() => {
      clearTimeout(timer);
      resolve(false);
    });
  });
  if (!listening) {
    tcpdump.kill('SIGKILL');
    onLine(`probe: no siw0 capture (tcpdump: ${stderr.trim() || 'did not start'})`);
    return undefined;
  }
  return {
    stop: async () => {
      await new Promise((resolve) => setTimeout(resolve, FLUSH_MS));
      tcpdump.kill('SIGINT');
      await exited;
    },
  };
}
