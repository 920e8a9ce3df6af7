import { createReadStream, readFileSync } from 'node:fs';
import type { Writable } from 'node:stream';
import type { Command } from 'commander';
import type { CaptureItem } from '../../codec/capture/decode-capture.js';
import { decodeCaptureMessages } from '../../codec/capture/decode-capture.js';
import {
  captureItemToJson,
  captureItemToText,
  captureSummaryLine,
  captureToJson,
} from '../../codec/capture/render.js';
import { CaptureStreamDecoder } from '../../codec/capture/stream-decode.js';
import type { DecodeError } from '../../codec/errors.js';
import {
  DEFAULT_IWARP_PROFILE,
  IWARP_PROFILES,
  type IwarpProfile,
  isIwarpProfile,
} from '../../codec/iwarp/profiles.js';
import { CaptureRecordStream } from '../../codec/pcap/record-stream.js';
import { ROCE_V2_UDP_PORT } from '../../codec/roce/packet.js';

/** Options of {@link runDecode} and {@link streamDecode}. */
export interface DecodeCommandOptions {
  /** RDMAP profile for iWARP messages (default `DEFAULT_IWARP_PROFILE`, rfc7306). */
  readonly profile?: string;
  /** Print one JSON document for the whole capture (held in memory) instead of the text tree. */
  readonly json?: boolean;
  /** Print JSON Lines: one JSON object per item as it is decoded, then a summary object. */
  readonly jsonl?: boolean;
  /** UDP port treated as RoCEv2 (default 4791). */
  readonly rocePort?: string;
}

/** What `runDecode` produced: the text for stdout and the process exit code. */
export interface DecodeCommandResult {
  readonly exitCode: number;
  readonly stdout: string;
  readonly stderr: string;
}

type CheckedOptions =
  | { readonly ok: true; readonly profile: IwarpProfile; readonly rocePort: number }
  | { readonly ok: false; readonly stderr: string };

function checkOptions(options: DecodeCommandOptions): CheckedOptions {
  const profile = options.profile ?? DEFAULT_IWARP_PROFILE;
  if (!isIwarpProfile(profile))
    return {
      ok: false,
      stderr: `unknown profile '${profile}' (known: ${IWARP_PROFILES.join(', ')})\n`,
    };
  const rocePort = options.rocePort === undefined ? ROCE_V2_UDP_PORT : Number(options.rocePort);
  if (!Number.isInteger(rocePort) || rocePort < 0 || rocePort > 0xffff)
    return { ok: false, stderr: `bad --roce-port '${options.rocePort}'\n` };
  if (options.json === true && options.jsonl === true)
    return { ok: false, stderr: '--json and --jsonl exclude each other\n' };
  return { ok: true, profile, rocePort };
}

/**
 * The streaming decode behind the text and `--jsonl` outputs: bytes in (any chunking),
 * text out, one record at a time (see CaptureRecordStream and CaptureStreamDecoder).
 */
class StreamingDecode {
  private readonly records = new CaptureRecordStream();
  private readonly decoder: CaptureStreamDecoder;
  private fatal: DecodeError | undefined;

  constructor(
    private readonly file: string,
    private readonly jsonl: boolean,
    options: { profile: IwarpProfile; rocePort: number },
  ) {
    this.decoder = new CaptureStreamDecoder(options);
  }

  /** The text for the items this chunk completes; stops at the first unreadable record. */
  push(chunk: Uint8Array): string {
    if (this.fatal !== undefined) return '';
    const r = this.records.push(chunk);
    if (!r.ok) {
      this.fatal = r.error;
      return '';
    }
    let text = '';
    for (const record of r.value)
      for (const item of this.decoder.push(record, record.frameIndex)) text += this.render(item);
    return text;
  }

  /** The end of the input: the last items, the summary, a warning or an error, the exit code. */
  finish(): { stdout: string; stderr: string; exitCode: number } {
    const end = this.fatal ?? this.records.finish();
    const format = this.records.fileFormat;
    // Nothing decodable at all (not a capture, or a bad file header): an error.
    if (
      format === undefined ||
      (end !== undefined && this.records.records === 0 && end.offset < 24)
    )
      return {
        stdout: '',
        stderr: `${this.file}: ${end?.message ?? 'not a capture'}\n`,
        exitCode: 1,
      };
    let stdout = '';
    for (const item of this.decoder.finish()) stdout += this.render(item);
    const c = this.decoder.counts;
    const summary = {
      format,
      frames: c.frames,
      roce: c.roce,
      connections: c.connections,
      fpdus: c.fpdus,
      problems: c.problems,
      otherFrames: c.otherFrames,
    };
    stdout += this.jsonl
      ? `${JSON.stringify({ kind: 'summary', ...summary })}\n`
      : captureSummaryLine(summary);
    if (end === undefined) return { stdout, stderr: '', exitCode: 0 };
    if (end.reason === 'truncated' && this.fatal === undefined)
      // As tshark does: what is complete is decoded, the cut is a warning.
      return {
        stdout,
        stderr: `warning: ${this.file} is cut short in the middle of a record (offset ${end.offset}); decoded the ${this.records.records} complete frames\n`,
        exitCode: 0,
      };
    return {
      stdout,
      stderr: `${this.file}: ${end.message}; decoded the ${this.records.records} frames before it\n`,
      exitCode: 1,
    };
  }

