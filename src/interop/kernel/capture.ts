/**
 * tcpdump around one siw connection: started after the listener is bound (so the filter
 * can name its port) and before the client connects (so the MPA Request/Reply is in the
 * capture, which the stream decoder needs to know the CRC and marker settings).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeCaptureMessages, type FpduItem } from '../../codec/capture/index.js';
import type { RdmapMessage } from '../../codec/iwarp/messages.js';
import type { WireDirection } from '../../judge/wire.js';

export interface CapturedMessage {
  readonly from: WireDirection;
  readonly message: RdmapMessage;
}

export interface Capture {
  /**
   * Stops tcpdump and decodes what it saw (client-to-server is the requester); also hands
   * back the pcap file itself, for the report.
   */
  stop(): Promise<{ readonly messages: CapturedMessage[]; readonly pcap: Uint8Array }>;
}

const READY_TIMEOUT_MS = 20_000;
const SETTLE_MS = 300;

/** A running tcpdump: `stop` ends it and hands back the pcap file's bytes. */
export interface Tcpdump {
  stop(): Promise<Uint8Array>;
}

/** Starts tcpdump on `iface` with `filter`; resolves once it is listening. */
export async function startTcpdump(iface: string, filter: string): Promise<Tcpdump> {
  const dir = mkdtempSync(join(tmpdir(), 'rdma-interop-capture-'));
  const file = join(dir, 'capture.pcap');
  // --immediate-mode: hand each packet over at once (TPACKET_V3 otherwise holds packets in
  // a block until it fills or times out, and SIGINT can end tcpdump before they arrive).
  const tcpdump = spawn(
    'tcpdump',
    ['-i', iface, '--immediate-mode', '-U', '-s', '0', '-w', file, filter],
    {
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  const exited = new Promise<void>((resolve) => tcpdump.on('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    let stderr = '';
    const timer = setTimeout(() => {
      tcpdump.kill('SIGKILL');
      reject(new Error(`tcpdump did not start within ${READY_TIMEOUT_MS} ms: ${stderr}`));
    }, READY_TIMEOUT_MS);
    tcpdump.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      // tcpdump announces "listening on lo, link-type ..." once the socket is open.
      if (stderr.includes('listening on')) {
        clearTimeout(timer);
        resolve();
      }
    });
    tcpdump.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
  });
  return {
    stop: async () => {
      // The last segments were sent before the completion we just reaped; give the
      // capture a moment to write them.
      await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
      tcpdump.kill('SIGINT');
      await exited;
      try {
        return new Uint8Array(readFileSync(file));
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

/** Starts tcpdump on `lo` for TCP `port`; resolves once it is listening. */
export async function startCapture(port: number): Promise<Capture> {
  const tcpdump = await startTcpdump('lo', `tcp port ${port}`);
  return {
    stop: async () => {
      const pcap = await tcpdump.stop();
      const decoded = decodeCaptureMessages(pcap);
      if (!decoded.ok) throw decoded.error;
      for (const item of decoded.value.items) if (item.kind === 'problem') throw item.error;
      const messages = decoded.value.items
        .filter((i): i is FpduItem => i.kind === 'fpdu')
        .flatMap((i) =>
          i.fpdu.message.ok
            ? [
                {
                  from: i.direction === 'client-to-server' ? 'requester' : 'responder',
                  message: i.fpdu.message.value,
                } as const,
              ]
            : [],
        );
      return { messages, pcap };
    },
  };
}
