/**
 * Waiting for an event instead of sleeping for it (issue 38): `waitFor` checks `probe`
 * until it gives a value other than undefined, yielding to the event loop between checks,
 * and throws once `deadlineMs` has passed. The deadline only ever fails a test: it is set
 * far beyond any expected wait (a loaded TCG guest is slow), and a value found early ends
 * the wait at once.
 */
export async function waitFor<T>(
  what: string,
  probe: () => T | undefined | Promise<T | undefined>,
  { deadlineMs = 30_000, intervalMs = 5 }: { deadlineMs?: number; intervalMs?: number } = {},
): Promise<T> {
  const deadline = performance.now() + deadlineMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (performance.now() > deadline) throw new Error(`waited ${deadlineMs} ms for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
