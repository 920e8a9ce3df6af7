import { readFileSync } from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';
import type { Readable, Writable } from 'node:stream';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { type Command, InvalidArgumentError, Option } from 'commander';
import type { CaptureItem } from '../../codec/capture/decode-capture.js';
import { DisplayFilterError } from '../../codec/capture/display-filter.js';
import {
  FieldRows,
  parseFieldList,
  parseFilterOption,
  type RowsSpec,
  rowsSpec,
} from '../../codec/capture/field-rows.js';
import { LazyCaptureDecoder } from '../../codec/capture/lazy-decode.js';
import {
  captureItemToJson,
  captureItemToText,
  captureSummaryLine,
} from '../../codec/capture/render.js';
import { CaptureStreamDecoder } from '../../codec/capture/stream-decode.js';
import { SummaryOptionError, summaryLine } from '../../codec/capture/summary.js';
import type { DecodeError } from '../../codec/errors.js';
import {
  DEFAULT_IWARP_PROFILE,
  IWARP_PROFILES,
  type IwarpProfile,
  isIwarpProfile,
} from '../../codec/iwarp/profiles.js';
import { CaptureRecordStream } from '../../codec/pcap/record-stream.js';
import { ROCE_V2_UDP_PORT } from '../../codec/roce/packet.js';
import { port, positiveInteger } from '../options.js';

/** Options of {@link runDecode} and {@link streamDecode}. */
export interface DecodeCommandOptions {
  /** RDMAP profile for iWARP messages (default `DEFAULT_IWARP_PROFILE`, rfc7306). */
  readonly profile?: IwarpProfile;
  /** Print one JSON document for the whole capture, written as it is decoded. */
  readonly json?: boolean;
  /** Print JSON Lines: one JSON object per item as it is decoded, then a summary object. */
  readonly jsonl?: boolean;
  /** UDP port treated as RoCEv2 (default 4791). */
  readonly rocePort?: number;
  /** One line per packet (lazy decode: fields read only to print them). */
  readonly summary?: boolean;
  /**
   * Comma-separated fields to print, tab-separated: tshark names (one line per frame, as
   * `tshark -T fields`) or the project's columns (one line per item); see field-rows.ts.
   */
  readonly fields?: string;
  /** A display filter, e.g. `iwarp_ddp.msn == 2 && crc == valid` (display-filter.ts). */
  readonly filter?: string;
  /** Print the field names first (`tshark -E header=y`); needs `fields`. */
  readonly header?: boolean;
  /** Read only the first `count` frames (`tshark -c`). */
  readonly count?: number;
}

/** What `runDecode` produced: the text for stdout and the process exit code. */
export interface DecodeCommandResult {
  readonly exitCode: number;
  readonly stdout: string;
  readonly stderr: string;
}

interface ValidOptions {
  readonly ok: true;
  readonly profile: IwarpProfile;
  readonly rocePort: number;
  /** Set for the lazy outputs (--summary, --fields, --filter). */
  readonly lazy?: RowsSpec;
  readonly header: boolean;
  readonly count: number | undefined;
}

type CheckedOptions = ValidOptions | { readonly ok: false; readonly stderr: string };

