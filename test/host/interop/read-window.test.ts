import { describe, expect, it } from 'vitest';
import { compareOutcomes } from '../../../src/interop/compare.js';
import { FAULT_LINK_SCENARIOS } from '../../../src/interop/link/fault-scenarios.js';
import { expectedLinkOutcome } from '../../../src/interop/link/predict.js';
import { IN_WINDOW, withReadWindows } from '../../../src/interop/link/read-window.js';
import type { Outcome, Scenario } from '../../../src/interop/scenario.js';

const MIX = FAULT_LINK_SCENARIOS.find((s) => s.id === 'link-rxe-read-atomic-mix') as Scenario;
const ENGINE = expectedLinkOutcome(MIX);
/** The word after four of the row's FetchAdds (0x0123456789abcdef + 4 x 0x1111111122222222). */
const AFTER_FOUR = '0x456789ac12345677';

function device(changes: Record<string, string>): Outcome {
  return { fields: { ...ENGINE.fields, ...changes } };
}

function differences(kernel: Outcome) {
  return compareOutcomes(withReadWindows(MIX, ENGINE), withReadWindows(MIX, kernel));
}

describe('a Read after FetchAdds of its word, on the faulty wire (read-window.ts)', () => {
  it('the engine names every Read but the last by its window, and keeps the FetchAdds exact', () => {
    const fields = withReadWindows(MIX, ENGINE).fields;
    expect(ENGINE.fields['requester.wc4.fetched']).toBe('0x23456789cdf01233');
    expect(fields['requester.wc4.fetched']).toBe(IN_WINDOW);
    expect(fields['requester.wc3.fetched']).toBe('0x12345678abcdf011');
    // The last Read can only see the final word: compared exactly.
    expect(fields['requester.wc16.fetched']).toBe('0x89abcdf09abcdeff');
  });

  it('a repeated Read that saw later FetchAdds matches, and the note names it', () => {
    // What guest B's rxe answered in a drop=0.02,dup=0.01,seed=7 run: wr4 and wr6 re-executed.
    const kernel = device({
      'requester.wc4.fetched': AFTER_FOUR,
      'requester.wc6.fetched': AFTER_FOUR,
    });
    expect(differences(kernel)).toEqual([]);
    expect(withReadWindows(MIX, kernel).note).toBe(
      `later words: wr4 read ${AFTER_FOUR} (2 FetchAdd(s) after its own), wr6 read ${AFTER_FOUR} (1 FetchAdd(s) after its own)`,
    );
  });

  it('keeps the rest of the outcome: the capture a Read scenario carries', () => {
    const pcap = Uint8Array.of(0xd4, 0xc3, 0xb2, 0xa1);
    const read = withReadWindows(MIX, { ...device({}), pcap });
    expect(read.pcap).toBe(pcap);
  });

  it('a Read older than its FetchAdd, or a FetchAdd off by one add, still diverges', () => {
    expect(differences(device({ 'requester.wc4.fetched': '0x12345678abcdf011' }))).toEqual([
      { field: 'requester.wc4.fetched', engine: IN_WINDOW, kernel: '0x12345678abcdf011' },
    ]);
    expect(differences(device({ 'requester.wc3.fetched': '0x23456789cdf01233' }))).toEqual([
      {
        field: 'requester.wc3.fetched',
        engine: '0x12345678abcdf011',
        kernel: '0x23456789cdf01233',
      },
    ]);
  });
});
