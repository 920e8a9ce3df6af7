/**
 * Runs the real tshark (`/usr/bin/tshark`) as an independent decoder and returns its
 * fields per frame in a flat, convenient shape.
 *
 * Usage:
 * ```ts
 * const frames = tsharkFields('/tmp/x.pcap');          // -T json --no-duplicate-keys
 * frames[0]?.get('infiniband.bth.opcode');              // ['20'] (strings, as tshark prints)
 * firstValue(frames[0]!, 'iwarp_rdma.opcode');          // '10' or undefined
 * const cols = tsharkColumns('/tmp/x.pcap', ['tcp.seq_raw', 'iwarp_mpa.ulpdulength']);
 * ```
 * `TSHARK_AVAILABLE` is false when tshark is not installed: use `describe.skipIf(!TSHARK_AVAILABLE)`.
 * Protocol preferences may be passed as `-o` options, e.g. `{ prefs: ['rroce.port:4791'] }`,
 * and "decode as" rules as `{ decodeAs: ['tcp.port==4000,iwarp_mpa'] }` (tshark `-d`).
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { TSHARK_MPA_ON_ANY_PORT } from '../../src/codec/capture/tshark-fields.js';

/** Path of the tshark binary used by the cross-check tests. */
export const TSHARK_PATH = '/usr/bin/tshark';

/** Whether tshark is installed on this machine. */
export const TSHARK_AVAILABLE = existsSync(TSHARK_PATH);

/**
 * The tshark release whose output formats the tests were written against (Debian 12's
 * 4.0.x: field names, `-T fields` value formats, the heuristics in
 * INFINIBAND_PAYLOAD_PROTOCOLS). Another release fails every run through this helper with
 * a clear message instead of a field-by-field diff.
 */
export const TESTED_TSHARK = '4.0';

/** `major.minor.patch` of a `tshark --version` first line, undefined if it has none. */
export function parseTsharkVersion(text: string): string | undefined {
  return /^TShark \(Wireshark\) (\d+\.\d+\.\d+)/.exec(text)?.[1];
}

/** The installed tshark's version, undefined when tshark is not installed. */
export const TSHARK_VERSION: string | undefined = TSHARK_AVAILABLE
  ? parseTsharkVersion(
      execFileSync(TSHARK_PATH, ['--version'], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
      }),
    )
  : undefined;

/** Throws unless the installed tshark is the {@link TESTED_TSHARK} release. */
export function assertTestedTshark(version: string | undefined = TSHARK_VERSION): void {
  if (version === undefined || !version.startsWith(`${TESTED_TSHARK}.`))
    throw new Error(
      `tshark ${version ?? '(version unknown)'} at ${TSHARK_PATH}: the tests compare against tshark ${TESTED_TSHARK}.x output formats (Debian 12's wireshark package)`,
    );
}

/** One frame as tshark decoded it: field name (e.g. `infiniband.bth.psn`) to all its values. */
export type TsharkFrame = Map<string, string[]>;

/** Options shared by the tshark runners. */
export interface TsharkOptions {
  /** `-o name:value` preference settings. */
  readonly prefs?: readonly string[];
  /** `-d layer==selector,protocol` decode-as rules. */
  readonly decodeAs?: readonly string[];
  /** A display filter (`-Y`). */
  readonly filter?: string;
  /** Heuristic dissectors to enable (`--enable-heuristic`). */
  readonly enableHeuristics?: readonly string[];
  /**
   * Protocols to disable (`--disable-protocol`). Payload heuristics such as `rpcordma`
   * or `iser` may claim test payloads: see {@link INFINIBAND_PAYLOAD_PROTOCOLS}.
   */
  readonly disableProtocols?: readonly string[];
}

/**
 * Protocols whose heuristics tshark 4.0 tries on InfiniBand/RoCE payloads
 * (`tshark -G heuristic-decodes`, minus `ethertype`, which Ethernet needs); disable them so
 * arbitrary test payloads stay `data` (RPCoRDMA otherwise throws "Malformed Packet").
 */
export const INFINIBAND_PAYLOAD_PROTOCOLS: readonly string[] = [
  'smc',
  'smb_direct',
  'rpcordma',
  'nvme-rdma',
  'lnet',
  'iser',
  'eoib',
  'infiniband_sdp',
  'fcoib',
];