function checkOptions(options: DecodeCommandOptions): CheckedOptions {
  // The command line's values are checked by commander (`.choices()`, argParsers); these
  // checks guard runDecode's callers.
  const profile = options.profile ?? DEFAULT_IWARP_PROFILE;
  if (!isIwarpProfile(profile))
    return {
      ok: false,
      stderr: `unknown profile '${String(profile)}' (known: ${IWARP_PROFILES.join(', ')})\n`,
    };
  const rocePort = options.rocePort ?? ROCE_V2_UDP_PORT;
  if (!Number.isInteger(rocePort) || rocePort < 0 || rocePort > 0xffff)
    return { ok: false, stderr: `bad --roce-port '${String(options.rocePort)}'\n` };
  const count = options.count;
  if (count !== undefined && (!Number.isInteger(count) || count <= 0))
    return { ok: false, stderr: `bad -c '${String(count)}': expected a positive whole number\n` };
  const header = options.header === true;
  if (header && options.fields === undefined)
    return { ok: false, stderr: '--header names the --fields columns; it needs --fields\n' };
  if (options.json === true && options.jsonl === true)
    return { ok: false, stderr: '--json and --jsonl exclude each other\n' };
  const lazy =
    options.summary === true || options.fields !== undefined || options.filter !== undefined;
  if (!lazy) return { ok: true, profile, rocePort, header, count };
  if (options.json === true || options.jsonl === true)
    return {
      ok: false,
      stderr: `--summary, --fields and --filter print lines of text; they exclude --json and --jsonl\n`,
    };
  if (options.summary === true && options.fields !== undefined)
    return { ok: false, stderr: '--summary and --fields exclude each other\n' };
  try {
    return {
      ok: true,
      profile,
      rocePort,
      header,
      count,
      lazy: rowsSpec(options.fields, options.filter),
    };
  } catch (e) {
    if (e instanceof SummaryOptionError || e instanceof DisplayFilterError)
      return { ok: false, stderr: `${e.message}\n` };
    throw e;
  }
}

/** The end of a decode: the last text, a warning or an error, the exit code. */
interface DecodeEnd {
  readonly stdout: string;
  readonly stderr: string;
  readonly exitCode: number;
}

/** One output mode of the streaming decode: bytes in, text out. */
interface DecodeRun {
  push(chunk: Uint8Array): string;
  finish(): DecodeEnd;
  /** True once `-c` frames were read: the rest of the input is not needed. */
  readonly done: boolean;
}

/** How the end of the file reads: nothing wrong, a cut (a warning, as tshark), or an error. */
function endOfFile(
  file: string,
  format: string | undefined,
  end: DecodeError | undefined,
  records: number,
  fatal: boolean,
): { kind: 'none' } | { kind: 'unreadable' | 'cut' | 'error'; text: string } {
  if (format === undefined || (end !== undefined && records === 0 && end.offset < 24))
    return { kind: 'unreadable', text: `${file}: ${end?.message ?? 'not a capture'}\n` };
  if (end === undefined) return { kind: 'none' };
  if (end.reason === 'truncated' && !fatal)
    return {
      kind: 'cut',
      text: `warning: ${file} is cut short in the middle of a record (offset ${end.offset}); decoded the ${records} complete frames\n`,
    };
  return {
    kind: 'error',
    text: `${file}: ${end.message}; decoded the ${records} frames before it\n`,
  };
}

/**
 * The lazy outputs: one line per packet (--summary) or chosen columns (--fields), only the
 * packets a --filter passes. Items are views; only what is printed is read.
 */
class LazyDecode implements DecodeRun {
  private readonly decoder: LazyCaptureDecoder;
  private readonly rows: FieldRows;
  private readonly fieldsOnly: boolean;
  private head: string;

  constructor(
    private readonly file: string,
    options: ValidOptions,
  ) {
    const spec = options.lazy ?? { frameRows: false, columns: undefined, filter: undefined };
    this.rows = new FieldRows(spec, summaryLine);
    this.fieldsOnly = spec.columns !== undefined;
    this.head = options.header && spec.columns !== undefined ? `${spec.columns.join('\t')}\n` : '';
    const rows = this.rows;
    this.decoder = new LazyCaptureDecoder((item) => rows.item(item), {
      rocePort: options.rocePort,
      ...(options.count === undefined ? {} : { maxFrames: options.count }),
      onFrame: (frameIndex, linkType, bytes, start, end, seconds, nanoseconds) =>
        rows.beginFrame(frameIndex, linkType, bytes.subarray(start, end), seconds, nanoseconds),
    });
  }

  get done(): boolean {
    return this.decoder.frameLimitReached;
  }

  push(chunk: Uint8Array): string {
    this.decoder.push(chunk);
    const out = this.head + this.rows.take();
    this.head = '';
    return out;
  }

