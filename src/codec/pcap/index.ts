/** Capture files: classic pcap and pcapng, read and write. */
export * from './capture.js';
export * from './linktype.js';
export * from './pcap.js';
export * from './pcapng.js';
export * from './record-length.js';
export * from './record-stream.js';