/** Every run finds MPA by its content on any port, as the codec does (see the constant). */
function commonArgs(file: string, o: TsharkOptions): string[] {
  const args = ['-r', file, '-n', '-o', TSHARK_MPA_ON_ANY_PORT];
  for (const p of o.prefs ?? []) args.push('-o', p);
  for (const d of o.decodeAs ?? []) args.push('-d', d);
  for (const h of o.enableHeuristics ?? []) args.push('--enable-heuristic', h);
  for (const p of o.disableProtocols ?? []) args.push('--disable-protocol', p);
  if (o.filter !== undefined) args.push('-Y', o.filter);
  return args;
}

function run(args: string[]): string {
  assertTestedTshark();
  return execFileSync(TSHARK_PATH, args, {
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** Walks tshark's JSON tree, collecting `field -> values`; `*_tree` objects are descended. */
function flatten(node: unknown, into: TsharkFrame): void {
  if (node === null || typeof node !== 'object') return;
  for (const [key, value] of Object.entries(node as Record<string, unknown>)) {
    const values = Array.isArray(value) ? value : [value];
    for (const item of values) {
      if (typeof item === 'string') {
        const list = into.get(key);
        if (list) list.push(item);
        else into.set(key, [item]);
      } else flatten(item, into);
    }
  }
}

/**
 * All fields of every frame (`tshark -T json --no-duplicate-keys`), flattened: nested
 * `..._tree` objects are merged into the frame's map; repeated fields keep every value in
 * order. Values are tshark's strings (numbers in decimal unless the field is hex-typed,
 * e.g. `infiniband.reth.va` prints `0x...`... compare with care).
 */
export function tsharkFields(file: string, options: TsharkOptions = {}): TsharkFrame[] {
  const out = run([...commonArgs(file, options), '-T', 'json', '--no-duplicate-keys']);
  const parsed = JSON.parse(out) as Array<{ _source?: { layers?: unknown } }>;
  return parsed.map((frame) => {
    const map: TsharkFrame = new Map();
    flatten(frame._source?.layers, map);
    return map;
  });
}

/** The first value of `field` in a frame, or `undefined`. */
export function firstValue(frame: TsharkFrame, field: string): string | undefined {
  return frame.get(field)?.[0];
}

/**
 * Selected fields per frame (`tshark -T fields -e f1 -e f2 ... -E occurrence=a`), each as
 * the list of its occurrences (tshark separates them with `,`).
 */
export function tsharkColumns(
  file: string,
  fields: readonly string[],
  options: TsharkOptions = {},
): Array<Record<string, string[]>> {
  const args = [...commonArgs(file, options), '-T', 'fields', '-E', 'separator=\t'];
  args.push('-E', 'occurrence=a', '-E', 'aggregator=,');
  for (const f of fields) args.push('-e', f);
  const out = run(args);
  return out
    .split('\n')
    .filter((line) => line.length > 0)
    .map((line) => {
      const cells = line.split('\t');
      const row: Record<string, string[]> = {};
      fields.forEach((f, i) => {
        const cell = cells[i] ?? '';
        row[f] = cell === '' ? [] : cell.split(',');
      });
      return row;
    });
}

/** tshark's one-line summaries (`-T fields -e _ws.col.Protocol -e _ws.col.Info`). */
export function tsharkSummaries(file: string, options: TsharkOptions = {}): string[] {
  return tsharkColumns(file, ['_ws.col.Protocol', '_ws.col.Info'], options).map(
    (r) => `${(r['_ws.col.Protocol'] ?? []).join(',')} ${(r['_ws.col.Info'] ?? []).join(',')}`,
  );
}

/**
 * `tshark -T fields -E header=y -e f1 -e f2 ...` as tshark prints it (one line per frame,
 * occurrences joined by `,`): the text `decode --header --fields f1,f2,...` must equal.
 */
export function tsharkFieldsText(
  file: string,
  fields: readonly string[],
  options: TsharkOptions = {},
): string {
  const args = [...commonArgs(file, options), '-T', 'fields', '-E', 'header=y'];
  for (const f of fields) args.push('-e', f);
  return run(args);
}
