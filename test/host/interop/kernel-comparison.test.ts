import { describe, expect, it } from 'vitest';
import {
  ComparisonInputError,
  compareKernels,
  kernelResultsOf,
  renderComparisonMarkdown,
} from '../../../src/interop/kernel-matrix/comparison.js';

function results(kernel: string, rdmaCore: string, state: string, verdict: string) {
  return {
    schema: 'rdma-interop/results@2',
    environment: {
      kernel,
      rdmaCore,
      node: 'v20',
      devices: [{ name: 'siw0', atomicCap: 'NONE', maxQpRdAtom: 128 }],
    },
    scenarios: [
      {
        id: 'siw-write',
        device: 'siw0',
        verdict,
        device_fields: { 'q1.requester.state': state, 'mem[8]': '0x0123456789abcdef' },
      },
    ],
    probes: [],
  };
}

describe('the comparison of kernel lines', () => {
  const old = kernelResultsOf('6.1', results('6.1.0-56-amd64', '44.0', 'RESET', 'known'));
  const mid = kernelResultsOf('6.12', results('6.12.95+deb12-amd64', '56.1', 'RTS', 'match'));
  const comparison = compareKernels([old, mid]);

  it('lists every field with its value per kernel and marks the ones that changed', () => {
    expect(comparison.kernels.map((k) => `${k.line} ${k.kernel} ${k.rdmaCore}`)).toEqual([
      '6.1 6.1.0-56-amd64 44.0',
      '6.12 6.12.95+deb12-amd64 56.1',
    ]);
    const state = comparison.fields.find((f) => f.field === 'q1.requester.state');
    expect(state).toEqual({
      scenario: 'siw-write',
      device: 'siw0',
      field: 'q1.requester.state',
      values: { '6.1': 'RESET', '6.12': 'RTS' },
      changed: true,
    });
    expect(comparison.fields.find((f) => f.field === 'mem[8]')?.changed).toBe(false);
    expect(comparison.fields.find((f) => f.field === 'atomicCap')?.changed).toBe(false);
    // verdict and the state changed; mem[8], atomicCap, maxQpRdAtom did not.
    expect(comparison.changedCount).toBe(2);
  });

  it('the Markdown highlights the values that differ from the first kernel', () => {
    const md = renderComparisonMarkdown(comparison);
    expect(md).toContain('| siw-write | siw0 | q1.requester.state | RESET | **RTS** |');
    expect(md).toContain('| siw-write | siw0 | known | **match** |'.replace('known', '**known**'));
    expect(md).toContain('2 of 5 observed values differ between kernels.');
  });

  it('a field one kernel did not observe shows as absent there, and counts as changed', () => {
    const extra = results('7.3.4+deb13-amd64', '56.1', 'RTS', 'match');
    extra.scenarios.push({
      id: 'rxe-flush',
      device: 'rxe0',
      verdict: 'match',
      device_fields: { 'q1.requester.state': 'RTS', 'mem[8]': '0x0' },
    });
    const c = compareKernels([old, kernelResultsOf('7.3', extra)]);
    const flush = c.fields.find((f) => f.scenario === 'rxe-flush' && f.field === 'verdict');
    expect(flush?.values).toEqual({ '6.1': '—', '7.3': 'match' });
    expect(flush?.changed).toBe(true);
  });

  it('refuses a document that is not a results.json, with a typed error', () => {
    expect(() => kernelResultsOf('7.3', { schema: 'other' })).toThrow(ComparisonInputError);
    expect(() => kernelResultsOf('7.3', null)).toThrow(/kernel 7.3: results.json is not an object/);
  });
});
