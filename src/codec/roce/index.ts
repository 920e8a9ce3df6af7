/** RoCEv2 (IBTA Annex A17): BTH opcode table, AETH syndromes, headers, ICRC, packets. */
export * from './aeth.js';
export * from './bth.js';
export * from './frame.js';
export * from './headers.js';
export * from './icrc.js';
export * from './lazy.js';
export * from './opcodes.js';
export * from './packet.js';
