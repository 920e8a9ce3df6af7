/**
 * Entry point of the link mode inside a guest (src/interop/link/run.ts starts it):
 *   guest-main.js <A|B> <share dir> <one-way|both-ways> <scenario id>...
 * Each guest writes its environment (`environment-<guest>.json`) into the share directory.
 * Guest A drives the scenarios as the requester against guest B's responder, and the
 * requester writes its observations (`observations-<guest>.json`); with `both-ways` the
 * roles then swap in the same boot: B drives the same scenarios against A.
 */
import { writeFileSync } from 'node:fs';
import { collectEnvironment } from '../environment.js';
import { driveRequester, serveResponder } from './guest.js';
import { pairPlace } from './place.js';
import { LINK_DIRECTIONS, type LinkDirection, linkFiles } from './sides.js';

async function main(argv: readonly string[]): Promise<number> {
  const [guest, share, direction, ...ids] = argv;
  if (
    (guest !== 'A' && guest !== 'B') ||
    share === undefined ||
    !LINK_DIRECTIONS.includes(direction as LinkDirection)
  ) {
    process.stderr.write('usage: guest-main.js <A|B> <share dir> <one-way|both-ways> <id>...\n');
    return 2;
  }
  const files = linkFiles(share);
  writeFileSync(
    files.environment(guest),
    `${JSON.stringify(collectEnvironment(['rxe0', 'siw0']), null, 2)}\n`,
  );
  const place = pairPlace(guest);
  const drive = () => driveRequester(ids, files.observations(guest), place);
  const serve = () => serveResponder(place);
  const order = guest === 'A' ? [drive, serve] : [serve, drive];
  const steps = direction === 'both-ways' ? order : order.slice(0, 1);
  for (const step of steps) await step();
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(
      `link guest: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exitCode = 1;
  },
);