  finish(): DecodeEnd {
    const d = this.decoder;
    d.finish();
    this.rows.finish();
    // With -c the input stops where it was no longer read: no cut record to report.
    const end = this.done ? undefined : d.end;
    const eof = endOfFile(this.file, d.format, end, d.recordCount, end?.reason !== 'truncated');
    if (eof.kind === 'unreadable') return { stdout: '', stderr: eof.text, exitCode: 1 };
    let stdout = this.head + this.rows.take();
    this.head = '';
    if (!this.fieldsOnly && d.format !== undefined)
      stdout += captureSummaryLine({ ...d.counts, format: d.format });
    if (eof.kind === 'none') return { stdout, stderr: '', exitCode: 0 };
    return { stdout, stderr: eof.text, exitCode: eof.kind === 'cut' ? 0 : 1 };
  }
}

/**
 * The streaming decode behind the text and `--jsonl` outputs: bytes in (any chunking),
 * text out, one record at a time (see CaptureRecordStream and CaptureStreamDecoder).
 */
class StreamingDecode implements DecodeRun {
  private readonly records = new CaptureRecordStream();
  private readonly decoder: CaptureStreamDecoder;
  private fatal: DecodeError | undefined;
  /** --json: whether the document's opening was written, and whether an item was. */
  private opened = false;
  private firstItem = true;
  /** -c: the frames to read, and whether they were. */
  private readonly count: number;
  done = false;

  constructor(
    private readonly file: string,
    private readonly mode: 'text' | 'jsonl' | 'json',
    options: { profile: IwarpProfile; rocePort: number; count: number | undefined },
  ) {
    this.decoder = new CaptureStreamDecoder({
      profile: options.profile,
      rocePort: options.rocePort,
    });
    this.count = options.count ?? Number.POSITIVE_INFINITY;
  }

  private get jsonl(): boolean {
    return this.mode === 'jsonl';
  }

  /** The text for the items this chunk completes; stops at the first unreadable record. */
  push(chunk: Uint8Array): string {
    if (this.fatal !== undefined || this.done) return '';
    const r = this.records.push(chunk);
    if (!r.ok) {
      this.fatal = r.error;
      return '';
    }
    let text = '';
    for (const record of r.value) {
      if (record.frameIndex >= this.count) {
        this.done = true;
        break;
      }
      for (const item of this.decoder.push(record, record.frameIndex)) text += this.render(item);
    }
    return text;
  }

  /** --json: the end of the document (counts after the items, the error if one stopped it). */
  private finishJson(end: DecodeError | undefined, unreadable: boolean): string {
    if (unreadable) {
      const e = end;
      return `${JSON.stringify({ error: e === undefined ? { message: 'not a capture' } : { layer: e.layer, field: e.field, offset: e.offset, reason: e.reason, message: e.message } }, null, 2)}\n`;
    }
    let text = '';
    for (const item of this.decoder.finish()) text += this.render(item);
    text += this.opening();
    const c = this.decoder.counts;
    text += `${this.firstItem ? '' : '\n  '}],\n`;
    text += `  "frameCount": ${c.frames},\n  "otherFrames": ${c.otherFrames},\n`;
    text += `  "summary": ${JSON.stringify({ roce: c.roce, connections: c.connections, fpdus: c.fpdus, problems: c.problems })}`;
    if (end !== undefined)
      text += `,\n  "end": ${JSON.stringify({ layer: end.layer, field: end.field, offset: end.offset, reason: end.reason, message: end.message })}`;
    return `${text}\n}\n`;
  }

