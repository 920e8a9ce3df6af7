import { copyFileSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { type Command, Option } from 'commander';
import { formatValue } from '../../interop/compare.js';
import { WIRE_PROBES } from '../../interop/peer/probes.js';
import { type ProbeResult, runProbe } from '../../interop/peer/run-probes.js';
import {
  renderFindings,
  renderProbeReport,
  renderReport,
  summaryLine,
} from '../../interop/report.js';
import { runScenarios } from '../../interop/runner.js';
import { SCENARIOS } from '../../interop/scenarios.js';
import { hostRdmaDevices } from '../../runtime/index.js';
import { onDevicesOrGuest } from '../devices-or-guest.js';
import { positiveSeconds } from '../options.js';

interface RunOptions {
  readonly runtime: 'auto' | 'host' | 'guest';
  readonly filter?: string;
  readonly json?: string;
  readonly list?: boolean;
  readonly timeout: number;
}

/** JSON-safe: bigint as 0x-prefixed 16-digit hex strings. */
function toJson(results: unknown): string {
  return JSON.stringify(
    results,
    (_key, value: unknown) => (typeof value === 'bigint' ? formatValue(value) : value),
    2,
  );
}

async function runHere(options: RunOptions): Promise<number> {
  const wanted = (id: string) => options.filter === undefined || id.includes(options.filter);
  const chosen = SCENARIOS.filter((s) => wanted(s.id));
  // The wire probes need siw0 (our userspace iWARP peer talks to it over TCP).
  const probes = hostRdmaDevices().includes('siw0') ? WIRE_PROBES.filter((p) => wanted(p.id)) : [];
  if (chosen.length + probes.length === 0) {
    process.stderr.write(`no scenario or probe matches '${options.filter}'\n`);
    return 2;
  }
  process.stderr.write(
    `interop: ${chosen.length} scenarios, ${probes.length} wire probes on ${hostRdmaDevices().join(', ')}\n`,
  );
  const results = await runScenarios(chosen, (result, index) => {
    process.stderr.write(
      `  [${index + 1}/${chosen.length}] ${result.scenario.id}: ${result.verdict} (${result.seconds.toFixed(2)} s)\n`,
    );
  });
  const probeResults: ProbeResult[] = [];
  for (const probe of probes) {
    const result = await runProbe(probe);
    probeResults.push(result);
    process.stderr.write(`  [probe] ${probe.id}: ${result.verdict}\n`);
  }
  if (results.length > 0) process.stdout.write(`${renderReport(results)}\n`);
  if (probeResults.length > 0) process.stdout.write(`${renderProbeReport(probeResults)}\n`);
  const findings = renderFindings(results, probeResults);
  if (findings !== '')
    process.stdout.write(`Known provider behaviour seen in this run:\n${findings}\n`);
  if (options.json !== undefined)
    writeFileSync(options.json, toJson({ scenarios: results, probes: probeResults }));
  const verdicts = [...results, ...probeResults].map((r) => r.verdict);
  process.stdout.write(`interop: ${summaryLine(verdicts)}\n`);
  return verdicts.every((v) => v === 'match' || v === 'known') ? 0 : 1;
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
    .option('--timeout <seconds>', 'guest runtime limit', positiveSeconds, 900)
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
