/**
 * Which oracles a survival check fired, by name (issue 32), so that a failure says what
 * detected it: a kernel-log detector, the device no longer working, the guest gone, guard
 * words around the region changed, or memory the device carried back that was never in
 * the region or the request.
 */
import type { Survival } from '../assertion.js';
import { kernelLogOracles } from './kernel-log.js';

/** The names, in a fixed order; empty when the kernel looks healthy. */
export function survivalOracles(s: Survival): string[] {
  return [
    ...kernelLogOracles(s.dmesg),
    ...(s.guestUp ? [] : ['guest-up']),
    ...(s.deviceWorks || !s.guestUp ? [] : ['device-works']),
  ];
}

/** A failure note naming its oracles. */
export function oracleNote(what: string, oracles: readonly string[]): string {
  return oracles.length === 0 ? what : `${what} (oracle: ${oracles.join(', ')})`;
}
