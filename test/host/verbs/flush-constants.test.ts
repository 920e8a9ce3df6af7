/**
 * Issue 11: the rdma-core >= 45 names the addon uses for IBTA 1.5 FLUSH although it is
 * built against rdma-core 44's headers (native/flush.h), checked against their origin:
 * libibverbs/verbs.h of the rdma-core that scripts/setup/rdma-core.sh builds for the 6.12
 * and 7.3 guest runs (56.1; `npm run setup` builds it).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SEND_OPS_FLAGS } from '../../../src/ibverbs/constants.js';
import { ACCESS_FLAGS, WC_OPCODE, WR_OPCODE } from '../../../src/ibverbs/index.js';
import { rdmaCoreBuildDir } from '../../../src/runtime/userspace.js';
import {
  FLUSH_C_PREFIX,
  FLUSH_PLACEMENT,
  FLUSH_SELECTIVITY,
  LibraryTooOldError,
  libibverbsVersion,
  requireFlushLibrary,
} from '../../../src/verbs/flush.js';
import { VerbsError } from '../../../src/verbs/index.js';
import { addon } from '../../../src/verbs/native.js';

const RDMA_CORE = '56.1';

/** `NAME = value` (or `NAME,` counting from the enum's previous value) in verbs.h. */
function headerValue(header: string, name: string): number | undefined {
  const explicit = new RegExp(`\\b${name}\\s*=\\s*\\(?([^,}\\n]+?)\\)?\\s*,`).exec(header);
  if (explicit?.[1] !== undefined) {
    const expr = explicit[1].trim();
    const shift = /^(\d+)U?\s*<<\s*(\d+)$/.exec(expr);
    if (shift) return Number(shift[1]) << Number(shift[2]);
    if (/^\d+$/.test(expr)) return Number(expr);
    return undefined;
  }
  // An implicit enumerator: its value is the previous one + 1 (IBV_WC_FLUSH follows
  // IBV_WC_DRIVER3 ... in enum ibv_wc_opcode; IBV_FLUSH_MR follows IBV_FLUSH_RANGE = 0).
  const body = new RegExp(`enum \\w+ \\{([^}]*\\b${name}\\b[^}]*)\\}`).exec(header)?.[1];
  if (body === undefined) return undefined;
  let value = -1;
  for (const entry of body.split(',')) {
    const m = /^\s*(?:\/\*.*?\*\/\s*)?(\w+)\s*(?:=\s*(.+))?$/s.exec(entry.trim());
    if (!m) continue;
    const [, n, v] = m;
    if (v !== undefined) {
      const shift = /^\(?(\d+)U?\s*<<\s*(\d+)\)?$/.exec(v.trim());
      value = shift ? Number(shift[1]) << Number(shift[2]) : Number(v.trim());
    } else value += 1;
    if (n === name) return value;
  }
  return undefined;
}

describe('rdma-core >= 45 FLUSH constants (native/flush.h)', () => {
  const header = join(rdmaCoreBuildDir(RDMA_CORE), 'include', 'infiniband', 'verbs.h');
  const carried = addon().rdmaCore45Constants;

  it("every name the addon carries has the value of rdma-core 56.1's verbs.h", () => {
    expect(
      existsSync(header),
      `${header} missing: run 'bash scripts/setup/rdma-core.sh ${RDMA_CORE}'`,
    ).toBe(true);
    const text = readFileSync(header, 'utf8');
    const wrong = Object.entries(carried).filter(([name, v]) => headerValue(text, name) !== v);
    expect(wrong).toEqual([]);
    expect(Object.keys(carried)).toHaveLength(9);
    // Not vacuous: the parser reads a value that would differ from a wrong copy.
    expect(headerValue(text, 'IBV_QP_EX_WITH_FLUSH')).toBe(2048);
    expect(headerValue(text, 'IBV_WC_FLUSH')).toBe(8);
  });

  it('the TypeScript tables name the same values', () => {
    for (const [name, value] of Object.entries(FLUSH_PLACEMENT))
      expect(carried[FLUSH_C_PREFIX + name], name).toBe(value);
    for (const [name, value] of Object.entries(FLUSH_SELECTIVITY))
      expect(carried[FLUSH_C_PREFIX + name], name).toBe(value);
    expect(carried.IBV_WR_FLUSH).toBe(WR_OPCODE.FLUSH);
    expect(carried.IBV_WC_FLUSH).toBe(WC_OPCODE.FLUSH);
    expect(carried.IBV_ACCESS_FLUSH_GLOBAL).toBe(ACCESS_FLAGS.FLUSH_GLOBAL);
    expect(carried.IBV_ACCESS_FLUSH_PERSISTENT).toBe(ACCESS_FLAGS.FLUSH_PERSISTENT);
    expect(BigInt(carried.IBV_QP_EX_WITH_FLUSH ?? 0)).toBe(SEND_OPS_FLAGS.FLUSH);
  });

  it("reports the loaded libibverbs' rdma-core version (the host's here: 44)", () => {
    expect(libibverbsVersion()).toMatch(/^44\.\d+$/);
  });

  it('a Flush QP on rdma-core 44 is a typed LibraryTooOldError, a VerbsError EOPNOTSUPP', () => {
    let caught: unknown;
    try {
      requireFlushLibrary('rxe0');
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(LibraryTooOldError);
    expect(caught).toBeInstanceOf(VerbsError);
    expect(caught).toMatchObject({
      name: 'LibraryTooOldError',
      code: 'EOPNOTSUPP',
      call: 'ibv_wr_flush',
      needs: '45',
      loaded: libibverbsVersion(),
      device: 'rxe0',
    });
  });
});
