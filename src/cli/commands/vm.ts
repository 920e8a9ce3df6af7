import type { Command } from 'commander';

/** Registers `rdma-interop vm`. Placeholder until its layer lands. */
export function registerVm(program: Command): void {
  program
    .command('vm')
    .description('(not implemented yet)')
    .action(() => {
      process.stderr.write('rdma-interop vm: not implemented yet\n');
      process.exitCode = 2;
    });
}
