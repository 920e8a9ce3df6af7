#!/usr/bin/env node
/**
 * The `rdma-interop` command line. Each subcommand lives in its own file under
 * `commands/` and registers itself on the program; this file only assembles them.
 */
import { Command } from 'commander';
import { registerBench } from './commands/bench.js';
import { registerDecode } from './commands/decode.js';
import { registerDevices } from './commands/devices.js';
import { registerRun } from './commands/run.js';
import { registerSetup } from './commands/setup.js';
import { registerVm } from './commands/vm.js';

const program = new Command()
  .name('rdma-interop')
  .description('RFC 7306 reference codec and engine, checked against real rxe and siw devices')
  .showHelpAfterError();

registerDevices(program);
registerRun(program);
registerDecode(program);
registerBench(program);
registerVm(program);
registerSetup(program);

await program.parseAsync(process.argv);
