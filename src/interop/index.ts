/**
 * `rdma-interop/interop`: scenarios run on the reference engine and on real devices,
 * compared field by field.
 */
export * from './compare.js';
export * from './expected.js';
export * from './known-behaviour.js';
export * from './report.js';
export * from './runner.js';
export * from './scenario.js';
export * from './scenarios.js';
