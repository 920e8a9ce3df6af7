/**
 * How the addon allocates the memory it shares with JavaScript (`allocMr`'s, a round
 * trip's block, the bound post and poll words): issue 36, native/js_memory.h.
 *
 * - `'external'`: the addon allocates it (page-aligned for an MR) and hands JS an external
 *   ArrayBuffer over it, co-owned with the registration.
 * - `'v8'`: V8 allocates it and the addon uses it where it is: what a Node built with the
 *   V8 sandbox allows (it refuses external buffers, `napi_no_external_buffers_allowed`),
 *   and all an addon compiled with `NODE_API_NO_EXTERNAL_BUFFERS_ALLOWED` can do.
 *
 * Chosen when the addon loads: `'v8'` if it was compiled without external buffers
 * (`compile-time`), if this Node refuses them (`refused`, also learnt at any later
 * creation), or if `RDMA_INTEROP_NO_EXTERNAL_BUFFERS=1` was set (`environment`);
 * `'external'` otherwise (`default`).
 */
import { requireName } from '../arguments.js';
import { addon } from './native.js';

/** The two ways (see the module comment). */
export type MemoryPath = 'external' | 'v8';

/** Why the current path is in use. `chosen`: {@link setMemoryPath}. */
export type MemoryPathReason = 'default' | 'refused' | 'compile-time' | 'environment' | 'chosen';

/** What {@link memoryPath} says. */
export interface MemoryPathInfo {
  readonly path: MemoryPath;
  readonly reason: MemoryPathReason;
  /** False where external buffers are compiled out or this Node refused one. */
  readonly externalAvailable: boolean;
}

const PATHS: Readonly<Record<MemoryPath, MemoryPath>> = { external: 'external', v8: 'v8' };

/** The path memory allocated from now on takes, and why (loads the addon). */
export function memoryPath(): MemoryPathInfo {
  const { path, reason, externalAvailable } = addon().memoryPath();
  return { path, reason: reason as MemoryPathReason, externalAvailable };
}

/**
 * Chooses the path for memory allocated from now on (memory already handed out keeps
 * its own). For tests and the bench, which measure both in one process. An unknown name
 * throws UnknownNameError; `'external'` where it is unavailable throws VerbsError
 * EOPNOTSUPP.
 */
export function setMemoryPath(path: MemoryPath): void {
  addon().setMemoryPath(requireName('verbs', 'memory path', PATHS, path, 'path'));
}
