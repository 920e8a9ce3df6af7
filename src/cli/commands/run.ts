import type { Command } from 'commander';

/** Registers `rdma-interop run`. Placeholder until its layer lands. */
export function registerRun(program: Command): void {
  program
    .command('run')
    .description('(not implemented yet)')
    .action(() => {
      process.stderr.write('rdma-interop run: not implemented yet\n');
      process.exitCode = 2;
    });
}
