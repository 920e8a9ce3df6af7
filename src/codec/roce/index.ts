/** RoCEv2 (IBTA Annex A17): BTH opcode table, AETH syndromes, headers, ICRC, packets. */
export * from './aeth.js';
export * from './opcodes.js';
