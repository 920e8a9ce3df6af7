/**
 * `rdma-interop/engine`: the reference RNIC for RFC 7306 (iWARP Atomics and Immediate
 * Data) and the V2 draft — Responder, Requester, Terminate generation, ordering rules,
 * and the verbs-level outcome of work requests on iWARP and RoCEv2. Pure TypeScript,
 * deterministic, no I/O.
 */
export * from './atomic/masked-arith.js';
export * from './errors/decode-failure.js';
export * from './errors/failure-table.js';
export * from './errors/terminate.js';
export * from './memory/byte-order.js';
export * from './memory/tagged-buffer.js';
export * from './ordering/checker.js';
export * from './ordering/rules.js';
export * from './projection/project.js';
export * from './projection/terminate-status.js';
export * from './projection/trace.js';
export * from './projection/work-completion.js';
export * from './requester/requester.js';
export * from './requester/to-iwarp.js';
export * from './requester/to-roce.js';
export * from './requester/work-request.js';
export * from './requirements/extract.js';
export * from './requirements/requirements.js';
export * from './requirements/traceability.js';
export * from './responder/execute-atomic.js';
export * from './responder/responder.js';
export * from './responder/types.js';
export * from './verbs-model/index.js';
export * from './wire/build.js';
