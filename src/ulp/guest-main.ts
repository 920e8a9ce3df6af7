/**
 * The guest side of `rdma-interop ulp`: `node dist/ulp/guest-main.js <out> <workloads>
 * <devices> <mib> <files>` runs the workloads on the guest's devices and writes
 * `<out>/workloads.json` (the results) and the pcaps into `<out>`. Progress on stderr.
 * Only the host's own CLI starts it, with arguments it checked (src/ulp/run.ts).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runWorkloadsHere } from './guest-run.js';
import {
  ULP_DEVICE_NAMES,
  ULP_WORKLOAD_NAMES,
  type UlpDeviceName,
  type UlpWorkloadName,
} from './workloads.js';

function listOf<T extends string>(value: string | undefined, known: readonly T[]): T[] {
  const names = (value ?? '').split(',').filter((n) => n !== '');
  for (const n of names)
    if (!(known as readonly string[]).includes(n)) throw new Error(`unknown name '${n}'`);
  return names as T[];
}

async function main(): Promise<void> {
  const [out, workloads, devices, mib, files] = process.argv.slice(2);
  if (out === undefined)
    throw new Error('usage: guest-main.js <out> <workloads> <devices> <mib> <files>');
  const results = await runWorkloadsHere(
    listOf<UlpWorkloadName>(workloads, ULP_WORKLOAD_NAMES),
    listOf<UlpDeviceName>(devices, ULP_DEVICE_NAMES),
    {
      sizes: { mib: Number(mib ?? 8), files: Number(files ?? 64) },
      pcapDir: out,
      onLine: (l) => process.stderr.write(`${l}\n`),
    },
  );
  writeFileSync(join(out, 'workloads.json'), `${JSON.stringify(results, null, 2)}\n`);
}

main().catch((e: unknown) => {
  process.stderr.write(`ulp guest side: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exitCode = 1;
});
