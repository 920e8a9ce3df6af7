import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { decodeCaptureMessages } from '../../codec/capture/decode-capture.js';
import { captureToJson, captureToText } from '../../codec/capture/render.js';
import {
  DEFAULT_IWARP_PROFILE,
  IWARP_PROFILES,
  isIwarpProfile,
} from '../../codec/iwarp/profiles.js';
import { ROCE_V2_UDP_PORT } from '../../codec/roce/packet.js';

/** Options of {@link runDecode}. */
export interface DecodeCommandOptions {
  /** RDMAP profile for iWARP messages (default `DEFAULT_IWARP_PROFILE`, rfc7306). */
  readonly profile?: string;
  /** Print JSON instead of the text tree. */
  readonly json?: boolean;
  /** UDP port treated as RoCEv2 (default 4791). */
  readonly rocePort?: string;
}

/** What `runDecode` produced: the text for stdout and the process exit code. */
export interface DecodeCommandResult {
  readonly exitCode: number;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * `rdma-interop decode <file>` without touching process state, so tests can call it:
 * exit code 0 when the file decoded (problems inside frames are printed, not fatal),
 * 1 when the file is not a readable capture, 2 for bad arguments.
 */
export function runDecode(file: string, options: DecodeCommandOptions = {}): DecodeCommandResult {
  const profile = options.profile ?? DEFAULT_IWARP_PROFILE;
  if (!isIwarpProfile(profile))
    return {
      exitCode: 2,
      stdout: '',
      stderr: `unknown profile '${profile}' (known: ${IWARP_PROFILES.join(', ')})\n`,
    };
  const rocePort = options.rocePort === undefined ? ROCE_V2_UDP_PORT : Number(options.rocePort);
  if (!Number.isInteger(rocePort) || rocePort < 0 || rocePort > 0xffff)
    return { exitCode: 2, stdout: '', stderr: `bad --roce-port '${options.rocePort}'\n` };
  let bytes: Uint8Array;
  try {
    bytes = readFileSync(file);
  } catch (e) {
    return { exitCode: 1, stdout: '', stderr: `cannot read ${file}: ${(e as Error).message}\n` };
  }
  const result = decodeCaptureMessages(bytes, { profile, rocePort });
  if (!result.ok) {
    const e = result.error;
    const out = options.json
      ? `${JSON.stringify({ error: { layer: e.layer, field: e.field, offset: e.offset, reason: e.reason, message: e.message } }, null, 2)}\n`
      : '';
    return { exitCode: 1, stdout: out, stderr: `${file}: ${e.message}\n` };
  }
  const stdout = options.json
    ? `${JSON.stringify(captureToJson(result.value), null, 2)}\n`
    : captureToText(result.value);
  return { exitCode: 0, stdout, stderr: '' };
}

/** Registers `rdma-interop decode`. */
export function registerDecode(program: Command): void {
  program
    .command('decode')
    .description('decode the RoCEv2 and iWARP (MPA/DDP/RDMAP) messages of a pcap or pcapng file')
    .argument('<file>', 'capture file (pcap or pcapng)')
    .option(
      '--profile <profile>',
      `RDMAP profile: ${IWARP_PROFILES.join(', ')}`,
      DEFAULT_IWARP_PROFILE,
    )
    .option('--json', 'print JSON (bigint as 0x-prefixed hex strings, bytes as hex strings)')
    .option('--roce-port <port>', 'UDP destination port of RoCEv2', String(ROCE_V2_UDP_PORT))
    .action((file: string, options: DecodeCommandOptions) => {
      const r = runDecode(file, options);
      process.stdout.write(r.stdout);
      process.stderr.write(r.stderr);
      process.exitCode = r.exitCode;
    });
}
