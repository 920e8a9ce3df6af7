/**
 * The two sides of a link run (`run --link`): each guest boots its own kernel line with
 * that line's rdma-core and its own siw variant (`--kernel`/`--siw` for guest A,
 * `--peer-kernel`/`--peer-siw` for guest B). A mixed pair runs both ways round in one boot:
 * A requests from B, then B from A (guest-main.ts). Every result names the pair it ran on,
 * and recorded behaviour is looked up with the environment of the side it belongs to
 * (judge/records/ `role`).
 */
import { join } from 'node:path';
import type { Environment } from '../../judge/record.js';
import type { RunEnvironment } from '../environment.js';
import { DEVICES, type DeviceName } from '../scenario.js';

export const PAIR_GUESTS = ['A', 'B'] as const;
export type PairGuest = (typeof PAIR_GUESTS)[number];

/** `one-way`: A requests from B. `both-ways`: then B requests from A, in the same boot. */
export const LINK_DIRECTIONS = ['one-way', 'both-ways'] as const;
export type LinkDirection = (typeof LINK_DIRECTIONS)[number];

/** Where the guests leave their files in the share directory. */
export function linkFiles(share: string): {
  environment: (guest: PairGuest) => string;
  observations: (requester: PairGuest) => string;
} {
  return {
    environment: (guest) => join(share, `environment-${guest}.json`),
    observations: (requester) => join(share, `observations-${requester}.json`),
  };
}

/** One side of a result: the guest, and what it ran (the key of its recorded behaviour). */
export interface LinkSide extends Environment {
  readonly guest: PairGuest;
}

/** The pair a link result ran on, by role. */
export interface LinkPair {
  readonly requester: LinkSide;
  readonly responder: LinkSide;
}

/**
 * The side `guest` of a run on `device` (a link scenario's target, or across two hosts the
 * device that side opened: `name`), from the environment that guest collected: the
 * provider as the guest saw it (siw0 on the patched module is `siw+rfc7306`; a device of
 * another name, its described provider: mlx5, irdma...).
 */
export function linkSide(
  guest: PairGuest,
  env: RunEnvironment,
  device: DeviceName,
  name: string = device,
): LinkSide {
  const facts = env.devices.find((d) => d.name === name);
  return {
    guest,
    provider: facts?.provider ?? DEVICES[device].provider,
    kernel: env.kernel,
    rdmaCore: env.rdmaCore,
  };
}

/** A side in one line: `A: 6.1.0-56-amd64, rdma-core 56.1, siw+rfc7306`. */
export function sideText(side: LinkSide): string {
  return `${side.guest}: ${side.kernel}, rdma-core ${side.rdmaCore}, ${side.provider}`;
}

/** The pair in one line, requester first. */
export function pairText(pair: LinkPair): string {
  return `requester ${sideText(pair.requester)}; responder ${sideText(pair.responder)}`;
}

/** The suffix of a result whose requester is guest B (the roles swapped). */
export const SWAPPED_SUFFIX = '--b-to-a';

/** A result's id: the scenario's, plus the suffix when B was the requester. */
export function directedId(id: string, requester: PairGuest): string {
  return requester === 'A' ? id : `${id}${SWAPPED_SUFFIX}`;
}
