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
  if (s.ud !== undefined) requireBoolean('interop', `${field}.ud`, s.ud);
  requireArray('interop', `${field}.program`, s.program).forEach((step, i) => {
    const st = requireObject('interop', `${field}.program[${i}]`, step) as Readonly<
      Record<string, unknown>
    >;
    requireUdStep(s.ud === true, s.srq === true, st, `${field}.program[${i}]`);
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

/** The steps a UD program (scenario.ts `ud`) may have: multicast, Sends, receives, waits. */
const UD_STEPS: Readonly<Record<string, true>> = {
  'attach-mcast': true,
  'detach-mcast': true,
  'post-send': true,
  'post-recv': true,
  wait: true,
  query: true,
  sleep: true,
};
const UD_KINDS: Readonly<Record<string, true>> = { SEND: true, SEND_WITH_IMM: true };
const QPS = { first: 0, second: 0 } as const;
const MCAST_TARGETS = { g1: 0, g2: 0, unicast: 0 } as const;

/**
 * A step's multicast parts: the group an attach or detach names, the receiving QP a UD
 * program's receive or wait names, the group a UD Send goes to; and what a UD program
 * cannot do (RDMA, windows, an SRQ, a post on the responder).
 */
function requireUdStep(
  ud: boolean,
  srq: boolean,
  st: Readonly<Record<string, unknown>>,
  at: string,
): void {
  const refuse = (why: string) => new ArgumentError('interop', at, why);
  if (st.do === 'attach-mcast' || st.do === 'detach-mcast')
    requireName('interop', 'multicast group', MCAST_TARGETS, st.group, `${at}.group`);
  if (
    (st.do === 'post-recv' || st.do === 'wait' || String(st.do).endsWith('-mcast')) &&
    st.qp !== undefined
  ) {
    requireName('interop', 'QP', QPS, st.qp, `${at}.qp`);
    if (!ud) throw refuse(`${String(st.do)} names a receiving QP: only a ud scenario has two`);
  }
  if (!ud) {
    if (
      st.do === 'post-send' &&
      Array.isArray(st.wrs) &&
      st.wrs.some((wr) => wr?.group !== undefined)
    )
      throw refuse('a Send to a multicast group needs ud: true');
    return;
  }
  if (srq) throw refuse('a ud scenario has no SRQ');
  if (UD_STEPS[String(st.do)] !== true) throw refuse(`a ud program has no ${String(st.do)} step`);
  if (st.do !== 'post-send') return;
  if (st.side === 'responder' || st.qp !== undefined)
    throw refuse('a ud program posts on its requester QP only');
  requireArray('interop', `${at}.wrs`, st.wrs).forEach((wr, j) => {
    const w = requireObject('interop', `${at}.wrs[${j}]`, wr) as Readonly<Record<string, unknown>>;
    if (UD_KINDS[String(w.kind)] !== true)
      throw refuse(`a ud program sends SEND or SEND_WITH_IMM only, not ${String(w.kind)}`);
    if (w.group !== undefined)
      requireName('interop', 'multicast group', { g1: 0, g2: 0 }, w.group, `${at}.wrs[${j}].group`);
  });
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
