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
import { type CompletionPart, fieldName, tryParseField } from '../../judge/observation.js';
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

/**
 * True for a verbs field of the program the link observes (the rest of a program is not
 * run): the first post, the requester's completions (which request, its status, the
 * fetched word, a lost request's retry time), the memory words, the concurrency step and
 * the ordering verdict.
 */
export function isLinkVerbsField(name: string): boolean {
  const key = tryParseField(name);
  switch (key?.kind) {
    case 'post':
      return key.n === 1;
    case 'completion':
      return key.side === 'requester' && LINK_COMPLETION_PARTS.has(key.part);
    case 'memory':
    case 'hammer':
    case 'ordering':
      return true;
    default:
      return false;
  }
}

const LINK_COMPLETION_PARTS: ReadonlySet<CompletionPart> = new Set([
  'wr',
  'status',
  'fetched',
  'after',
]);

function pick(
  fields: Readonly<Record<string, string>>,
  keep: (name: string) => boolean,
): Record<string, string> {
  return Object.fromEntries(Object.entries(fields).filter(([name]) => keep(name)));
}

/** The field of the requester's first completion's `part`. */
function firstCompletion(part: CompletionPart): string {
  return fieldName({ kind: 'completion', side: 'requester', n: 1, part });
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
  const fields = pick(expected.fields, isLinkVerbsField);
  // A faulty-wire scenario (fault-scenarios.ts) compares the verbs side only.
  const lost = lostWireOf(scenario);
  if (lost !== undefined)
    // Nothing crosses: the request is never executed, the requester gives up (IBTA 9.7.6.1.4).
    Object.assign(fields, {
      [firstCompletion('status')]: 'RETRY_EXC_ERR',
      [firstCompletion('after')]: '(1 + retry_cnt) x timeout',
      [fieldName({ kind: 'memory', offset: DEFAULT_TARGET })]: formatValue(scenario.initial),
    });
  if (lost !== undefined) delete fields[firstCompletion('fetched')];
  if (!scenario.captureWire) return { fields };
  if (DEVICES[scenario.device].transport === 'roce') {
    const { requests, responses } = predictRocePackets(scenario);
    Object.assign(fields, roceWireFields(requests, responses, ENGINE_QPS, ENGINE_REGIONS));
  } else if (expected.fields.wire !== undefined) {
    fields.wire = expected.fields.wire;
  }
  return expected.note === undefined ? { fields } : { fields, note: expected.note };
}
