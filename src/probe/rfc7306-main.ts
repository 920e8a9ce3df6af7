/**
 * The patched-siw verbs checks as a program, printed as one JSON object: siw against siw,
 * verbs atomics and RDMA Write with Immediate. It runs in a process of its own because
 * the patched libsiw must be loaded from the start (LD_LIBRARY_PATH at the patched
 * rdma-core build), while the rest of the kernel tests run on the system's libsiw;
 * test/kernel/siw-rfc7306/ starts it. (The RFC 7306 wire probes it ran before issue 31
 * are the tester's assertions: `probe --device siw0 --siw rfc7306`.)
 */
import { runSiwPairChecks } from './siw-pair-rfc7306.js';

let pair: unknown;
try {
  pair = await runSiwPairChecks();
} catch (error) {
  pair = { error: error instanceof Error ? `${error.name}: ${error.message}` : String(error) };
}
process.stdout.write(`${JSON.stringify({ pair })}\n`);
