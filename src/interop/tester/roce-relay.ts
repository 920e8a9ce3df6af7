/**
 * The tester's end of the wire, run inside its own network namespace
 * (`ip netns exec <ns> node roce-relay.js <device address>`): a UDP socket on port 4791
 * that sends the hex lines it reads on stdin to the device, and writes every datagram it
 * receives to stdout as `<hex>` lines. The tester's logic stays in the parent process
 * (which holds the device's verbs resources), so one process sees both sides.
 */
import { createSocket } from 'node:dgram';
import { createInterface } from 'node:readline';

const destination = process.argv[2] ?? '203.0.113.1';
const port = 4791;
const socket = createSocket('udp4');
socket.on('message', (message) => {
  process.stdout.write(`${message.toString('hex')}\n`);
});
socket.on('error', (error) => {
  process.stderr.write(`relay: ${error.message}\n`);
  process.exit(1);
});
socket.bind(port, () => {
  process.stdout.write('ready\n');
  const lines = createInterface({ input: process.stdin });
  lines.on('line', (line) => {
    const hex = line.trim();
    if (hex === '') return;
    socket.send(Buffer.from(hex, 'hex'), port, destination);
  });
  lines.on('close', () => socket.close());
});
