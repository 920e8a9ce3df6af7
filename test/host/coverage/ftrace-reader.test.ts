/**
 * The ftrace reader's steering (src/coverage/ftrace-reader.ts): functions leave the filter
 * by their index in available_filter_functions (a name costs a scan of every record, about
 * 70 ms under TCG), the markers it acknowledges, and its arguments. The reading itself runs
 * in the guest.
 */
import { describe, expect, it } from 'vitest';
import {
  moduleFilterLines,
  parseFilterIndex,
  readerArgs,
  readTraceLine,
  removalLines,
} from '../../../src/coverage/ftrace-reader.js';

// available_filter_functions: core functions have no module; a static name can recur.
const AVAILABLE = [
  'run_init_process',
  '__x64_sys_swapon',
  'rxe_rcv [rdma_rxe]',
  'check_type_state.isra.0 [rdma_rxe]',
  'siw_qp_rx [siw]',
  'ib_dispatch_event [ib_core]',
  'rxe_rcv [rdma_rxe]',
  'dummy_xmit [dummy]',
].join('\n');

describe('removing a function by index', () => {
  it("maps each name of the recorded modules to its 1-based lines, and no other module's", () => {
    const index = parseFilterIndex(AVAILABLE, ['rdma_rxe']);
    expect([...index]).toEqual([
      ['rxe_rcv', [3, 7]],
      ['check_type_state.isra.0', [4]],
    ]);
    expect([...parseFilterIndex(AVAILABLE, ['siw', 'ib_core']).keys()]).toEqual([
      'siw_qp_rx',
      'ib_dispatch_event',
    ]);
  });
  it('writes `!<n>` for every index of the name, and the name itself when it has none', () => {
    const index = parseFilterIndex(AVAILABLE, ['rdma_rxe', 'siw']);
    expect(removalLines('rxe_rcv', index)).toEqual(['!3', '!7']);
    expect(removalLines('siw_qp_rx', index)).toEqual(['!5']);
    expect(removalLines('rxe_loaded_later', index)).toEqual(['!rxe_loaded_later']);
  });
  it('puts modules back with `:mod:`', () => {
    expect(moduleFilterLines(['rdma_rxe', 'siw'])).toEqual([':mod:rdma_rxe', ':mod:siw']);
  });
});

describe('markers', () => {
  it('tells a phase, a sync and a remap marker apart from a function entry', () => {
    const mark = (text: string) => `  node-300 [000] ..... 12.3: tracing_mark_write: ${text}`;
    expect(readTraceLine(mark('rdma-interop-phase guided 300.1.4'))).toEqual({
      kind: 'phase',
      phase: 'guided',
      token: '300.1.4',
    });
    expect(readTraceLine(mark('rdma-interop-sync 300.2.5'))).toEqual({
      kind: 'sync',
      token: '300.2.5',
    });
    expect(readTraceLine(mark('rdma-interop-remap 300.3.6'))).toEqual({
      kind: 'remap',
      token: '300.3.6',
    });
    expect(readTraceLine('  <idle>-0 [001] ..s1. 12.5: rxe_rcv')).toEqual({
      kind: 'function',
      name: 'rxe_rcv',
    });
  });
});

describe('arguments', () => {
  it('defaults to every covered module and the setup phase', () => {
    expect(readerArgs(['/tmp/out', '__x64_sys_swapon'])).toEqual({
      out: '/tmp/out',
      sentinel: '__x64_sys_swapon',
      modules: ['rdma_rxe', 'siw', 'ib_core', 'ib_uverbs'],
      phase: 'setup',
    });
  });
  it('takes a module list and a first phase (the guided phase alone, one module)', () => {
    expect(readerArgs(['/tmp/out', '__x64_sys_acct', 'rdma_rxe', 'guided'])).toEqual({
      out: '/tmp/out',
      sentinel: '__x64_sys_acct',
      modules: ['rdma_rxe'],
      phase: 'guided',
    });
  });
  it('refuses a module it does not cover, and missing arguments', () => {
    expect(readerArgs(['/tmp/out', '__x64_sys_acct', 'rdma_rxe,nvme'])).toBeUndefined();
    expect(readerArgs(['/tmp/out'])).toBeUndefined();
  });
});
