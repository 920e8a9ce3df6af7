/**
 * Issue 9: every libibverbs / librdmacm constant the TypeScript tables name is checked
 * against the value the addon read from <infiniband/verbs.h> / <rdma/rdma_cma.h> at
 * compile time, and the completion layout against the one the addon writes: a wrong
 * hand-copied value fails here.
 */
import { describe, expect, it } from 'vitest';
import {
  ASYNC_EVENT,
  ATOMIC_CAP,
  C_NAMES,
  CM_EVENT,
  DEVICE_CAP_FLAGS,
  GID_TYPE,
  LINK_LAYER,
  MTU,
  MW_TYPE,
  NODE_TYPE,
  PORT_STATE,
  QP_ATTR_MASK,
  QP_TYPE,
  SEND_FLAGS,
  SEND_OPS_FLAGS,
  SRQ_ATTR_MASK,
  TRANSPORT_TYPE,
} from '../../../src/ibverbs/constants.js';
import {
  ACCESS_FLAGS,
  C_NAME_PREFIX,
  QP_STATE,
  WC_FLAGS,
  WC_OPCODE,
  WC_STATUS,
  WR_OPCODE,
} from '../../../src/ibverbs/index.js';
import { ROUND_TRIP_LAYOUT, WC_LAYOUT, WC_WORDS } from '../../../src/native/bindings.js';
import {
  RECV_LAYOUT,
  RECV_WORDS,
  SEND_LAYOUT,
  SEND_SGE_LAYOUT,
  SEND_SGE_WORDS,
  SEND_WORDS,
} from '../../../src/native/request-layout.js';
import { addon } from '../../../src/verbs/native.js';

// Names newer than the rdma-core headers the addon is built against (rdma-core 44 has
// no FLUSH operations yet): the addon carries them itself (native/flush.h, checked against
// rdma-core 45+'s header in flush-constants.test.ts), so they are compared with those.
const NEWER_THAN_HEADERS = new Set([
  'IBV_WR_FLUSH',
  'IBV_WC_FLUSH',
  'IBV_ACCESS_FLUSH_GLOBAL',
  'IBV_ACCESS_FLUSH_PERSISTENT',
  'IBV_QP_EX_WITH_FLUSH',
]);

type Table = Readonly<Record<string, number | bigint>>;

const ENGINE_TABLES: Record<keyof typeof C_NAME_PREFIX, Table> = {
  ACCESS_FLAGS,
  QP_STATE,
  WC_FLAGS,
  WC_OPCODE,
  WC_STATUS,
  WR_OPCODE,
};

const VERBS_TABLES: Record<keyof typeof C_NAMES, Table> = {
  ASYNC_EVENT,
  ATOMIC_CAP,
  CM_EVENT,
  DEVICE_CAP_FLAGS,
  GID_TYPE,
  LINK_LAYER,
  MTU,
  MW_TYPE,
  NODE_TYPE,
  PORT_STATE,
  QP_ATTR_MASK,
  QP_TYPE,
  SEND_FLAGS,
  SEND_OPS_FLAGS,
  SRQ_ATTR_MASK,
  TRANSPORT_TYPE,
};

function cNameOf(table: string, name: string): string {
  if (table in C_NAME_PREFIX) return C_NAME_PREFIX[table as keyof typeof C_NAME_PREFIX] + name;
  const spec = C_NAMES[table as keyof typeof C_NAMES];
  return (spec.rename as Readonly<Record<string, string>>)[name] ?? spec.prefix + name;
}

describe('TypeScript tables against the headers the addon was built with', () => {
  const fromHeaders = addon().constants;
  const tables: [string, Table][] = [
    ...Object.entries(ENGINE_TABLES),
    ...Object.entries(VERBS_TABLES),
  ];

  for (const [table, values] of tables) {
    it(`${table}: every name has the header's value`, () => {
      const group = fromHeaders[table];
      expect(group, `the addon exports no ${table} group`).toBeDefined();
      const mismatches: string[] = [];
      for (const [name, value] of Object.entries(values)) {
        const cName = cNameOf(table, name);
        const actual = NEWER_THAN_HEADERS.has(cName)
          ? addon().rdmaCore45Constants[cName]
          : group?.[cName];
        if (actual === undefined) {
          mismatches.push(`${cName}: not in the headers`);
          continue;
        }
        if (BigInt(actual) !== BigInt(value)) mismatches.push(`${cName}: ${value} vs ${actual}`);
      }
      expect(mismatches).toEqual([]);
    });
  }

  it('the addon names no constant that a TS table lacks (tables are complete)', () => {
    const missing: string[] = [];
    for (const [table, values] of tables) {
      const known = new Set(Object.keys(values).map((n) => cNameOf(table, n)));
      for (const cName of Object.keys(fromHeaders[table] ?? {}))
        if (!known.has(cName)) missing.push(cName);
    }
    expect(missing).toEqual([]);
  });

  it('WC_LAYOUT and WC_WORDS are the layout NativeCq.poll writes', () => {
    const { words, ...layout } = addon().wcLayout;
    expect(words).toBe(WC_WORDS);
    expect(layout).toEqual({ ...WC_LAYOUT });
  });

  it('SEND_LAYOUT and SEND_SGE_LAYOUT are what NativeQp.postSend reads', () => {
    const { words, sgeWords, ...layout } = addon().sendLayout;
    expect(words).toBe(SEND_WORDS);
    expect(sgeWords).toBe(SEND_SGE_WORDS);
    expect(layout).toEqual({ ...SEND_LAYOUT, ...SEND_SGE_LAYOUT });
    // u64 fields sit at even words (a BigUint64Array writes them at index / 2)
    const wide = [
      'wrId',
      'remoteAddr',
      'compareAdd',
      'swap',
      'atomicValue',
      'flushLength',
      'bindAddr',
      'bindLength',
    ] as const;
    for (const k of wide) expect(SEND_LAYOUT[k] % 2).toBe(0);
    expect(SEND_WORDS % 2).toBe(0);
    // Every header word is one field's (u64 fields take two): none overlaps another.
    const taken = new Set<number>();
    for (const [k, at] of Object.entries(SEND_LAYOUT)) {
      const u64 = (wide as readonly string[]).includes(k);
      for (const w of u64 ? [at, at + 1] : [at]) {
        expect(taken.has(w)).toBe(false);
        expect(w).toBeLessThan(SEND_WORDS);
        taken.add(w);
      }
    }
  });

  it('RECV_LAYOUT and RECV_WORDS are what postRecv reads (SGEs as postSend)', () => {
    const { words, ...layout } = addon().recvLayout;
    expect(words).toBe(RECV_WORDS);
    expect(layout).toEqual({ ...RECV_LAYOUT });
    expect(RECV_LAYOUT.wrId % 2).toBe(0);
    expect(RECV_WORDS % 2).toBe(0);
  });

  it('ROUND_TRIP_LAYOUT is the layout of the memory a round trip shares (round_trip.cc)', () => {
    expect(addon().roundTripLayout).toEqual({ ...ROUND_TRIP_LAYOUT });
  });

  it('a wrong value would be caught (the check is not vacuous)', () => {
    const group = fromHeaders.WC_STATUS;
    expect(group?.IBV_WC_REM_ACCESS_ERR).toBe(10);
    expect(group?.IBV_WC_REM_ACCESS_ERR).not.toBe(WC_STATUS.REM_OP_ERR);
  });
});
