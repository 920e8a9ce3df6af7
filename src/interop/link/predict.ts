/**
 * What the engine says a link scenario puts on the wire and shows the program.
 *
 * RoCEv2: both directions as the engine projects them (engine/projection/roce-exchange.ts),
 * from the requester's first PSN, with the link responder's min_rnr_timer.
 *
 * iWARP: the engine's message lines for the scenario (expected.ts), as the one-guest suite
 * compares them.
 */
import { projectRoceExchange } from '../../engine/projection/roce-exchange.js';
import { formatValue } from '../compare-format.js';
import { ENGINE_REGIONS, expectedOutcome, verbsScenarioOf } from '../expected.js';
import { DEFAULT_TARGET, DEVICES, type Outcome, type Scenario } from '../scenario.js';
import { lostWireOf, writeStreamOf } from './fault-scenarios.js';
import { type RocePacketView, roceWireFields } from './roce-fields.js';
import { LINK_MIN_RNR_TIMER, LINK_REQUESTER_PSN } from './scenarios.js';
import { expectedStreamFields } from './stream-outcome.js';

/** The engine's stand-in QP numbers (any distinct values; fields name QPs by role). */
export const ENGINE_QPS = { requester: 0x000111, responder: 0x000222 } as const;

/** rxe's path MTU for the link QPs (connectRcByHand default). */
const MTU = 1024;

/** The verbs fields of the program the link observes (the rest of a program is not run). */
export const LINK_VERBS_FIELD =
  /^(post1(\.bad_wr)?|requester\.wc\d+\.(wr|status|fetched)|requester\.wc\d+\.after|mem\[-?\d+\]|hammer\d+\.(post|succeeded|distinct|sequence)|ordering)$/;

function pick(fields: Readonly<Record<string, string>>, pattern: RegExp): Record<string, string> {
  return Object.fromEntries(Object.entries(fields).filter(([name]) => pattern.test(name)));
}

/** The RoCEv2 packets the engine predicts, both directions (ICRC valid). */
export function predictRocePackets(scenario: Scenario): {
  requests: RocePacketView[];
  responses: RocePacketView[];
} {
  const remote = ENGINE_REGIONS.find((r) => r.name === 'remote');
  if (remote === undefined) throw new Error('the engine has no remote region');
  const { requests, responses } = projectRoceExchange(verbsScenarioOf(scenario), {
    requesterQp: ENGINE_QPS.requester,
    responderQp: ENGINE_QPS.responder,
    firstPsn: LINK_REQUESTER_PSN,
    mtu: MTU,
    minRnrTimer: LINK_MIN_RNR_TIMER,
    remote,
  });
  const valid = (p: (typeof requests)[number]): RocePacketView => ({ ...p, icrc: 'valid' });
  return { requests: requests.map(valid), responses: responses.map(valid) };
}

/** The engine's outcome of a link scenario: the verbs fields the link observes, the wire. */
export function expectedLinkOutcome(scenario: Scenario): Outcome {
  // A write stream runs outside the step program: its own fields (stream-outcome.ts).
  const stream = writeStreamOf(scenario);
  if (stream !== undefined) return { fields: expectedStreamFields(scenario, stream) };
  const expected = expectedOutcome(scenario);
  const fields = pick(expected.fields, LINK_VERBS_FIELD);
  // A faulty-wire scenario (fault-scenarios.ts) compares the verbs side only.
  const lost = lostWireOf(scenario);
  if (lost !== undefined)
    // Nothing crosses: the request is never executed, the requester gives up (IBTA 9.7.6.1.4).
    Object.assign(fields, {
      'requester.wc1.status': 'RETRY_EXC_ERR',
      'requester.wc1.after': '(1 + retry_cnt) x timeout',
      [`mem[${DEFAULT_TARGET}]`]: formatValue(scenario.initial),
    });
  if (lost !== undefined) delete fields['requester.wc1.fetched'];
  if (!scenario.captureWire) return { fields };
  if (DEVICES[scenario.device].transport === 'roce') {
    const { requests, responses } = predictRocePackets(scenario);
    Object.assign(fields, roceWireFields(requests, responses, ENGINE_QPS, ENGINE_REGIONS));
  } else if (expected.fields.wire !== undefined) {
    fields.wire = expected.fields.wire;
  }
  return expected.note === undefined ? { fields } : { fields, note: expected.note };
}
