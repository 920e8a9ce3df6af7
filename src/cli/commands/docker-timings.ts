/**
 * The per-step times of `rdma-interop docker run` as a table on stderr (the figures the
 * closing notes and docker/README.md quote come from it).
 */
import { loadavg } from 'node:os';
import Table from 'cli-table3';
import type { DockerRunResult } from '../../runtime/docker/index.js';

/** The steps in the order they happen, and what each one measures. */
const STEPS: readonly (readonly [string, string])[] = [
  ['base-image', 'base image (debootstrap, docker import)'],
  ['image-build', 'image build'],
  ['handover-host', 'hand-over on this host (mkfs.ext4 -d / docker save; 0: cached)'],
  ['guest-boot', 'guest boot until rxe0/siw0 are up'],
  ['direct-suite', 'the suite directly in the guest'],
  ['dockerd-start', 'dockerd start in the guest (containerd first)'],
  ['handover-guest', 'hand-over in the guest (mount / docker load) until the image is usable'],
  ['container-suite', 'the suite in the container'],
  ['devices-container-suite', 'the suite in the device-nodes-only container'],
  ['container-suite-host', 'the suite in the container on this host'],
  ['guest', 'the whole guest run (boot to power-off)'],
];

export function timingsTable(result: DockerRunResult): string {
  const table = new Table({ head: ['step', 'seconds'], style: { head: [], border: [] } });
  const known = new Set(STEPS.map(([name]) => name));
  for (const [name, what] of STEPS) {
    const seconds = result.timings[name];
    if (seconds !== undefined) table.push([what, seconds.toFixed(1)]);
  }
  // A step this table does not know yet still shows, under its own name.
  for (const [name, seconds] of Object.entries(result.timings))
    if (!known.has(name)) table.push([name, seconds.toFixed(1)]);
  table.push([`image size (MB)`, (result.imageBytes / 1e6).toFixed(0)]);
  // The figures scale with the machine's load (2 shared cores under TCG): quoted with them.
  table.push(['load average (1, 5, 15 min) at the end', loadAverage()]);
  return table.toString();
}

/** This host's load average now, as `1.2 / 3.4 / 5.6`. */
export function loadAverage(): string {
  return loadavg()
    .map((l) => l.toFixed(1))
    .join(' / ');
}
