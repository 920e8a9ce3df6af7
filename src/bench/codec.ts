/** `npm run bench -- codec`. Placeholder until the codec layer lands. */
export async function runBenchmark(): Promise<void> {
  process.stdout.write('bench codec: not implemented yet\n');
}
