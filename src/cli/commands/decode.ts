import type { Command } from 'commander';

/** Registers `rdma-interop decode`. Placeholder until its layer lands. */
export function registerDecode(program: Command): void {
  program
    .command('decode')
    .description('(not implemented yet)')
    .action(() => {
      process.stderr.write('rdma-interop decode: not implemented yet\n');
      process.exitCode = 2;
    });
}
