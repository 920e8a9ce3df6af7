/** rdma-core's own tests as a second oracle (issue 36): run, judge, report, compare. */
export { type ReportTest, renderTestsTable, reportTestsOf, TEST_FIELD } from './compare.js';
export {
  explainingRecord,
  type JudgedTest,
  judgeTests,
  providerOf,
  TEST_VERDICTS,
  type TestEnvironment,
  type TestVerdict,
  testPassed,
} from './judge.js';
export { RDMA_CORE_TEST_RECORDS } from './records.js';
export {
  countVerdicts,
  skipReasons,
  type TestRun,
  testJunitXml,
  testMarkdown,
  testResultsDocument,
  verdictCounts,
  writeTestReport,
} from './report.js';
export {
  OUTCOMES,
  type Outcome,
  parseRunnerOutput,
  type RdmaCoreTestResult,
  RdmaCoreTestsError,
  type RunnerEnvironment,
  type RunnerOutput,
} from './result.js';
export { collectRun, listTests, runTestsHere, runTestsInGuest } from './run.js';
export {
  guestScript,
  PER_TEST_TIMEOUT_SECONDS,
  RDMA_CORE_TESTS_VERSION,
  runnerArgs,
  TEST_DEVICES,
  type TestPaths,
  testEnvironment,
  testPaths,
  VENDOR_MODULES,
} from './runner-command.js';
