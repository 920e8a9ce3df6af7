/**
 * The iWARP tester's answer, one side's: the messages it sent back as wire lines, the
 * receive completion and the memory afterwards. The engine's and siw's are compared as
 * these strings, and records (records/siw-wire.ts) derive siw's from the engine's.
 */
import type { RdmapMessage, Terminate } from '../codec/iwarp/messages.js';
import { wireLine } from './wire.js';

/** One side's answer to an iWARP assertion; each part prints and compares as it is. */
export interface IwarpAnswer {
  /** The messages sent back, one wire line each. */
  readonly wire: readonly string[];
  /** The receive completion: `none`, `ok bytes=<n> imm=<hex>|- data=<hex of 8>` or `error`. */
  readonly receive: string;
  /** The MR afterwards (hex). */
  readonly memory: string;
}

/** An iWARP answer with the Terminates its wire lines show, in order, as records rewrite them. */
export interface IwarpExpectation {
  readonly answer: IwarpAnswer;
  readonly terminates: readonly Terminate[];
}

const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex');

/** One wire line; an Atomic Response adds what the shared line leaves out. */
export function answerLine(message: RdmapMessage): string {
  const base = wireLine('responder', message, []);
  if (message.kind !== 'atomic-response') return base;
  return `${base} req=0x${message.originalRequestIdentifier.toString(16)} orig=0x${message.originalRemoteDataValue.toString(16)}`;
}

/** The wire line of an FPDU whose ULPDU the codec refuses: its bytes and the reason. */
export function undecodableLine(ulpdu: Uint8Array, error: string): string {
  return `responder> undecodable ulpdu=${hex(ulpdu)} (${error})`;
}
