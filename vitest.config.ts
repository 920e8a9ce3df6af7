import { defineConfig } from 'vitest/config';

// Three projects: `host` runs anywhere (pure TypeScript, the codec, the engine, tshark
// cross-checks); `kernel` needs real rxe/siw devices and runs inside the QEMU guest
// (or on a host that has them), driven by scripts/test.sh; `browser` opens report.html
// in Chromium.
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'host',
          include: ['test/host/**/*.test.ts'],
          testTimeout: 60_000,
        },
      },
      {
        test: {
          name: 'kernel',
          include: ['test/kernel/**/*.test.ts'],
          // rxe is unreliable under concurrency (rust-ibverbs CI runs serially too).
          fileParallelism: false,
          testTimeout: 120_000,
          hookTimeout: 120_000,
        },
      },
      {
        // report.html in headless Chromium (Debian's); scripts/test.sh runs it on the host
        // after the kernel tests, on the suite report they left in the results directory.
        test: {
          name: 'browser',
          include: ['test/browser/**/*.test.ts'],
          testTimeout: 60_000,
        },
      },
    ],
  },
});
