/**
 * The control channel between the host runner and the guest's stage2.sh: one line per
 * message on the `rdma-interop.control` virtio-serial port.
 *
 * guest -> host:
 *   `log <text>`                       a line of the guest's own set-up (device creation)
 *   `devices-ready <uptime s>`         rxe0/siw0 are up; the command starts now
 *   `exit <status> <stdout bytes> <stderr bytes>`  the command ended; how much it wrote
 * host -> guest:
 *   `ack`                              every byte of stdout and stderr has arrived: power off
 *
 * The byte counts are what make the output complete: data the guest has written may still
 * sit in a virtqueue or in QEMU when the command ends, and a power-off would drop it. The
 * guest therefore waits for the host's `ack`, which the host sends only once it has
 * received as many bytes as the guest says it sent.
 */
import { StringDecoder } from 'node:string_decoder';

export type GuestMessage =
  | { readonly kind: 'log'; readonly text: string }
  | { readonly kind: 'devices-ready'; readonly uptimeSeconds: number }
  | {
      readonly kind: 'exit';
      readonly status: number;
      readonly stdoutBytes: number;
      readonly stderrBytes: number;
    }
  | { readonly kind: 'unknown'; readonly line: string };

const COUNT = /^[0-9]+$/;

/** Parses one control line (without its newline). */
export function parseGuestMessage(line: string): GuestMessage {
  const space = line.indexOf(' ');
  const word = space < 0 ? line : line.slice(0, space);
  const rest = space < 0 ? '' : line.slice(space + 1);
  if (word === 'log') return { kind: 'log', text: rest };
  if (word === 'devices-ready' && Number.isFinite(Number(rest)) && rest !== '') {
    return { kind: 'devices-ready', uptimeSeconds: Number(rest) };
  }
  if (word === 'exit') {
    const [status, out, err] = rest.split(' ');
    if ([status, out, err].every((v) => v !== undefined && COUNT.test(v))) {
      return {
        kind: 'exit',
        status: Number(status),
        stdoutBytes: Number(out),
        stderrBytes: Number(err),
      };
    }
  }
  return { kind: 'unknown', line };
}

/** Splits a byte stream into lines (UTF-8), keeping a partial last line for the next chunk. */
export class LineSplitter {
  private pending = '';
  // A multi-byte character may be split across chunks.
  private readonly decoder = new StringDecoder('utf8');
  constructor(private readonly onLine: (line: string) => void) {}

  push(chunk: Buffer): void {
    this.pending += this.decoder.write(chunk);
    let newline = this.pending.indexOf('\n');
    while (newline >= 0) {
      this.onLine(this.pending.slice(0, newline).replace(/\r$/, ''));
      this.pending = this.pending.slice(newline + 1);
      newline = this.pending.indexOf('\n');
    }
  }
}
