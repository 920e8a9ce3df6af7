/**
 * Which scenarios run on which device (issue 37): each selected scenario on every given
 * device of its transport, bound to it (scenario.ts `on`). A device that lacks what the
 * scenario needs (requirements.ts) gets a `not-applicable` result naming what it lacks,
 * unless a record of its provider covers the scenario there: then the scenario runs,
 * because the record is the device's recorded refusal and the run checks it still holds
 * (stock siw refuses the RFC 7306 Atomics; rxe before 6.2 refuses ATOMIC WRITE).
 */
import { requireArray } from '../arguments.js';
import { appliesIn, type BehaviourRecord, coversScenario } from '../judge/record.js';
import { KNOWN_BEHAVIOUR } from '../judge/records/index.js';
import type { DeviceDescription } from './device-description.js';
import { missingOf, requirementsOf } from './requirements.js';
import type { ScenarioResult } from './runner.js';
import { bindScenario, DEVICES, type Scenario } from './scenario.js';

export interface RunPlan {
  /** The scenarios to run, each bound to its device. */
  readonly runs: readonly Scenario[];
  /** One result per scenario a device of its transport cannot run. */
  readonly notApplicable: readonly ScenarioResult[];
  /** Scenarios of a transport no given device speaks (not selected, counted). */
  readonly otherTransport: number;
}

/** `scenario` on `device`: itself on its own reference target, else bound to the device. */
function boundTo(scenario: Scenario, device: DeviceDescription): Scenario {
  if (device.name === scenario.device && device.address === DEVICES[scenario.device].address)
    return scenario;
  return bindScenario(scenario, {
    name: device.name,
    provider: device.provider,
    address: device.address,
    gidIndex: device.gidIndex,
  });
}

/** The not-applicable result of `scenario` on `device`, which lacks `missing`. */
export function notApplicableResult(
  scenario: Scenario,
  missing: readonly string[],
): ScenarioResult {
  return {
    scenario,
    verdict: 'not-applicable',
    engine: { fields: {} },
    kernel: undefined,
    differences: [],
    findings: [],
    stale: [],
    seconds: 0,
    notApplicable: missing,
  };
}

/** Binds `scenarios` to `devices` (in the devices' order), for a run on `kernel`/`rdmaCore`. */
export function planRun(
  scenarios: readonly Scenario[],
  devices: readonly DeviceDescription[],
  run: { readonly kernel: string; readonly rdmaCore: string },
  known: readonly BehaviourRecord[] = KNOWN_BEHAVIOUR,
): RunPlan {
  requireArray('interop', 'scenarios', scenarios);
  requireArray('interop', 'devices', devices);
  const runs: Scenario[] = [];
  const notApplicable: ScenarioResult[] = [];
  let otherTransport = 0;
  for (const scenario of scenarios) {
    const needs = requirementsOf(scenario);
    const candidates = devices.filter((d) => d.transport === needs.transport);
    if (candidates.length === 0) otherTransport++;
    for (const device of candidates) {
      const bound = boundTo(scenario, device);
      const missing = missingOf(needs, device);
      const env = { provider: device.provider, kernel: run.kernel, rdmaCore: run.rdmaCore };
      const recorded = known.some((k) => appliesIn(k, env) && coversScenario(k, scenario.id));
      if (missing.length === 0 || recorded) runs.push(bound);
      else notApplicable.push(notApplicableResult(bound, missing));
    }
  }
  return { runs, notApplicable, otherTransport };
}
