#!/usr/bin/env node
/**
 * `npm run fuzz`: the CI fuzz test's generators and harness (run.ts) for as many inputs as
 * asked (10^6 by default), with figures: inputs, accepted inputs and distinct error kinds
 * per target, inputs per second, the seed and how to repeat the run. Exit status 1 when a
 * property broke.
 */
import Table from 'cli-table3';
import { Command, InvalidArgumentError } from 'commander';
import { rotatingSeed } from './random.js';
import { rerunCommand, runFuzz, type TargetFigures } from './run.js';

function integer(text: string): number {
  const n = Number(text);
  if (!Number.isSafeInteger(n) || n < 0) throw new InvalidArgumentError('a non-negative integer');
  return n;
}

const program = new Command('fuzz')
  .description('fuzz every public decoder of rdma-interop/codec and the engine receiveSegment')
  .option('--seed <n>', 'seed (default: a new one each run, printed)', integer)
  .option('--inputs <n>', 'inputs in total, split evenly over the targets', integer, 1_000_000)
  .option('--only <names...>', 'only the targets whose name contains one of these')
  .action((o: { seed?: number; inputs: number; only?: string[] }) => {
    const seed = (o.seed ?? rotatingSeed()) >>> 0;
    console.log(`fuzz: seed ${seed}, ${o.inputs} inputs; to repeat: ${rerunCommand(seed)}`);
    const rate = (f: TargetFigures) => Math.round(f.inputs / (f.milliseconds / 1000));
    const report = runFuzz({
      seed,
      inputs: o.inputs,
      ...(o.only === undefined ? {} : { only: o.only }),
      onTarget: (f) =>
        console.log(
          `  ${f.target}: ${f.inputs} inputs, ${rate(f)}/s, ${f.errorKinds.size} error kinds${f.failures.length > 0 ? `, ${f.failures.length} FAILURES` : ''}`,
        ),
    });
    const table = new Table({
      head: ['target', 'inputs', 'accepted', 'error kinds', 'inputs/s', 'failures'],
    });
    for (const f of report.targets)
      table.push([f.target, f.inputs, f.accepted, f.errorKinds.size, rate(f), f.failures.length]);
    const seconds = report.milliseconds / 1000;
    table.push([
      'all',
      report.inputs,
      report.targets.reduce((n, f) => n + f.accepted, 0),
      report.errorKinds.size,
      Math.round(report.inputs / seconds),
      report.failures.length,
    ]);
    console.log(table.toString());
    console.log(
      `fuzz: seed ${seed}: ${report.inputs} inputs in ${seconds.toFixed(1)} s, ${report.errorKinds.size} distinct error kinds, ${report.failures.length} failures`,
    );
    for (const f of report.failures) {
      console.log(`FAIL ${f.target} #${f.index} (variant ${f.variant}): ${f.problem}`);
      console.log(`  input ${f.inputHex}`);
      console.log(`  rerun: ${rerunCommand(f.seed, f.target)}`);
    }
    process.exitCode = report.failures.length > 0 ? 1 : 0;
  });

program.parse();
