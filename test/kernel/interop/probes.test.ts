import { describe, expect, it } from 'vitest';
import { runProbe } from '../../../src/probe/run-probes.js';
import { WIRE_PROBES } from '../../../src/probe/wire-probes.js';

// Our userspace iWARP peer (codec only: MPA over a TCP socket) sends RFC 7306 messages to
// a real siw QP. siw's answer must be the engine's, or the recorded siw behaviour.
describe('wire probes: our iWARP peer against siw0', () => {
  for (const probe of WIRE_PROBES) {
    it(`${probe.id}: ${probe.title}`, async () => {
      const result = await runProbe(probe);
      expect(result.error).toBeUndefined();
      expect({ verdict: result.verdict, kernel: result.kernel }).toEqual({
        verdict: expect.stringMatching(/^(match|known)$/),
        kernel: result.finding?.kernel ?? result.engine,
      });
    });
  }

  it('the Atomic Request gets exactly one Terminate on the Terminate queue (QN 2), and no Atomic Response', async () => {
    const probe = WIRE_PROBES.find((p) => p.id === 'siw-probe-atomic-request');
    expect(probe).toBeDefined();
    const result = await runProbe(probe!);
    const answer = result.kernel.split('\n');
    expect(answer).toHaveLength(1);
    expect(answer[0]).toMatch(/^responder> terminate qn=2 msn=1 /);
    expect(result.kernel).not.toContain('atomic-response');
  });

  it('a plain Send is delivered byte for byte and answered with nothing', async () => {
    const probe = WIRE_PROBES.find((p) => p.id === 'siw-probe-send');
    const result = await runProbe(probe!);
    expect(result).toMatchObject({
      kernel: '',
      kernelDelivered: '8877665544332211',
      verdict: 'match',
    });
  });
});
