/**
 * The RoCE tester in the guest: sets up the testbed, turns each RoCE assertion into a
 * runnable one for the guest runner (guest-runner.ts), and tears everything down.
 */
import { execFileSync } from 'node:child_process';
import type { RunnableAssertion } from './guest-runner.js';
import { ROCE_ANSWERED_ASSERTIONS } from './roce-answered-assertions.js';
import { runRoceAnsweredAssertion } from './roce-answered-run.js';
import {
  ROCE_REQUESTER_ASSERTIONS,
  runRoceNoAnswerAssertion,
} from './roce-requester-assertions.js';
import { ROCE_RESPONDER_ASSERTIONS } from './roce-responder-assertions.js';
import { type RoceRunEnvironment, runRoceResponderAssertion } from './roce-responder-run.js';
import { RoceDeviceSide, RoceWire, setUpRoceTestbed } from './roce-testbed.js';
import { KernelLog } from './survival.js';

/** Every RoCE assertion (data only), for listings. */
export const ROCE_ASSERTIONS = [
  ...ROCE_RESPONDER_ASSERTIONS,
  ...ROCE_REQUESTER_ASSERTIONS,
  ...ROCE_ANSWERED_ASSERTIONS,
];

/** An open RoCE tester: its runnable assertions and its teardown. */
export interface RoceTester {
  readonly kernel: string;
  readonly assertions: readonly RunnableAssertion[];
  /** The device side, wire and kernel log the assertions use (the fuzz uses them too). */
  readonly env: RoceRunEnvironment;
  /** Tears the tester down; with `pcap`, first writes every packet of the run there. */
  close(pcap?: string): void;
}

/** Sets up the testbed (veth, namespace, rxe_t, relay) and opens the device side. */
export async function openRoceTester(): Promise<RoceTester> {
  setUpRoceTestbed();
  const kernel = execFileSync('uname', ['-r'], { encoding: 'utf8' }).trim();
  const device = await RoceDeviceSide.open();
  let wire: RoceWire;
  try {
    wire = await RoceWire.start();
  } catch (error) {
    device.close();
    throw error;
  }
  const log = new KernelLog();
  log.mark();
  const env = { device, wire, kernel, log };
  return {
    kernel,
    env,
    assertions: [
      ...ROCE_RESPONDER_ASSERTIONS.map((a) => ({
        ...a,
        run: () => runRoceResponderAssertion(a, env),
      })),
      ...ROCE_REQUESTER_ASSERTIONS.map((a) => ({
        ...a,
        run: () => runRoceNoAnswerAssertion(a, env),
      })),
      ...ROCE_ANSWERED_ASSERTIONS.map((a) => ({
        ...a,
        run: () => runRoceAnsweredAssertion(a, env),
      })),
    ],
    close: (pcap?: string) => {
      if (pcap !== undefined) wire.writePcap(pcap);
      wire.close();
      device.close();
    },
  };
}
