/** `rdma-interop/codec`: wire formats, pure TypeScript, no I/O. */

export * from './capture/index.js';
export * from './crc32c.js';
export * from './errors.js';
export * from './iwarp/index.js';
export * from './net/index.js';
export * from './pcap/index.js';
export * from './roce/index.js';
