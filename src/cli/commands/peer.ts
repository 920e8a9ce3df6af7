/**
 * `rdma-interop peer serve --device <name>`: the responder half of the link scenarios on
 * this host, for one `rdma-interop run --device <name> --peer <this host>` elsewhere
 * (src/interop/peer/peer.ts): for devices that cannot talk to themselves (docs/nic.md).
 */

import { isIP } from 'node:net';
import { type Command, InvalidArgumentError, Option } from 'commander';
import { CONTROL_PORT } from '../../interop/link/protocol.js';
import { servePeer } from '../../interop/peer/peer.js';
import { timeoutOption } from '../options.js';
import { parseAddress, parseDeviceName, parseGidIndex } from './run.js';

export interface PeerServeCliOptions {
  readonly device: string;
  readonly address?: string;
  readonly gidIndex?: number;
  readonly listen?: string;
  readonly port: number;
  readonly timeout: number;
}

/** commander argument parser for `--port <n>`. */
function parsePort(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < 1 || n > 65535)
    throw new InvalidArgumentError('a TCP port is an integer 1-65535');
  return n;
}

/** commander argument parser for `--listen <ip>`. */
function parseListen(value: string): string {
  if (isIP(value) === 0)
    throw new InvalidArgumentError('an IPv4 or IPv6 address of this host to listen on');
  return value;
}

export function registerPeer(program: Command): void {
  const peer = program
    .command('peer')
    .description('the other host of a two-host run (run --device <name> --peer <host>)');
  peer
    .command('serve')
    .description(
      "serve the responder side of the link scenarios on one device of this host, for one 'run --device <name> --peer <this host>'; ends when that run ends",
    )
    .addOption(
      new Option('--device <name>', 'the RDMA device to serve (rdma dev show)')
        .argParser(parseDeviceName)
        .makeOptionMandatory(),
    )
    .addOption(
      new Option(
        '--address <ip>',
        "the address of the device's netdev to use (default: its first RoCE v2 IPv4 GID's, an iWARP netdev's first IPv4)",
      ).argParser(parseAddress),
    )
    .addOption(
      new Option('--gid-index <n>', 'the GID index of port 1 to use (ibv_devinfo -v)').argParser(
        parseGidIndex,
      ),
    )
    .addOption(
      new Option(
        '--listen <ip>',
        'the address the control connection listens on (default: every address)',
      ).argParser(parseListen),
    )
    .addOption(
      new Option('--port <n>', 'the control connection TCP port')
        .argParser(parsePort)
        .default(CONTROL_PORT),
    )
    .addOption(timeoutOption('how long to wait for the requester and each of its steps', 600))
    .action(async (options: PeerServeCliOptions) => {
      await servePeer({
        device: options.device,
        ...(options.address === undefined ? {} : { address: options.address }),
        ...(options.gidIndex === undefined ? {} : { gidIndex: options.gidIndex }),
        ...(options.listen === undefined ? {} : { listen: options.listen }),
        port: options.port,
        timeoutSeconds: options.timeout,
        onListening: (port, d) =>
          process.stderr.write(
            `peer: serving ${d.name} (${d.transport}, ${d.provider}, ${d.address}) on control port ${port}\n`,
          ),
      });
      process.stderr.write('peer: the requester said bye\n');
    });
}
