/** iWARP reference codec: MPA (RFC 5044/6581), DDP (RFC 5041), RDMAP (RFC 5040, RFC 7306, V2 draft). */
export * from './build.js';
export * from './ddp.js';
export * from './layouts.js';
export * from './lazy.js';
export * from './messages.js';
export * from './mpa.js';
export * from './mpa-frames.js';
export * from './opcodes.js';
export * from './profiles.js';
export * from './rdmap.js';
export * from './stream.js';
export * from './terminate-codes.js';
