/**
 * Entry point of the link mode inside a guest (src/interop/link/run.ts starts it):
 *   guest-main.js responder
 *   guest-main.js requester <observations.json> <environment.json> <scenario id>...
 */
import { writeFileSync } from 'node:fs';
import { collectEnvironment } from '../environment.js';
import { driveRequester, serveResponder } from './guest.js';

async function main(argv: readonly string[]): Promise<number> {
  const [role, observations, environment, ...ids] = argv;
  if (role === 'responder') {
    await serveResponder();
    return 0;
  }
  if (role === 'requester' && observations !== undefined && environment !== undefined) {
    writeFileSync(
      environment,
      `${JSON.stringify(collectEnvironment(['rxe0', 'siw0']), null, 2)}\n`,
    );
    await driveRequester(ids, observations);
    return 0;
  }
  process.stderr.write(
    'usage: guest-main.js responder | requester <observations.json> <environment.json> <id>...\n',
  );
  return 2;
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
