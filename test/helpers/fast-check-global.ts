/** vitest globalSetup: prints the run's fast-check seed once (./fast-check-seed.ts). */
import { fastCheckSeed } from './fast-check-seed.js';

export default function setup(): void {
  process.stdout.write(
    `fast-check seed ${fastCheckSeed()} (FC_SEED=${fastCheckSeed()} repeats this run's properties)\n`,
  );
}
