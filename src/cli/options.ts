/**
 * The option and argument parsers every `rdma-interop` command shares. Each throws
 * commander's `InvalidArgumentError`, so a bad value is reported by commander itself as a
 * usage error (one line, exit 2: see main.ts) before any work starts.
 */
import { InvalidArgumentError } from 'commander';

/** A whole number > 0 (`--memory`, `--cpus`, counts). */
export function positiveInteger(value: string): number {
  const parsed = Number(value);
  if (value.trim() === '' || !Number.isInteger(parsed) || parsed <= 0)
    throw new InvalidArgumentError('Expected a positive whole number.');
  return parsed;
}

/** A duration in seconds > 0, fractions allowed (`--timeout`). */
export function positiveSeconds(value: string): number {
  const parsed = Number(value);
  if (value.trim() === '' || !Number.isFinite(parsed) || parsed <= 0)
    throw new InvalidArgumentError('Expected a positive number of seconds.');
  return parsed;
}

/** A TCP/UDP port, 0-65535 (`--roce-port`). */
export function port(value: string): number {
  const parsed = Number(value);
  if (value.trim() === '' || !Number.isInteger(parsed) || parsed < 0 || parsed > 0xffff)
    throw new InvalidArgumentError('Expected a port number, 0-65535.');
  return parsed;
}
