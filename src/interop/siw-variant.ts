/**
 * Which siw the suite's siw0 runs on: the stock module and libsiw, or the project's
 * patched ones (patches/siw/, patches/rdma-core/: RFC 7306 Atomics and Immediate Data,
 * docs/siw-rfc7306.md). The patched pass is keyed as its own provider, `siw+rfc7306`, so
 * recorded behaviour (judge/records/) and reports say which one ran.
 */
import type { Scenario } from './scenario.js';

/**
 * The scenarios the patched pass runs: those whose program posts an RFC 7306 operation
 * (an atomic, a write or send with immediate) or hammers a word with FetchAdds. The others
 * take the same code paths in the patched siw as in the stock one (a UD program among them).
 */
export function usesRfc7306(scenario: Scenario): boolean {
  // A UD program (multicast) is refused at siw's bring-up, before any RFC 7306 message.
  if (scenario.ud === true) return false;
  return scenario.program.some(
    (step) =>
      step.do === 'hammer' ||
      (step.do === 'post-send' && step.wrs.some((wr) => /ATOMIC|WITH_IMM/.test(wr.kind))),
  );
}
