/** Reads either capture format, detected from the first bytes. */
import { requireBytes } from '../../arguments.js';
import { DecodeError, type DecodeResult, decoded, failed } from '../errors.js';
import type { CaptureRecord } from './linktype.js';
import { decodePcap, isPcap } from './pcap.js';
import { decodePcapng, isPcapng } from './pcapng.js';

/** The packets of a capture file, whatever its format. */
export interface CaptureFile {
  readonly format: 'pcap' | 'pcapng';
  readonly records: readonly CaptureRecord[];
}

/** Decodes a classic pcap or pcapng file. */
export function decodeCapture(bytes: Uint8Array): DecodeResult<CaptureFile> {
  requireBytes('codec', 'bytes', bytes);
  if (isPcapng(bytes)) {
    const r = decodePcapng(bytes);
    return r.ok ? decoded({ format: 'pcapng', records: r.value.records }) : r;
  }
  if (isPcap(bytes)) {
    const r = decodePcap(bytes);
    return r.ok ? decoded({ format: 'pcap', records: r.value.records }) : r;
  }
  return failed(new DecodeError('pcap', 'magic', 0, 'bad-value', 'neither pcap nor pcapng'));
}
