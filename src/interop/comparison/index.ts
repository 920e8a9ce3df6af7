/** Comparing any number of `--report` runs: read, merge, render (`rdma-interop compare`). */
export { renderComparisonMarkdown } from './markdown.js';
export {
  ABSENT,
  COMPARISON_SCHEMA,
  type ComparedField,
  type ComparedRun,
  type Comparison,
  compareReports,
} from './merge.js';
export {
  ReportInputError,
  type ReportRun,
  type ReportScenario,
  readReports,
  reportRunOf,
} from './read.js';
export { writeComparison } from './write.js';
