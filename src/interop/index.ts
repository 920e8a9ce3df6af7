/**
 * `rdma-interop/interop`: scenario programs run on the reference engine and on real
 * devices, compared field by field.
 */
export * from './compare.js';
export * from './environment.js';
export * from './expected.js';
export * from './known-behaviour.js';
export * from './observe.js';
export * from './operations.js';
export * from './peer/engine-peer.js';
export * from './peer/probes.js';
export * from './peer/run-probes.js';
export * from './report.js';
export * from './report-files.js';
export * from './runner.js';
export * from './scenario.js';
export * from './scenarios.js';
export * from './wire.js';
