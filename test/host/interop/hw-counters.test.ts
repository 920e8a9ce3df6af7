import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  HwCountersError,
  hwCountersDir,
  JIFFY_MARGIN_MS,
  type ReaderClock,
  readFreshTimerCounts,
  readTimerCounts,
  TIMER_COUNTERS,
  type TimerCounter,
  type TimerCounts,
  timerClassOf,
  timerEvidence,
} from '../../../src/interop/kernel/hw-counters.js';
import { CounterWitness, timerWitnessOf } from '../../../src/interop/kernel/timer-witness.js';

// Readings far from zero and not byte palindromes: a counter read as a float or a 32-bit
// number would lose them.
const BASE: TimerCounts = {
  rcvd_rnr_err: 9_007_199_254_740_993n,
  retry_rnr_exceeded_err: 4_611_686_018_427_387_905n,
  completer_retry_err: 123_456_789_012n,
  retry_exceeded_err: 18_446_744_073_709_550_001n,
  rcvd_seq_err: 70_000_000_001n,
};

function plus(delta: Partial<Record<TimerCounter, bigint>>): TimerCounts {
  return Object.fromEntries(
    TIMER_COUNTERS.map((name) => [name, BASE[name] + (delta[name] ?? 0n)]),
  ) as Record<TimerCounter, bigint>;
}

/** A fake sysfs: `<root>/rxe0/ports/1/hw_counters/` as rxe lays it out. */
let root: string;
let dir: string;

function writeCounts(counts: TimerCounts, lifespan = '10\n'): void {
  for (const name of TIMER_COUNTERS) writeFileSync(join(dir, name), `${counts[name]}\n`);
  writeFileSync(join(dir, 'lifespan'), lifespan);
}

/** A clock that only moves when slept on (or told to), recording the sleeps. */
function fakeClock(): ReaderClock & { at: number; slept: number[] } {
  const clock = {
    at: 1000,
    slept: [] as number[],
    now: () => clock.at,
    sleep: async (ms: number) => {
      clock.slept.push(ms);
      clock.at += ms;
    },
  };
  return clock;
}

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'hw-counters-'));
  dir = hwCountersDir('rxe0', 1, root);
  mkdirSync(dir, { recursive: true });
  writeCounts(BASE);
});

afterEach(() => {
  rmSync(root, { recursive: true, force: true });
});

