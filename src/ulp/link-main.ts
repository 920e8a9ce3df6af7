/**
 * The guest side of `rdma-interop ulp --link`, in both guests of the pair
 * (src/runtime/pair.ts boots them; src/ulp/link-run.ts starts this):
 *   link-main.js <A|B> <share> <workloads> <devices> <mib> <files>
 * Guest B sets up each workload's target on its own link address and serves; guest A
 * waits until B's target is up, marks the start and end of the workload on the link (so
 * that the host can cut the link's capture per workload: link-split.ts), runs the
 * initiator against B's address, and says when it is done. The handshake is files in the
 * share both guests mount (`<share>/ulp-sync/<workload>-<device>.ready|.failed|.done`):
 * nothing of it crosses the link, so a faulty wire cannot lose it. Each guest writes its
 * results to `<share>/ulp-<guest>.json`; progress goes to stderr.
 */
import { createSocket } from 'node:dgram';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { release } from 'node:os';
import { join } from 'node:path';
import { runWorkloadHere } from './guest-run.js';
import { linkMarker, ULP_PAIR_ADDRESSES } from './link-split.js';
import {
  ULP_DEVICE_NAMES,
  ULP_LINK_WORKLOADS,
  ULP_WORKLOAD_NAMES,
  type UlpDeviceName,
  type UlpWorkloadName,
  type WorkloadResult,
} from './workloads.js';

/** How long the initiator waits for the target to come up (TCG: modules, configfs, nfsd). */
const TARGET_READY_MS = 300_000;

function listOf<T extends string>(value: string | undefined, known: readonly T[]): T[] {
  const names = (value ?? '').split(',').filter((n) => n !== '');
  for (const n of names)
    if (!(known as readonly string[]).includes(n)) throw new Error(`unknown name '${n}'`);
  return names as T[];
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Three copies of a marker datagram to the discard port (the faulty wire may drop one). */
async function sendMarker(to: string, text: string): Promise<void> {
  const socket = createSocket('udp4');
  try {
    for (let i = 0; i < 3; i++) {
      await new Promise<void>((resolve) => socket.send(Buffer.from(text), 9, to, () => resolve()));
      await sleep(20);
    }
  } finally {
    socket.close();
  }
}

async function waitForEither(files: readonly string[], ms: number): Promise<string | undefined> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    const found = files.find((f) => existsSync(f));
    if (found !== undefined) return found;
    await sleep(200);
  }
  return undefined;
}

async function main(): Promise<void> {
  const [guest, share, workloadList, deviceList, mib, files] = process.argv.slice(2);
  if ((guest !== 'A' && guest !== 'B') || share === undefined)
    throw new Error('usage: link-main.js <A|B> <share> <workloads> <devices> <mib> <files>');
  const workloads = listOf<UlpWorkloadName>(workloadList, ULP_WORKLOAD_NAMES);
  const devices = listOf<UlpDeviceName>(deviceList, ULP_DEVICE_NAMES);
  const sizes = { mib: Number(mib ?? 8), files: Number(files ?? 64) };
  const kernel = release();
  const syncDir = join(share, 'ulp-sync');
  mkdirSync(syncDir, { recursive: true });
  const out = join(share, `ulp-${guest}.json`);
  const results: WorkloadResult[] = [];
  const onLine = (l: string) => process.stderr.write(`${l}\n`);
  for (const workload of workloads)
    for (const device of devices) {
      const key = `${workload}-${device}`;
      const sync = join(syncDir, key);
      const target = ULP_PAIR_ADDRESSES[device].B;
      if (!ULP_LINK_WORKLOADS.includes(workload)) {
        results.push({
          workload,
          device,
          kernel,
          outcome: 'not-run',
          reason: `not across the link yet: the link runs ${ULP_LINK_WORKLOADS.join(' and ')} (their scripts split target and initiator); ${workload} runs in one guest`,
          facts: {},
          dmesgTrouble: [],
          seconds: 0,
          wire: { notCaptured: 'not run' },
        });
        continue;
      }
      if (guest === 'B') {
        onLine(`ulp link: ${key}: target on ${target}`);
        const r = await runWorkloadHere(workload, device, {
          kernel,
          sizes,
          onLine,
          link: { role: 'target', address: target, sync },
        });
        // A target that never came up: tell the initiator so that it does not wait.
        if (!existsSync(`${sync}.ready`))
          writeFileSync(`${sync}.failed`, `${r.reason ?? r.outcome}\n`);
        results.push(r);
      } else {
        const ready = await waitForEither([`${sync}.ready`, `${sync}.failed`], TARGET_READY_MS);
        if (ready !== `${sync}.ready`) {
          results.push({
            workload,
            device,
            kernel,
            outcome: 'failed',
            reason:
              ready === undefined
                ? `the target in guest B was not up within ${TARGET_READY_MS / 1000} s`
                : 'the target in guest B failed (its reason is in its entry)',
            facts: {},
            dmesgTrouble: [],
            seconds: 0,
            wire: { notCaptured: 'not run' },
          });
          writeFileSync(`${sync}.done`, '');
          continue;
        }
        onLine(`ulp link: ${key}: initiator to ${target}`);
        await sendMarker(target, linkMarker('begin', workload, device));
        try {
          results.push(
            await runWorkloadHere(workload, device, {
              kernel,
              sizes,
              onLine,
              link: { role: 'initiator', address: target, sync },
            }),
          );
        } finally {
          await sendMarker(target, linkMarker('end', workload, device));
          writeFileSync(`${sync}.done`, '');
        }
      }
      writeFileSync(out, `${JSON.stringify(results, null, 2)}\n`);
    }
  writeFileSync(out, `${JSON.stringify(results, null, 2)}\n`);
}

main().catch((e: unknown) => {
  process.stderr.write(`ulp link guest side: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exitCode = 1;
});
