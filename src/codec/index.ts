/** `rdma-interop/codec`: wire formats, pure TypeScript, no I/O. */
export * from './errors.js';
export * from './iwarp/index.js';
export * from './crc32c.js';
