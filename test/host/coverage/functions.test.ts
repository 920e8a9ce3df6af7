/**
 * Issue 32: function coverage from its raw ftrace form to results.json's record, the
 * function -> file mapping by source, the merge `compare` does, and report.md's section.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  parseEntered,
  parseFilterFunctions,
  type RawFunctionCoverage,
} from '../../../src/coverage/ftrace.js';
import { readTraceLine } from '../../../src/coverage/ftrace-reader.js';
import {
  buildFunctionCoverage,
  mergeFunctionCoverage,
  NO_SOURCE,
  renderFunctionCoverage,
} from '../../../src/coverage/functions.js';
import { writeCoverageHtml } from '../../../src/coverage/html.js';
import { renderMergedCoverage } from '../../../src/coverage/report-files.js';
import {
  baseName,
  definitionIndex,
  functionFiles,
  sourceDirOf,
} from '../../../src/coverage/source-map.js';

const root = mkdtempSync(join(tmpdir(), 'coverage-map-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const RXE_RECV = `// SPDX
#include "rxe.h"
static int check_type_state(struct rxe_dev *rxe, struct rxe_pkt_info *pkt,
\t\t\t    struct rxe_qp *qp)
{
\treturn 0;
}
void rxe_rcv(struct sk_buff *skb);
void rxe_rcv(struct sk_buff *skb)
{
\tif (check_type_state(rxe, pkt, qp))
\t\treturn;
}
EXPORT_SYMBOL(rxe_rcv);
`;

describe('available_filter_functions and the reader', () => {
  it('keeps the covered modules functions, each once, sorted', () => {
    const text = [
      'rxe_rcv [rdma_rxe]',
      'check_type_state.isra.0 [rdma_rxe]',
      'siw_tcp_rx_data [siw]',
      'tcp_v4_rcv',
      'udp_tunnel_sock_release [udp_tunnel]',
      'rxe_rcv [rdma_rxe]',
    ].join('\n');
    expect(parseFilterFunctions(text)).toEqual({
      rdma_rxe: ['check_type_state.isra.0', 'rxe_rcv'],
      siw: ['siw_tcp_rx_data'],
    });
  });
  it('groups the reader lines by phase', () => {
    expect(parseEntered('setup rxe_add\ntester rxe_rcv\nfuzz rxe_rcv\ntester rxe_comp\n')).toEqual({
      setup: ['rxe_add'],
      tester: ['rxe_comp', 'rxe_rcv'],
      fuzz: ['rxe_rcv'],
    });
  });
});

describe('function -> source file', () => {
  it('finds definitions, not prototypes, macros or statements', () => {
    const index = definitionIndex([
      { name: 'rxe_recv.c', text: RXE_RECV },
      { name: 'rxe_resp.c', text: 'int rxe_responder(void *arg)\n{\n}\n' },
    ]);
    expect(Object.fromEntries(index)).toEqual({
      check_type_state: 'rxe_recv.c',
      rxe_rcv: 'rxe_recv.c',
      rxe_responder: 'rxe_resp.c',
    });
  });
  it('drops the compiler clone suffix', () => {
    expect(baseName('check_type_state.isra.0')).toBe('check_type_state');
    expect(baseName('rxe_rcv')).toBe('rxe_rcv');
  });
  it("reads the line's source from the cache, by the release's series", () => {
    for (const v of ['6.1.192-3', '6.12.95-1~bpo12+1']) {
      const at = join(root, 'linux-src', v, 'drivers/infiniband/sw/rxe');
      mkdirSync(at, { recursive: true });
      writeFileSync(join(at, 'rxe_recv.c'), RXE_RECV);
    }
    expect(sourceDirOf('6.1.0-57-amd64', root)).toBe(join(root, 'linux-src', '6.1.192-3'));
    expect(sourceDirOf('6.12.95+deb12-amd64', root)).toBe(
      join(root, 'linux-src', '6.12.95-1~bpo12+1'),
    );
    expect(sourceDirOf('7.3.4+deb13-amd64', root)).toBeUndefined();
    expect(functionFiles('6.1.0-57-amd64', root).get('rdma_rxe')?.get('rxe_rcv')).toBe(
      'rxe_recv.c',
    );
  });
});

const RAW: RawFunctionCoverage = {
  kernel: '6.1.0-57-amd64',
  method: 'ftrace-function',
  traceable: {
    rdma_rxe: ['check_type_state.isra.0', 'rxe_rcv', 'rxe_responder'],
    ib_core: ['ib_dispatch_event'],
  },
  entered: { tester: ['rxe_rcv', 'check_type_state.isra.0'], fuzz: ['rxe_rcv'] },
  lost: 0,
  seconds: 12.5,
};
const FILES = new Map([
  [
    'rdma_rxe',
    new Map([
      ['rxe_rcv', 'rxe_recv.c'],
      ['check_type_state', 'rxe_recv.c'],
      ['rxe_responder', 'rxe_resp.c'],
    ]),
  ],
]);

describe('the coverage record', () => {
  it('counts per phase and lists each function under its file', () => {
    const c = buildFunctionCoverage(RAW, FILES);
    const rxe = c.modules.find((m) => m.module === 'rdma_rxe');
    expect(rxe?.traceable).toBe(3);
    expect(rxe?.entered).toEqual({ all: 2, tester: 2, fuzz: 1 });
    expect(rxe?.files).toEqual([
      {
        file: 'rxe_recv.c',
        functions: [
          { name: 'check_type_state.isra.0', phases: ['tester'] },
          { name: 'rxe_rcv', phases: ['tester', 'fuzz'] },
        ],
      },
      { file: 'rxe_resp.c', functions: [{ name: 'rxe_responder', phases: [] }] },
    ]);
    expect(c.modules.find((m) => m.module === 'ib_core')?.files[0]?.file).toBe(NO_SOURCE);
  });
  it('merges runs of one kernel (union of phases) and keeps kernels apart', () => {
    const a = buildFunctionCoverage(RAW, FILES);
    const b = buildFunctionCoverage(
      { ...RAW, entered: { suite: ['rxe_responder'] }, seconds: 7.5 },
      FILES,
    );
    const other = buildFunctionCoverage({ ...RAW, kernel: '7.3.4+deb13-amd64' }, FILES);
    const merged = mergeFunctionCoverage([a, b, other]);
    expect(merged.map((c) => c.kernel)).toEqual(['6.1.0-57-amd64', '7.3.4+deb13-amd64']);
    const rxe = merged[0]?.modules.find((m) => m.module === 'rdma_rxe');
    expect(rxe?.entered).toEqual({ all: 3, tester: 2, fuzz: 1, suite: 1 });
    expect(merged[0]?.seconds).toBe(20);
    const md = renderMergedCoverage([a, b, other]);
    expect(md).toMatch(/\| rdma_rxe \| 3\/3 \| 2\/3 \| 3\/3 \|/);
  });
  it('renders a table per kernel and the never-entered functions per file', () => {
    const md = renderFunctionCoverage([buildFunctionCoverage(RAW, FILES)], () => '6.1');
    expect(md).toMatch(
      /\| 6\.1 \| rdma_rxe \| 3 \| 2 \(66\.7 %\) \| 1 \(33\.3 %\) \| 2 \(66\.7 %\) \|/,
    );
    expect(md).toMatch(/\| rxe_resp\.c \| 0\/1 \| rxe_responder \|/);
  });
});

describe('the ftrace reader', () => {
  it('tells function entries, phase markers and headers apart', () => {
    expect(
      readTraceLine('     ibv_devinfo-223     [001] .....     6.852062: rxe_alloc_ucontext'),
    ).toEqual({ kind: 'function', name: 'rxe_alloc_ucontext' });
    expect(readTraceLine('  <idle>-0 [000] ..s1. 12.5: check_type_state.isra.0')).toEqual({
      kind: 'function',
      name: 'check_type_state.isra.0',
    });
    expect(
      readTraceLine(
        '  node-300 [000] ..... 12.3: tracing_mark_write: rdma-interop-phase tester 300.17',
      ),
    ).toEqual({ kind: 'phase', phase: 'tester', token: '300.17' });
    expect(readTraceLine('# tracer: function')).toEqual({ kind: 'none' });
    expect(readTraceLine('')).toEqual({ kind: 'none' });
  });
  it('leaves the reader acknowledgements out of the entered functions', () => {
    expect(parseEntered('#ready\nsetup rxe_add\n#ack 1.2\ntester rxe_rcv\n')).toEqual({
      setup: ['rxe_add'],
      tester: ['rxe_rcv'],
    });
  });
});

describe('coverage.html', () => {
  it('lists each function with its phases and links from report.html', () => {
    const dir = mkdtempSync(join(tmpdir(), 'coverage-html-'));
    try {
      writeFileSync(join(dir, 'report.html'), '<html><body><h1>run</h1></body></html>');
      writeCoverageHtml(dir, [buildFunctionCoverage(RAW, FILES)]);
      const page = readFileSync(join(dir, 'coverage.html'), 'utf8');
      expect(page).toContain('<li class="hit">rxe_rcv (tester, fuzz)</li>');
      expect(page).toContain('<li class="miss">rxe_responder</li>');
      expect(page).toContain('rdma_rxe: 2 of 3 traceable functions entered');
      const report = readFileSync(join(dir, 'report.html'), 'utf8');
      expect(report).toContain('<a href="coverage.html">');
      writeCoverageHtml(dir, [buildFunctionCoverage(RAW, FILES)]);
      expect(readFileSync(join(dir, 'report.html'), 'utf8')).toBe(report);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
