/** `npm run bench -- engine`. Placeholder until the engine layer lands. */
export async function runBenchmark(): Promise<void> {
  process.stdout.write('bench engine: not implemented yet\n');
}
