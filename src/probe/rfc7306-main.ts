/**
 * The patched-siw checks as a program, printed as one JSON object: the RFC 7306 wire
 * probes (our peer against siw0) and the siw-against-siw verbs checks. It runs in a
 * process of its own because the patched libsiw must be loaded from the start
 * (LD_LIBRARY_PATH at the patched rdma-core build), while the rest of the kernel tests
 * run on the system's libsiw; test/kernel/siw-rfc7306/ starts it.
 */
import { RFC7306_PROBES } from './rfc7306-probes.js';
import { runRfc7306Probe } from './run-rfc7306-probes.js';
import { runSiwPairChecks } from './siw-pair-rfc7306.js';

const probes = [];
for (const probe of RFC7306_PROBES) {
  const result = await runRfc7306Probe(probe);
  probes.push({
    id: probe.id,
    verdict: result.verdict,
    engine: result.engine,
    kernel: result.kernel,
    expected:
      result.finding !== undefined && result.engine !== undefined
        ? result.finding.kernel(result.engine)
        : result.engine,
    finding: result.finding?.finding,
    error: result.error,
  });
}
let pair: unknown;
try {
  pair = await runSiwPairChecks();
} catch (error) {
  pair = { error: error instanceof Error ? `${error.name}: ${error.message}` : String(error) };
}
process.stdout.write(`${JSON.stringify({ probes, pair })}\n`);