describe('rxe hw_counters', () => {
  it('reads the five timer counters as exact u64 values from the port directory', () => {
    expect(dir).toBe(join(root, 'rxe0', 'ports', '1', 'hw_counters'));
    expect(readTimerCounts(dir)).toEqual(BASE);
  });

  it('a missing or malformed counter is a typed error naming the file', () => {
    rmSync(join(dir, 'completer_retry_err'));
    expect(() => readTimerCounts(dir)).toThrow(HwCountersError);
    expect(() => readTimerCounts(dir)).toThrow(/completer_retry_err: cannot be read \(ENOENT\)/);
    writeFileSync(join(dir, 'completer_retry_err'), '12abc\n');
    expect(() => readTimerCounts(dir)).toThrow(/completer_retry_err: not a decimal counter/);
  });

  it('classes each program the suite times from the delta between post and completion', () => {
    const classOf = (delta: Partial<Record<TimerCounter, bigint>>) =>
      timerClassOf(timerEvidence(BASE, plus(delta)));
    // rnr_retry 0 (send-no-recv): one RNR NAK, no retry left, no timer armed.
    expect(classOf({ rcvd_rnr_err: 1n, retry_rnr_exceeded_err: 1n })).toBe('no-timer');
    // rnr_retry 2: three NAKs, two RNR timers, then RNR_RETRY_EXC_ERR.
    expect(timerEvidence(BASE, plus({ rcvd_rnr_err: 3n, retry_rnr_exceeded_err: 1n }))).toEqual({
      rnrTimers: 2n,
      transportTimers: 0n,
    });
    expect(classOf({ rcvd_rnr_err: 3n, retry_rnr_exceeded_err: 1n })).toBe('rnr-timer');
    // A late receive found by the first retry.
    expect(classOf({ rcvd_rnr_err: 1n })).toBe('rnr-timer');
    // Nothing ran: answered at once.
    expect(classOf({})).toBe('no-timer');
    // A lost request, retry_cnt 3: three retries, then RETRY_EXC_ERR.
    expect(classOf({ completer_retry_err: 3n, retry_exceeded_err: 1n })).toBe('transport-timer');
    // Both ran: the transport timer is the later class.
    expect(classOf({ rcvd_rnr_err: 2n, completer_retry_err: 1n })).toBe('transport-timer');
    // A retry a sequence NAK started is no timer's.
    expect(classOf({ rcvd_seq_err: 1n, completer_retry_err: 1n })).toBe('no-timer');
  });

  it('a counter that went back is an error, not a negative count', () => {
    expect(() => timerEvidence(plus({ rcvd_rnr_err: 1n }), BASE)).toThrow(
      /rcvd_rnr_err: went back from 9007199254740994 to 9007199254740993/,
    );
  });

  it('waits out the core cache lifespan since its last read, so a reading is never a cached one', async () => {
    const clock = fakeClock();
    const fresh = join(root, 'fresh');
    mkdirSync(fresh);
    for (const name of TIMER_COUNTERS) writeFileSync(join(fresh, name), '7\n');
    writeFileSync(join(fresh, 'lifespan'), '13\n');
    await readFreshTimerCounts(fresh, clock);
    expect(clock.slept).toEqual([]);
    clock.at += 5;
    await readFreshTimerCounts(fresh, clock);
    expect(clock.slept).toEqual([13 + JIFFY_MARGIN_MS - 5]);
    clock.at += 100;
    await readFreshTimerCounts(fresh, clock);
    expect(clock.slept).toHaveLength(1);
    writeFileSync(join(fresh, 'lifespan'), 'ten\n');
    await expect(readFreshTimerCounts(fresh, clock)).rejects.toThrow(/not a lifespan in ms/);
  });

  it('the rxe witness classes a timed wait by the counters between the mark and the completion', async () => {
    const witness = new CounterWitness(dir, fakeClock());
    await expect(witness.classOf('requester')).rejects.toThrow(/before any post/);
    await witness.mark('requester');
    writeCounts(plus({ rcvd_rnr_err: 4n }));
    expect(await witness.classOf('requester')).toEqual({
      timer: 'rnr-timer',
      evidence: 'rxe hw_counters rcvd_rnr_err +4',
    });
    await witness.mark('requester');
    writeCounts(plus({ rcvd_rnr_err: 5n, retry_rnr_exceeded_err: 1n, completer_retry_err: 1n }));
    expect(await witness.classOf('requester')).toEqual({
      timer: 'transport-timer',
      evidence:
        'rxe hw_counters rcvd_rnr_err +1, retry_rnr_exceeded_err +1, completer_retry_err +1',
    });
    await witness.mark('requester');
    expect((await witness.classOf('requester')).evidence).toBe('rxe hw_counters none moved');
  });

  it('rxe reads its port counters under the given root; siw, which has neither timer, reads nothing', async () => {
    const rxe = timerWitnessOf({ device: 'rxe0' }, root, fakeClock());
    await rxe.mark('requester');
    writeCounts(plus({ rcvd_rnr_err: 1n, retry_rnr_exceeded_err: 1n }));
    expect((await rxe.classOf('requester')).timer).toBe('no-timer');
    const siw = timerWitnessOf({ device: 'siw0' }, join(root, 'absent'));
    await siw.mark('requester');
    expect((await siw.classOf('requester')).timer).toBe('no-timer');
    const broken = timerWitnessOf({ device: 'rxe0' }, join(root, 'absent'));
    await expect(broken.mark('requester')).rejects.toThrow(HwCountersError);
  });

  it('a device bound by run --device: rxe of any name reads its counters, another RoCE provider is not measured', async () => {
    const bound = (name: string, provider: string) => ({
      device: 'rxe0' as const,
      on: { name, provider, address: '203.0.113.1', gidIndex: 1 },
    });
    // The fake root holds rxe0's counters only: lab_roce (rxe) reads its own, absent here.
    await expect(
      timerWitnessOf(bound('lab_roce', 'rxe'), root, fakeClock()).mark('requester'),
    ).rejects.toThrow(HwCountersError);
    const mlx5 = timerWitnessOf(bound('mlx5_0', 'mlx5'), root, fakeClock());
    await mlx5.mark('requester');
    writeCounts(plus({ rcvd_rnr_err: 2n }));
    expect(await mlx5.classOf('requester')).toEqual({
      timer: 'not-measured',
      evidence: "mlx5: the timer witness reads rxe's hw_counters only (not measured)",
    });
    const irdma = timerWitnessOf(
      {
        device: 'siw0',
        on: { name: 'irdma0', provider: 'irdma', address: '198.18.0.1', gidIndex: 0 },
      },
      root,
    );
    expect((await irdma.classOf('requester')).timer).toBe('no-timer');
  });
});
