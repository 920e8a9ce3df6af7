/** `npm run bench -- verbs`. Placeholder until the verbs layer lands. */
export async function runBenchmark(): Promise<void> {
  process.stdout.write('bench verbs: not implemented yet\n');
}
