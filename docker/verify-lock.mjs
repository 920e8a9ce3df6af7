// verify-lock.mjs <committed-lock>: after `npm install` in the image, every package the
// committed package-lock.json lists is installed at its locked version (platform builds
// of other systems aside: optional and absent). npm rewrites the lock file in its own
// format (an older npm drops fields such as `libc`), so the file is compared by what it
// pins, not byte by byte; the build then restores the committed file.
import { existsSync, readFileSync } from 'node:fs';

const lock = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const wrong = [];
let checked = 0;
for (const [path, entry] of Object.entries(lock.packages ?? {})) {
  if (path === '' || entry.link) continue;
  const manifest = `${path}/package.json`;
  if (!existsSync(manifest)) {
    if (!entry.optional) wrong.push(`${path}: missing (locked ${entry.version})`);
    continue;
  }
  const installed = JSON.parse(readFileSync(manifest, 'utf8')).version;
  if (installed !== entry.version) wrong.push(`${path}: ${installed}, locked ${entry.version}`);
  checked++;
}
if (wrong.length > 0) {
  console.error(`verify-lock: ${wrong.length} packages differ from the lock:\n  ${wrong.join('\n  ')}`);
  process.exit(1);
}
console.log(`verify-lock: ${checked} packages installed at their locked versions`);
