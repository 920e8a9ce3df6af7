/**
 * Issue 36, the addon without external buffers: which path the addon's memory takes
 * (native/js_memory.h), the switch that forces it at run time, and the variant compiled
 * with NODE_API_NO_EXTERNAL_BUFFERS_ALLOWED (scripts/setup/no-external-addon.sh), loaded
 * through RDMA_INTEROP_ADDON. What needs devices (allocMr, round trips, the bound post and
 * poll on V8's memory, detaching them) runs in the guest:
 * test/kernel/verbs/no-external-buffers.test.ts.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { UnknownNameError } from '../../../src/errors.js';
import { cacheRoot } from '../../../src/runtime/paths.js';
import { memoryPath, setMemoryPath } from '../../../src/verbs/index.js';

const VARIANT = join(cacheRoot(), 'addon-no-external', 'build', 'Release', 'rdma_interop.node');
const OWN = resolve('build/Release/rdma_interop.node');
const VERBS = resolve('dist/verbs/index.js');

/** memoryPath() in a fresh process with `env` added. */
function pathIn(env: Record<string, string>, script = ''): string {
  return execFileSync(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `const v = await import(${JSON.stringify(VERBS)}); ${script} console.log(JSON.stringify(v.memoryPath()));`,
    ],
    { encoding: 'utf8', env: { ...process.env, ...env } },
  ).trim();
}

/** The N-API functions a built addon imports (its undefined dynamic symbols). */
function imports(file: string): string[] {
  return execFileSync('nm', ['-D', '--undefined-only', file], { encoding: 'utf8' })
    .split('\n')
    .map((l) => l.trim().split(/\s+/).pop() ?? '')
    .filter((s) => s.startsWith('napi_'));
}

describe('the memory path (issue 36)', () => {
  afterEach(() => {
    if (memoryPath().externalAvailable) setMemoryPath('external');
  });

  it('is external by default, and setMemoryPath switches it both ways', () => {
    expect(memoryPath()).toEqual({ path: 'external', reason: 'default', externalAvailable: true });
    setMemoryPath('v8');
    expect(memoryPath()).toEqual({ path: 'v8', reason: 'chosen', externalAvailable: true });
    setMemoryPath('external');
    expect(memoryPath().path).toBe('external');
  });

  it('refuses an unknown path name with UnknownNameError, changing nothing', () => {
    expect(() => setMemoryPath('sandbox' as 'v8')).toThrow(UnknownNameError);
    expect(memoryPath().path).toBe('external');
  });

  it('RDMA_INTEROP_NO_EXTERNAL_BUFFERS=1 chooses V8-allocated memory at load; 0 does not', () => {
    expect(JSON.parse(pathIn({ RDMA_INTEROP_NO_EXTERNAL_BUFFERS: '1' }))).toEqual({
      path: 'v8',
      reason: 'environment',
      externalAvailable: true,
    });
    expect(JSON.parse(pathIn({ RDMA_INTEROP_NO_EXTERNAL_BUFFERS: '0' })).path).toBe('external');
  });

  it('the variant built without external buffers imports no external-buffer call', () => {
    expect(existsSync(VARIANT), `${VARIANT}: bash scripts/setup/no-external-addon.sh`).toBe(true);
    const own = imports(OWN);
    const variant = imports(VARIANT);
    // The check itself can fail: the ordinary build does import it.
    expect(own).toContain('napi_create_external_arraybuffer');
    expect(variant).not.toContain('napi_create_external_arraybuffer');
    expect(variant).not.toContain('napi_create_external_buffer');
    expect(own).not.toContain('napi_create_external_buffer');
  });

  it('RDMA_INTEROP_ADDON loads the variant: V8-allocated, compile-time, no way back', () => {
    const script = `let back; try { v.setMemoryPath('external'); back = 'switched'; } catch (e) { back = e.name + ' ' + e.code; } console.log(back);`;
    const [back, path] = pathIn({ RDMA_INTEROP_ADDON: VARIANT }, script).split('\n');
    expect(back).toBe('VerbsError EOPNOTSUPP');
    expect(JSON.parse(path ?? '')).toEqual({
      path: 'v8',
      reason: 'compile-time',
      externalAvailable: false,
    });
  });

  it('RDMA_INTEROP_ADDON naming no file is AddonUnavailableError missing, saying so', () => {
    const script = `try { v.memoryPath(); } catch (e) { console.log(JSON.stringify([e.name, e.reason, e.message])); process.exit(0); }`;
    const [name, reason, message] = JSON.parse(
      pathIn({ RDMA_INTEROP_ADDON: '/nonexistent/rdma_interop.node' }, script),
    ) as string[];
    expect([name, reason]).toEqual(['AddonUnavailableError', 'missing']);
    expect(message).toContain('RDMA_INTEROP_ADDON names /nonexistent/rdma_interop.node');
  });
});
