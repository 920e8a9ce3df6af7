/** `rdma-interop/codec`: wire formats, pure TypeScript, no I/O. */

export * from './crc32c.js';
export * from './errors.js';
export * from './iwarp/index.js';
