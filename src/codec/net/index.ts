/** Ethernet, IPv4, IPv6, UDP and TCP: decoders, encoders and whole-frame builders. */
export * from './address.js';
export * from './build.js';
export * from './bytes.js';
export * from './checksum.js';
export * from './ethernet.js';
export * from './ipv4.js';
export * from './ipv6.js';
export * from './tcp.js';
export * from './udp.js';