  private render(item: CaptureItem): string {
    return this.jsonl ? `${JSON.stringify(captureItemToJson(item))}\n` : captureItemToText(item);
  }
}

/**
 * `rdma-interop decode <file>` without touching process state, so tests can call it: the
 * whole output as strings. Exit code 0 when the file decoded (problems inside frames are
 * printed, not fatal; a file cut in mid-record is a warning), 1 when the file is not a
 * readable capture, 2 for bad arguments. The text and `--jsonl` outputs are those of
 * {@link streamDecode}; `--json` builds one document for the whole capture.
 */
export function runDecode(file: string, options: DecodeCommandOptions = {}): DecodeCommandResult {
  const o = checkOptions(options);
  if (!o.ok) return { exitCode: 2, stdout: '', stderr: o.stderr };
  let bytes: Uint8Array;
  try {
    bytes = readFileSync(file);
  } catch (e) {
    return { exitCode: 1, stdout: '', stderr: `cannot read ${file}: ${(e as Error).message}\n` };
  }
  if (options.json !== true) {
    const s = new StreamingDecode(file, options.jsonl === true, o);
    const head = s.push(bytes);
    const end = s.finish();
    return { ...end, stdout: head + end.stdout };
  }
  const result = decodeCaptureMessages(bytes, { profile: o.profile, rocePort: o.rocePort });
  if (!result.ok) {
    const e = result.error;
    const out = `${JSON.stringify({ error: { layer: e.layer, field: e.field, offset: e.offset, reason: e.reason, message: e.message } }, null, 2)}\n`;
    return { exitCode: 1, stdout: out, stderr: `${file}: ${e.message}\n` };
  }
  return {
    exitCode: 0,
    stdout: `${JSON.stringify(captureToJson(result.value), null, 2)}\n`,
    stderr: '',
  };
}

/** Bytes read from the capture at a time. */
const READ_CHUNK = 1024 * 1024;

/**
 * A Writable written with backpressure; a closed reader (EPIPE: `decode f | head -1`)
 * marks it closed instead of raising an error.
 */
class Output {
  closed = false;
  failure: Error | undefined;
  constructor(private readonly stream: Writable) {
    stream.on('error', (e: NodeJS.ErrnoException) => {
      this.closed = true;
      if (e.code !== 'EPIPE') this.failure = e;
    });
  }

  async write(text: string): Promise<void> {
    if (this.closed || text.length === 0) return;
    if (this.stream.write(text)) return;
    await new Promise<void>((resolve) => {
      const done = () => {
        this.stream.off('drain', done);
        this.stream.off('error', done);
        this.stream.off('close', done);
        resolve();
      };
      this.stream.once('drain', done);
      this.stream.once('error', done);
      this.stream.once('close', done);
    });
  }
}

/**
 * `rdma-interop decode <file>` as the command runs it: reads the capture incrementally and
 * writes each item as soon as it is decoded, so memory stays bounded whatever the file's
 * size; stops quietly (exit 0) when the reader of stdout goes away. Resolves to the exit
 * code (see {@link runDecode}). `--json` (one document) is not streamed.
 */
export async function streamDecode(
  file: string,
  options: DecodeCommandOptions,
  io: { readonly stdout: Writable; readonly stderr: Writable },
): Promise<number> {
  const out = new Output(io.stdout);
  const o = checkOptions(options);
  if (!o.ok) {
    io.stderr.write(o.stderr);
    return 2;
  }
  if (options.json === true) {
    const r = runDecode(file, options);
    await out.write(r.stdout);
    io.stderr.write(r.stderr);
    return r.exitCode;
  }
  const s = new StreamingDecode(file, options.jsonl === true, o);
  const input = createReadStream(file, { highWaterMark: READ_CHUNK });
  try {
    for await (const chunk of input) {
      await out.write(s.push(chunk as Buffer));
      if (out.closed) break;
    }
  } catch (e) {
    io.stderr.write(`cannot read ${file}: ${(e as Error).message}\n`);
    return 1;
  } finally {
    input.destroy();
  }
  if (out.closed) {
    if (out.failure === undefined) return 0;
    io.stderr.write(`cannot write the output: ${out.failure.message}\n`);
    return 1;
  }
  const end = s.finish();
  await out.write(end.stdout);
  if (end.stderr !== '') io.stderr.write(end.stderr);
  return out.failure === undefined ? end.exitCode : 1;
}

/** Registers `rdma-interop decode`. */
export function registerDecode(program: Command): void {
  program
    .command('decode')
    .description(
      'decode the RoCEv2 and iWARP (MPA/DDP/RDMAP) messages of a pcap or pcapng file, frame by frame',
    )
    .argument('<file>', 'capture file (pcap or pcapng)')
    .option(
      '--profile <profile>',
      `RDMAP profile: ${IWARP_PROFILES.join(', ')}`,
      DEFAULT_IWARP_PROFILE,
    )
    .option(
      '--json',
      'print one JSON document for the whole capture (held in memory; bigint as 0x-prefixed hex strings, bytes as hex strings)',
    )
    .option(
      '--jsonl',
      'print JSON Lines as the capture is decoded: one object per item, then a summary',
    )
    .option('--roce-port <port>', 'UDP destination port of RoCEv2', String(ROCE_V2_UDP_PORT))
    .action(async (file: string, options: DecodeCommandOptions) => {
      process.exitCode = await streamDecode(file, options, {
        stdout: process.stdout,
        stderr: process.stderr,
      });
    });
}
