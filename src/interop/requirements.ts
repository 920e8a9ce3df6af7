/**
 * What a scenario needs of a device, and what a device offers (issue 37): the suite runs
 * on any device by transport and capability, not by name. A scenario's needs are read from
 * its program (one source of truth: the operation traits, the steps), a device's offer is
 * probed where it is (kernel/device-target.ts). A scenario whose need the device lacks is
 * reported `not-run` with the missing capabilities (`notApplicable`), never dropped.
 */
import { requireArray, requireName, requireObject, requireString } from '../arguments.js';
import { requireScenario } from './arguments.js';
import { traitsOf } from './operations.js';
import { connectionOf, DEVICES, type Scenario, workRequestsOf } from './scenario.js';

/** The transport families a device speaks (ibv_node_type / the port's link layer). */
export const TRANSPORTS = ['roce', 'iwarp', 'ib'] as const;
export type TransportFamily = (typeof TRANSPORTS)[number];

/**
 * The capabilities a scenario may need beyond its transport. `atomics`: atomic_cap not
 * NONE (IBTA 1.5 §10.2.1.1; on iWARP the Atomic operations of RFC 7306 §5); `immediate`:
 * Write/Send with Immediate (native on IB/RoCE, RFC 7306 §6 on iWARP); `ibv-wr`: an
 * extended QP (ibv_create_qp_ex, the ibv_wr_* post API); `atomic-write`, `flush`: the
 * IBTA 1.5 Annex A19 placement operations (device_cap_flags_ex bits 40, 38/39);
 * `srq`: max_srq > 0; `mw-type1`, `mw-type2`: memory windows (max_mw > 0, the type 2
 * capability bits); `connect-by-hand`: RC QPs moved to RTS with ibv_modify_qp (an
 * iWARP QP reaches RTS only through the LLP connection, RFC 5040 §1.5).
 */
export const CAPABILITIES = [
  'connect-by-hand',
  'ibv-wr',
  'atomics',
  'immediate',
  'atomic-write',
  'flush',
  'srq',
  'mw-type1',
  'mw-type2',
  'ud',
] as const;
export type Capability = (typeof CAPABILITIES)[number];

/** What a scenario needs of the device it runs on. */
export interface Requirements {
  readonly transport: TransportFamily;
  readonly capabilities: readonly Capability[];
}

/** A device as the runner selects scenarios for it (kernel/device-target.ts probes one). */
export interface DeviceOffer {
  readonly name: string;
  readonly transport: TransportFamily;
  readonly capabilities: readonly Capability[];
}

/** The needs of `scenario`, from its device's transport, connection, post API and program. */
export function requirementsOf(scenario: Scenario): Requirements {
  requireScenario(scenario);
  const transport = DEVICES[scenario.device].transport;
  const needs = new Set<Capability>();
  if (connectionOf(scenario) === 'by-hand') needs.add('connect-by-hand');
  if (scenario.postPath === 'ex') needs.add('ibv-wr');
  if (scenario.srq === true) needs.add('srq');
  // UD multicast needs UD QPs. iWARP defines no datagram service at all (RFC 5040 runs
  // over a reliable LLP), so no iWARP device offers them: an iWARP NIC reports these
  // programs not-applicable, and siw0 runs them only because its records cover them
  // (siw-rc-qps-only, libsiw-no-attach-mcast: the refusal is checked to still hold).
  if (scenario.ud === true) needs.add('ud');
  for (const wr of workRequestsOf(scenario)) {
    const traits = traitsOf(wr.kind);
    if (traits.atomic) needs.add('atomics');
    // RFC 7306 §6 immediates are RC messages: a UD program's refusal comes before them.
    if (/WITH_IMM/.test(wr.kind) && transport === 'iwarp' && scenario.ud !== true)
      needs.add('immediate');
    if (traits.createFlag === 'atomicWrite') needs.add('atomic-write');
    if (traits.createFlag === 'flush') needs.add('flush');
  }
  for (const step of scenario.program) {
    if (step.do === 'bind-mw') needs.add(step.type === 1 ? 'mw-type1' : 'mw-type2');
    if (step.do === 'hammer') needs.add('atomics');
  }
  return { transport, capabilities: CAPABILITIES.filter((c) => needs.has(c)) };
}

/**
 * What `device` lacks of `needs`: `transport iwarp` when the transport differs (then
 * nothing else is listed), else each missing capability. Empty: the scenario applies.
 */
export function missingOf(needs: Requirements, device: DeviceOffer): string[] {
  requireOffer(needs, 'needs');
  requireOffer(device, 'device');
  if (needs.transport !== device.transport) return [`transport ${needs.transport}`];
  return needs.capabilities.filter((c) => !device.capabilities.includes(c));
}

/** `offer`'s transport and capabilities are known names (a typed error otherwise). */
function requireOffer(offer: unknown, field: string): void {
  const o = requireObject('interop', field, offer) as Readonly<Record<string, unknown>>;
  if (field === 'device') requireString('interop', `${field}.name`, o.name);
  requireName('interop', 'transport', TRANSPORT_NAMES, o.transport, `${field}.transport`);
  for (const [i, c] of requireArray('interop', `${field}.capabilities`, o.capabilities).entries())
    requireName('interop', 'capability', CAPABILITY_NAMES, c, `${field}.capabilities[${i}]`);
}
const TRANSPORT_NAMES: Readonly<Record<string, true>> = Object.fromEntries(
  TRANSPORTS.map((t) => [t, true]),
);
const CAPABILITY_NAMES: Readonly<Record<string, true>> = Object.fromEntries(
  CAPABILITIES.map((c) => [c, true]),
);

/**
 * The capability profiles the closing note of issue 37 counts scenarios for, as devices
 * offer them: a RoCE device with and without atomics (the IBTA 1.5 placement operations
 * with them), an iWARP device as stock siw is, and one with RFC 7306 (the patched siw).
 */
export const PROFILES: Readonly<Record<string, DeviceOffer>> = {
  'roce-atomics': {
    name: 'roce-atomics',
    transport: 'roce',
    capabilities: CAPABILITIES.filter((c) => c !== 'immediate'),
  },
  'roce-no-atomics': {
    name: 'roce-no-atomics',
    transport: 'roce',
    capabilities: CAPABILITIES.filter(
      (c) => c !== 'atomics' && c !== 'immediate' && c !== 'atomic-write' && c !== 'flush',
    ),
  },
  iwarp: { name: 'iwarp', transport: 'iwarp', capabilities: ['srq'] },
  'iwarp-rfc7306': {
    name: 'iwarp-rfc7306',
    transport: 'iwarp',
    capabilities: ['srq', 'atomics', 'immediate'],
  },
};
