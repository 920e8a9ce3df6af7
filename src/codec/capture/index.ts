/** From capture files to per-message decodes: TCP reassembly and the capture decoder. */
export * from './decode-capture.js';
export * from './lazy-decode.js';
export * from './render.js';
export * from './stream-decode.js';
export * from './summary.js';
export * from './tcp-reassembly.js';
