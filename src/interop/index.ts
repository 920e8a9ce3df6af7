/**
 * `rdma-interop/interop`: scenario programs run on the reference engine and on real
 * devices, compared field by field.
 *
 * The curated public surface (issue 25): the scenarios, running and judging them, the
 * recorded behaviour and the reports; the runner's own bookkeeping (work-request ids,
 * buffer layout, observation helpers) stays inside the package.
 * test/host/package/exports.test.ts pins the list.
 */
export { ArgumentError, UnknownNameError } from '../errors.js';
export {
  type FieldKey,
  FieldNameError,
  fieldName,
  parseField,
} from '../judge/observation.js';
export { appliesIn, type BehaviourRecord, type Environment } from '../judge/record.js';
export { KNOWN_BEHAVIOUR } from '../judge/records/index.js';
export type { Verdict } from '../judge/verdict.js';
export type { VersionRange } from '../judge/version-range.js';
export { type EngineAnswer, engineAnswer } from '../probe/engine-peer.js';
export { WIRE_PROBES, type WireProbe } from '../probe/wire-probes.js';
export { compareOutcomes, type FieldDifference } from './compare.js';
export {
  COMPARISON_SCHEMA,
  type ComparedField,
  type ComparedRun,
  type Comparison,
  compareReports,
  ReportInputError,
  type ReportRun,
  readReports,
  renderComparisonMarkdown,
} from './comparison/index.js';
export type { DeviceDescription } from './device-description.js';
export {
  collectEnvironment,
  type DeviceFacts,
  environmentFor,
  type RunEnvironment,
} from './environment.js';
export { expectedOutcome } from './expected.js';
export {
  OPERATION_TRAITS,
  type Operand,
  type OperandValues,
  type OperationKind,
  type OperationTraits,
} from './operations.js';
export {
  renderMarkdown,
  renderMatrix,
  renderReport,
  summaryLine,
} from './report.js';
export { junitXml, RESULTS_SCHEMA, resultsDocument, writeReport } from './report-files.js';
export {
  CAPABILITIES,
  type Capability,
  type DeviceOffer,
  missingOf,
  PROFILES,
  type Requirements,
  requirementsOf,
  TRANSPORTS,
  type TransportFamily,
} from './requirements.js';
export { planRun, type RunPlan } from './run-plan.js';
export {
  type Executor,
  type JudgedDifference,
  judge,
  passed,
  runScenario,
  runScenarios,
  type ScenarioResult,
} from './runner.js';
export {
  DEVICES,
  type DeviceName,
  type Operation,
  type Outcome,
  type Scenario,
  type Side,
  type Step,
  type Transport,
} from './scenario.js';
export { SCENARIOS } from './scenarios.js';
