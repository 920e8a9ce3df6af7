/** Ethernet, IPv4, IPv6, UDP and TCP: decoders, encoders and whole-frame builders. */
export * from './address.js';
export * from './build.js';
export * from './checksum.js';
export * from './ethernet.js';
export * from './frame.js';
export * from './ipv4.js';
export * from './ipv6.js';
export * from './sll.js';
export * from './tcp.js';
export * from './udp.js';
