import type { Command } from 'commander';

/** Registers `rdma-interop devices`. Placeholder until its layer lands. */
export function registerDevices(program: Command): void {
  program
    .command('devices')
    .description('(not implemented yet)')
    .action(() => {
      process.stderr.write('rdma-interop devices: not implemented yet\n');
      process.exitCode = 2;
    });
}
