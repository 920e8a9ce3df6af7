import { copyFileSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { type Command, Option } from 'commander';
import { formatValue } from '../../interop/compare.js';
import { renderFindings, renderReport, summaryLine } from '../../interop/report.js';
import { runScenarios, type ScenarioResult } from '../../interop/runner.js';
import { SCENARIOS } from '../../interop/scenarios.js';
import { hostRdmaDevices } from '../../runtime/index.js';
import { onDevicesOrGuest } from '../devices-or-guest.js';

interface RunOptions {
  readonly runtime: 'auto' | 'host' | 'guest';
  readonly filter?: string;
  readonly json?: string;
  readonly list?: boolean;
  readonly timeout: number;
}

/** JSON-safe: bigint as 0x-prefixed 16-digit hex strings. */
function toJson(results: readonly ScenarioResult[]): string {
  return JSON.stringify(
    results,
    (_key, value: unknown) => (typeof value === 'bigint' ? formatValue(value) : value),
    2,
  );
}

async function runHere(options: RunOptions): Promise<number> {
  const chosen = SCENARIOS.filter(
    (s) => options.filter === undefined || s.id.includes(options.filter),
  );
  if (chosen.length === 0) {
    process.stderr.write(`no scenario matches '${options.filter}'\n`);
    return 2;
  }
  process.stderr.write(`interop: ${chosen.length} scenarios on ${hostRdmaDevices().join(', ')}\n`);
  const results = await runScenarios(chosen, (result, index) => {
    process.stderr.write(
      `  [${index + 1}/${chosen.length}] ${result.scenario.id}: ${result.verdict} (${result.seconds.toFixed(2)} s)\n`,
    );
  });
  process.stdout.write(`${renderReport(results)}\n`);
  const findings = renderFindings(results);
  if (findings !== '')
    process.stdout.write(`Known provider behaviour seen in this run:\n${findings}\n`);
  if (options.json !== undefined) writeFileSync(options.json, toJson(results));
  process.stdout.write(`interop: ${summaryLine(results)}\n`);
  return results.every((r) => r.verdict === 'match' || r.verdict === 'known') ? 0 : 1;
}

/** `rdma-interop run`: the interop suite on the default runtime. */
export function registerRun(program: Command): void {
  program
    .command('run')
    .description(
      'run the interop scenarios on the reference engine and on real rxe/siw devices and compare them field by field',
    )
    .addOption(
      new Option(
        '--runtime <where>',
        'host: devices of this machine; guest: the QEMU guest; auto: host if it has devices',
      )
        .choices(['auto', 'host', 'guest'])
        .default('auto'),
    )
    .option('--filter <text>', 'only scenarios whose id contains <text>')
    .option('--json <file>', 'also write the results as JSON')
    .option('--list', 'list the scenarios and exit')
    .option('--timeout <seconds>', 'guest runtime limit', (v) => Number(v), 900)
    .action(async (options: RunOptions) => {
      if (options.list) {
        for (const s of SCENARIOS) process.stdout.write(`${s.id}\t${s.device}\t${s.title}\n`);
        return;
      }
      const guestArgs = ['run', '--runtime', 'host'];
      if (options.filter !== undefined) guestArgs.push('--filter', options.filter);
      // In the guest, the JSON goes to a private share first (the guest writes nothing else
      // the host keeps), and is copied to its place afterwards.
      const share =
        options.json === undefined ? undefined : mkdtempSync(join(tmpdir(), 'rdma-interop-run-'));
      if (share !== undefined) guestArgs.push('--json', join(share, 'interop.json'));
      try {
        process.exitCode = await onDevicesOrGuest(
          {
            where: options.runtime,
            guestArgs,
            timeoutSeconds: options.timeout,
            ...(share === undefined ? {} : { shareDir: share }),
          },
          () => runHere(options),
        );
        const fromGuest = share === undefined ? undefined : join(share, 'interop.json');
        if (fromGuest !== undefined && options.json !== undefined && existsSync(fromGuest)) {
          copyFileSync(fromGuest, resolve(options.json));
        }
      } finally {
        if (share !== undefined) rmSync(share, { recursive: true, force: true });
      }
    });
}
