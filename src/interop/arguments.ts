/**
 * The interop layer's argument checks (issue 25): a scenario, an environment, a probe or
 * a result list from a plain-JavaScript caller is checked for its shape before anything
 * runs, so a wrong call is an ArgumentError (UnknownNameError for a device name the suite
 * lacks), never a raw TypeError from deep inside, and never a half-run scenario.
 */
import {
  requireArray,
  requireBigint,
  requireBoolean,
  requireInteger,
  requireName,
  requireObject,
  requireString,
} from '../arguments.js';
import { ArgumentError } from '../errors.js';
import type { RunEnvironment } from './environment.js';
import { DEVICES, type Scenario } from './scenario.js';

/** A Scenario's shape: the fields every scenario has, with their types; the device known. */
export function requireScenario(scenario: unknown, field = 'scenario'): Scenario {
  const s = requireObject('interop', field, scenario) as Readonly<Record<string, unknown>>;
  for (const key of ['id', 'name', 'title', 'family'] as const)
    requireString('interop', `${field}.${key}`, s[key]);
  requireName('interop', 'device', DEVICES, s.device, `${field}.device`);
  if (s.on !== undefined) {
    const on = requireObject('interop', `${field}.on`, s.on) as Readonly<Record<string, unknown>>;
    for (const key of ['name', 'provider', 'address'] as const)
      requireString('interop', `${field}.on.${key}`, on[key]);
    requireInteger('interop', `${field}.on.gidIndex`, on.gidIndex, -1, 0xffff);
  }
  requireName('interop', 'post path', { legacy: 0, ex: 0 }, s.postPath, `${field}.postPath`);
  if (s.connect !== undefined)
    requireName(
      'interop',
      'connection',
      { 'by-hand': 0, 'rdma-cm': 0 },
      s.connect,
      `${field}.connect`,
    );
  requireBigint('interop', `${field}.initial`, s.initial, 0n, 0xffff_ffff_ffff_ffffn);
  requireArray('interop', `${field}.remoteAccess`, s.remoteAccess);
  let window: number | undefined;
  requireArray('interop', `${field}.program`, s.program).forEach((step, i) => {
    const st = requireObject('interop', `${field}.program[${i}]`, step) as Readonly<
      Record<string, unknown>
    >;
    if (st.do === 'bind-mw')
      window ??= requireInteger('interop', `${field}.program[${i}].type`, st.type, 1, 2);
    // The SRQ steps and the second QP need the scenario's SRQ (its second responder QP).
    const needsSrq =
      st.do === 'srq-limit' ||
      st.do === 'srq-event' ||
      (st.do === 'post-send' && st.qp === 'second');
    if (needsSrq && s.srq !== true)
      throw new ArgumentError(
        'interop',
        `${field}.program[${i}]`,
        `${String(st.do)}${st.do === 'post-send' ? " on qp 'second'" : ''} needs srq: true`,
      );
    // IBTA 1.5 o10-37.2.26: only a bound type 2 window can be invalidated.
    if (st.do === 'local-invalidate' && window !== 2)
      throw new ArgumentError(
        'interop',
        `${field}.program[${i}]`,
        'a local-invalidate needs a type 2 window bound by an earlier bind-mw step (IBTA 1.5 o10-37.2.26)',
      );
  });
  requireBoolean('interop', `${field}.captureWire`, s.captureWire);
  return scenario as Scenario;
}

/** A run's environment: strings and a list of device facts. */
export function requireRunEnvironment(env: unknown, field = 'env'): RunEnvironment {
  const e = requireObject('interop', field, env) as Readonly<Record<string, unknown>>;
  for (const key of ['kernel', 'rdmaCore', 'node'] as const)
    requireString('interop', `${field}.${key}`, e[key]);
  requireArray('interop', `${field}.devices`, e.devices);
  return env as RunEnvironment;
}

/** Scenario results: an array of objects, each with its scenario. */
export function requireResults(results: unknown, field = 'results'): void {
  requireArray('interop', field, results).forEach((r, i) => {
    const result = requireObject('interop', `${field}[${i}]`, r) as Readonly<
      Record<string, unknown>
    >;
    requireScenario(result.scenario, `${field}[${i}].scenario`);
    requireString('interop', `${field}[${i}].verdict`, result.verdict);
  });
}

/** An Outcome: an object of fields (strings). */
export function requireOutcome(field: string, outcome: unknown): void {
  const o = requireObject('interop', field, outcome) as Readonly<Record<string, unknown>>;
  requireObject('interop', `${field}.fields`, o.fields);
}
