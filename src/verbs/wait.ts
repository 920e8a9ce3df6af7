/**
 * The one way the wrapper waits for an event from the libuv loop (a completion, an
 * rdma_cm event): a promise that ends on the event, on an AbortSignal or on a timeout,
 * and unregisters itself exactly once whichever comes first.
 */
import type { VerbsError } from './errors.js';

/** Options of every asynchronous wait. */
export interface WaitOptions {
  /** Rejects with the signal's reason when aborted. */
  readonly signal?: AbortSignal;
  /** Rejects with a VerbsError ETIMEDOUT after this many milliseconds. */
  readonly timeoutMs?: number;
}

/** The two ways the event source ends a wait. */
export interface Pending<T> {
  resolve(value: T): void;
  reject(error: unknown): void;
}

/**
 * Waits: `register` hooks `pending` into the event source and returns how to unhook it.
 * It may settle `pending` at once (an event already queued, a failing arm); the unhook
 * still runs, once.
 */
export function waitFor<T>(
  options: WaitOptions,
  timeoutError: (timeoutMs: number) => VerbsError,
  register: (pending: Pending<T>) => () => void,
): Promise<T> {
  const { signal, timeoutMs } = options;
  if (signal?.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    let unregister: (() => void) | undefined;
    let timer: NodeJS.Timeout | undefined;
    const finish = (): void => {
      settled = true;
      if (timer !== undefined) clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      unregister?.();
    };
    const pending: Pending<T> = {
      resolve: (value) => {
        if (settled) return;
        finish();
        resolve(value);
      },
      reject: (error) => {
        if (settled) return;
        finish();
        reject(error);
      },
    };
    const onAbort = (): void => pending.reject(signal?.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
    if (timeoutMs !== undefined) {
      timer = setTimeout(() => pending.reject(timeoutError(timeoutMs)), timeoutMs);
    }
    const unhook = register(pending);
    if (settled) unhook();
    else unregister = unhook;
  });
}
