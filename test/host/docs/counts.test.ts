/**
 * Counts the user docs state (scenarios, wire probes, the patched-siw pass) against their
 * source of truth: the scenario table, the probe tables, the selection the CLI and the
 * kernel test make. Every "<number> ... scenarios|probes" in README.md and docs/*.md must
 * be one of the claims below, so a new count cannot go unchecked; figures.md (measured
 * history, dated) and the generated traceability table are left out.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import picomatch from 'picomatch';
import { describe, expect, it } from 'vitest';
import { LINK_SCENARIOS } from '../../../src/interop/link/scenarios.js';
import type { Scenario } from '../../../src/interop/scenario.js';
import { SCENARIOS } from '../../../src/interop/scenarios.js';
import { usesRfc7306 } from '../../../src/interop/siw-variant.js';
import { RFC7306_PROBES } from '../../../src/probe/rfc7306-probes.js';
import { WIRE_PROBES } from '../../../src/probe/wire-probes.js';
import { docFiles, ROOT } from './examples.js';

/** Files whose numbers are history or generated, not claims about the current tables. */
const NOT_CLAIMS = new Set(['docs/figures.md', 'docs/traceability.md']);

const count = (pick: (s: Scenario) => boolean) => SCENARIOS.filter(pick).length;
/** The patched-siw pass: `run --siw rfc7306` (src/cli/commands/run-siw.ts). */
const patched = SCENARIOS.filter((s) => s.device === 'siw0' && usesRfc7306(s));
const patchedIn = (family: string) => patched.filter((s) => s.family === family).length;
/** What test/kernel/siw-rfc7306/suite.test.ts runs of it: all but the concurrency ones. */
const patchedInCi = patched.filter((s) => !s.id.startsWith('siw-concurrent-')).length;

interface Claim {
  readonly file: string;
  /** The sentence, its numbers captured in order. */
  readonly pattern: RegExp;
  /** The numbers it must state, in the same order. */
  readonly truth: () => number[];
}

const CLAIMS: readonly Claim[] = [
  {
    file: 'docs/interop.md',
    pattern:
      /(\d+) scenarios \(programs × devices × post APIs: (\d+) on rxe0 through `ibv_post_send`, (\d+)\s+through `ibv_wr_\*`, (\d+) on siw0;/,
    truth: () => [
      SCENARIOS.length,
      count((s) => s.device === 'rxe0' && s.postPath === 'legacy'),
      count((s) => s.device === 'rxe0' && s.postPath === 'ex'),
      count((s) => s.device === 'siw0'),
    ],
  },
  {
    file: 'docs/interop.md',
    pattern: /`--link --list` lists the (\d+) wire scenarios/,
    truth: () => [LINK_SCENARIOS.length],
  },
  {
    file: 'docs/probe.md',
    pattern: /The (\d+) probes \(`WIRE_PROBES`/,
    truth: () => [WIRE_PROBES.length],
  },
  {
    file: 'docs/kernels.md',
    pattern: /the (\d+) `rxe-atomic-write\*-ex` scenarios/,
    truth: () => [count((s) => picomatch.isMatch(s.id, 'rxe-atomic-write*-ex'))],
  },
  {
    file: 'docs/kernels.md',
    pattern: /the (\d+) `rxe-flush-\*-ex` scenarios/,
    truth: () => [count((s) => picomatch.isMatch(s.id, 'rxe-flush-*-ex'))],
  },
  {
    file: 'docs/siw-rfc7306.md',
    pattern: /All (\d+) wire probes match the engine/,
    truth: () => [RFC7306_PROBES.length],
  },
  {
    file: 'docs/siw-rfc7306.md',
    pattern: /below\): all (\d+) match the engine/,
    truth: () => [patched.length],
  },
  {
    file: 'docs/siw-rfc7306.md',
    pattern:
      /`rfc7306` runs (\d+) scenarios \((\d+) atomics, (\d+) atomic errors, (\d+) immediates, (\d+) orderings,\s+(\d+) rnr: `siw-send-no-recv`, (\d+) concurrency;/,
    truth: () => [
      patched.length,
      patchedIn('atomics'),
      patchedIn('atomic-errors'),
      patchedIn('immediate'),
      patchedIn('ordering'),
      patchedIn('rnr'),
      patchedIn('concurrency'),
    ],
  },
  {
    file: 'docs/siw-rfc7306.md',
    pattern: /leaves out the (\d+)\s+concurrency scenarios[^:]*: (\d+) scenarios in CI/,
    truth: () => [patchedIn('concurrency'), patchedInCi],
  },
];

/**
 * A number followed, within three words, by scenario(s) or probe(s): "the 4 `rxe-...`
 * scenarios", "11 wire probes"; not an RFC number or "0 when every scenario".
 */
const COUNT =
  /(?<!RFC )\b\d+(?:\s+(?!(?:a|an|the|every|each|when|unless|if)\b)[\w`*-]+){0,3}?\s+(?:scenarios?|probes?)\b/g;

const text = (file: string) => readFileSync(join(ROOT, file), 'utf8');

describe('counts stated in the docs', () => {
  it.each(CLAIMS.map((c) => [`${c.file}: ${c.pattern.source.slice(0, 40)}`, c] as const))(
    '%s',
    (_name, claim) => {
      const m = claim.pattern.exec(text(claim.file));
      expect(m, `${claim.file} no longer says ${claim.pattern}`).not.toBeNull();
      expect(m?.slice(1).map(Number)).toEqual(claim.truth());
    },
  );

  it('every scenario or probe count in the user docs is one of the checked claims', () => {
    const unchecked: string[] = [];
    for (const file of docFiles().filter((f) => !NOT_CLAIMS.has(f))) {
      const body = text(file);
      const spans = CLAIMS.filter((c) => c.file === file).flatMap((c) => {
        const m = c.pattern.exec(body);
        return m === null ? [] : [[m.index, m.index + m[0].length] as const];
      });
      for (const m of body.matchAll(COUNT)) {
        const at = m.index;
        if (!spans.some(([from, to]) => at >= from && at < to))
          unchecked.push(`${file}: "${m[0].replace(/\s+/g, ' ')}"`);
      }
    }
    expect(unchecked).toEqual([]);
  });

  it('the sweep finds the claims themselves (it would catch a new count)', () => {
    const found = ['docs/interop.md', 'docs/probe.md'].flatMap((f) =>
      [...text(f).matchAll(COUNT)].map((m) => m[0]),
    );
    expect(found).toContain('3 probes');
    expect(found.length).toBeGreaterThanOrEqual(3);
  });
});