  /** The end of the input: the last items, the summary, a warning or an error, the exit code. */
  finish(): { stdout: string; stderr: string; exitCode: number } {
    // With -c the input stops where it was no longer read: no cut record to report.
    const end = this.fatal ?? (this.done ? undefined : this.records.finish());
    const format = this.records.fileFormat;
    const records = Math.min(this.records.records, this.count);
    const eof = endOfFile(this.file, format, end, records, this.fatal !== undefined);
    if (this.mode === 'json') {
      // A file with no complete record and an error is an error document, not an empty one.
      const unreadable =
        eof.kind === 'unreadable' || (this.records.records === 0 && end !== undefined);
      const stdout = this.finishJson(end, unreadable);
      if (unreadable)
        return {
          stdout,
          stderr: `${this.file}: ${end?.message ?? 'not a capture'}\n`,
          exitCode: 1,
        };
      if (eof.kind === 'none') return { stdout, stderr: '', exitCode: 0 };
      return { stdout, stderr: eof.text, exitCode: eof.kind === 'cut' ? 0 : 1 };
    }
    // Nothing decodable at all (not a capture, or a bad file header): an error.
    if (eof.kind === 'unreadable') return { stdout: '', stderr: eof.text, exitCode: 1 };
    let stdout = '';
    for (const item of this.decoder.finish()) stdout += this.render(item);
    const c = this.decoder.counts;
    const summary = {
      format: format ?? 'pcap',
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

  /** --json: the document's opening, written before its first item (or at the end). */
  private opening(): string {
    if (this.opened) return '';
    this.opened = true;
    return `{\n  "format": ${JSON.stringify(this.records.fileFormat)},\n  "items": [`;
  }

  private render(item: CaptureItem): string {
    if (this.mode === 'json') {
      const text = `${this.opening()}${this.firstItem ? '\n    ' : ',\n    '}${JSON.stringify(captureItemToJson(item))}`;
      this.firstItem = false;
      return text;
    }
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
    bytes = readFileSync(file === STDIN ? 0 : file);
  } catch (e) {
    return { exitCode: 1, stdout: '', stderr: `cannot read ${file}: ${(e as Error).message}\n` };
  }
  const run = decodeRun(inputName(file), options, o);
  const head = run.push(bytes);
  const end = run.finish();
  return { ...end, stdout: head + end.stdout };
}

/** The output mode the options select. */
function decodeRun(file: string, options: DecodeCommandOptions, o: ValidOptions): DecodeRun {
  if (o.lazy !== undefined) return new LazyDecode(file, o);
  return new StreamingDecode(
    file,
    options.json === true ? 'json' : options.jsonl === true ? 'jsonl' : 'text',
    o,
  );
}

/** The file name that reads standard input (as tshark's `-r -`). */
const STDIN = '-';

/** How messages name the input. */
function inputName(file: string): string {
  return file === STDIN ? '(standard input)' : file;
}

/** The input's bytes, chunk by chunk: a file read into one reused buffer, or a stream. */
async function* inputChunks(file: string, stdin: Readable): AsyncGenerator<Uint8Array> {
  if (file === STDIN) {
    for await (const chunk of stdin) yield chunk as Uint8Array;
    return;
  }
  // One read buffer, reused: every decoder copies what it keeps past push(), so the read
  // side makes no garbage however large the file.
  const chunk = new Uint8Array(READ_CHUNK);
  let input: FileHandle | undefined;
  try {
    input = await open(file, 'r');
    for (;;) {
      const { bytesRead } = await input.read(chunk, 0, READ_CHUNK, null);
      if (bytesRead === 0) return;
      yield chunk.subarray(0, bytesRead);
    }
  } finally {
    await input?.close();
  }
}

/**
 * Bytes read between full garbage collections. The decoders keep a few MB live whatever
 * the file's size, but V8 lets garbage (the output text's buffers are external memory)
 * grow the heap with the length of the run before it collects; one full GC per 64 MiB
 * read (about 10 ms each) keeps the peak RSS flat (bench codec: 1 GiB vs 100 MB).
 */
const GC_EVERY = 64 * 1024 * 1024;

/** V8's full GC, exposed at run time (undefined if the flag cannot be set). */
function fullGc(): (() => void) | undefined {
  try {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as unknown;
    return typeof gc === 'function' ? () => (gc as () => void)() : undefined;
  } catch {
    return undefined;
  }
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
 * code (see {@link runDecode}). Every output mode streams (`--json` writes its array as it goes).
 */
export async function streamDecode(
  file: string,
  options: DecodeCommandOptions,
  io: { readonly stdout: Writable; readonly stderr: Writable; readonly stdin?: Readable },
): Promise<number> {
  const out = new Output(io.stdout);
  const o = checkOptions(options);
  if (!o.ok) {
    io.stderr.write(o.stderr);
    return 2;
  }
  const s = decodeRun(inputName(file), options, o);
  const collect = fullGc();
  let sinceGc = 0;
  try {
    for await (const chunk of inputChunks(file, io.stdin ?? process.stdin)) {
      sinceGc += chunk.length;
      if (sinceGc >= GC_EVERY && collect !== undefined) {
        sinceGc = 0;
        collect();
      }
      await out.write(s.push(chunk));
      if (out.closed || s.done) break;
    }
  } catch (e) {
    io.stderr.write(`cannot read ${inputName(file)}: ${(e as Error).message}\n`);
    return 1;
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

/** commander's argParser of a value checked by `check` (which throws a one-line error). */
function checkedBy(check: (text: string) => unknown): (text: string) => string {
  return (text) => {
    try {
      check(text);
    } catch (e) {
      if (e instanceof SummaryOptionError || e instanceof DisplayFilterError)
        throw new InvalidArgumentError(e.message);
      throw e;
    }
    return text;
  };
}

/** Registers `rdma-interop decode`. */
export function registerDecode(program: Command): void {
  program
    .command('decode')
    .description(
      'decode the RoCEv2 and iWARP (MPA/DDP/RDMAP) messages of a pcap or pcapng file, frame by frame',
    )
    .argument('<file>', "capture file (pcap or pcapng); '-' reads standard input")
    .addOption(
      new Option('--profile <profile>', 'RDMAP profile')
        .choices(IWARP_PROFILES)
        .default(DEFAULT_IWARP_PROFILE),
    )
    .option(
      '--json',
      'print one JSON document for the whole capture, written as it is decoded (bigint as 0x-prefixed hex strings, bytes as hex strings)',
    )
    .option(
      '--summary',
      'one line per packet: frame, time (ISO 8601 UTC), endpoints (iWARP: TCP address:port), protocol, opcode and key fields',
    )
    .option(
      '--fields <list>',
      "comma-separated fields, printed tab-separated: tshark 4.0 names (infiniband.bth.psn, iwarp_ddp.msn, iwarp_mpa.crc_check, frame.number, ip.src, tcp.stream, udp.srcport, ...) print one line per frame in tshark's formats, as 'tshark -T fields -e ...'; the project's columns (frame, time, src, dst, proto, opcode, qp, psn, qn, msn, mo, stag, crc, icrc, length, info, iWARP layout fields such as requestIdentifier, RoCE fields such as AtomicETH.swapOrAddData) one line per packet",
      checkedBy(parseFieldList),
    )
    .option(
      '--filter <expression>',
      "only what matches a display filter: tshark or project field names, ==, !=, <, >, <=, >=, and/&&, or/||, not/!, parentheses, a bare name for presence; crc (valid, invalid, not-in-use) and icrc (valid, invalid) are fields, e.g. 'iwarp_ddp.msn >= 2 && crc == valid'; the older 'opcode=atomic-request,qn=1' still reads; implies --summary unless --fields",
      checkedBy(parseFilterOption),
    )
    .option('--header', "with --fields: print the field names first (tshark's -E header=y)")
    .option(
      '-c, --count <frames>',
      'read only the first <frames> frames (as tshark -c)',
      positiveInteger,
    )
    .option(
      '--jsonl',
      'print JSON Lines as the capture is decoded: one object per item, then a summary',
    )
    .option('--roce-port <port>', 'UDP destination port of RoCEv2', port, ROCE_V2_UDP_PORT)
    .action(async (file: string, options: DecodeCommandOptions) => {
      process.exitCode = await streamDecode(file, options, {
        stdout: process.stdout,
        stderr: process.stderr,
        stdin: process.stdin,
      });
    });
}
