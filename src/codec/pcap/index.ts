/** Capture files: classic pcap and pcapng, read and write. */
export * from './linktype.js';
export * from './pcap.js';
