/**
 * Block coverage on the project's own builds of rdma_rxe and siw (issue 32):
 * scripts/setup/coverage-modules.sh compiles them with -fsanitize-coverage=trace-pc, so each
 * basic block calls __sanitizer_cov_trace_pc(), which the collector module rdma_cov
 * (scripts/coverage/rdma_cov.c) defines: it keeps every caller's return address, softirq
 * included, and lists them in debugfs. A block is one such call site: in the .ko, a
 * relocation against __sanitizer_cov_trace_pc at offset r in .text (or .text.unlikely) is
 * the call's operand, so the return address the collector sees is section base + r + 4 and
 * the call itself (r - 1) is what addr2line maps to a source line (the build keeps DWARF).
 *
 * In the guest: `loadCoverageModules()` puts rxe0 and siw0 on those builds
 * (scripts/guest/coverage-modules.sh), and `snapshotBlocks()` records the addresses seen so
 * far before each phase (ftrace.ts's markCoveragePhase), so a block's phase is the phase in
 * which it was first reached. On the host, `buildBlockCoverage()` maps them to files and lines.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { cacheRoot, packageRoot } from '../runtime/paths.js';

/** Set (to the snapshot file) in the processes of a `--coverage blocks` run. */
export const BLOCKS_ENV = 'RDMA_INTEROP_COVERAGE_BLOCKS';

/** The modules the project builds with trace-pc. */
export const BLOCK_MODULES = ['rdma_rxe', 'siw'] as const;
const SECTIONS = ['.text', '.text.unlikely'] as const;

/** What the collector held at one moment. */
export interface RawBlocks {
  /** module -> section -> its load address (hex). */
  readonly sections: Readonly<Record<string, Readonly<Record<string, string>>>>;
  /** Return addresses seen (hex). */
  readonly pcs: readonly string[];
  readonly lost: number;
}

/** The collector's content before a phase began (`end`: after the run). */
export interface BlockSnapshot {
  readonly before: string;
  readonly blocks: RawBlocks;
}

function guestScript(): string {
  return join(packageRoot(), 'scripts', 'guest', 'coverage-modules.sh');
}

/** Puts rxe0 and siw0 on the trace-pc builds (root, in the guest). Throws when it cannot. */
export function loadCoverageModules(): void {
  const r = spawnSync('bash', [guestScript(), 'load'], { encoding: 'utf8' });
  if (r.status !== 0)
    throw new Error(`cannot load the coverage modules: ${(r.stderr ?? '').trim() || r.status}`);
}

/** Parses the guest script's `dump` output. */
export function parseBlockDump(text: string): RawBlocks {
  const sections: Record<string, Record<string, string>> = {};
  const pcs: string[] = [];
  let lost = 0;
  for (const line of text.split('\n')) {
    const words = line.trim().split(/\s+/);
    if (words[0] === 'section' && words.length === 4) {
      const [, module, section, address] = words as [string, string, string, string];
      sections[module] = { ...(sections[module] ?? {}), [section]: address.replace(/^0x/, '') };
    } else if (words[0] === 'lost') lost = Number(words[1] ?? 0);
    else if (/^[0-9a-f]+$/.test(words[0] ?? '')) pcs.push(words[0] as string);
  }
  return { sections, pcs, lost };
}

/** What the collector holds now (in the guest). */
export function dumpBlocks(): RawBlocks {
  return parseBlockDump(
    execFileSync('bash', [guestScript(), 'dump'], { encoding: 'utf8', maxBuffer: 64 << 20 }),
  );
}

/** Appends a snapshot to the run's snapshot file when this run records blocks. */
export function snapshotBlocks(before: string): void {
  const file = process.env[BLOCKS_ENV];
  if (file === undefined || file === '') return;
  const line: BlockSnapshot = { before, blocks: dumpBlocks() };
  appendFileSync(file, `${JSON.stringify(line)}\n`);
}

/** The snapshots of a snapshot file. */
export function readSnapshots(file: string): BlockSnapshot[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as BlockSnapshot);
}

/** One block site of a module: where it is and the source line of its call. */
export interface BlockSite {
  readonly section: string;
  /** The return address's offset in its section (what the collector reports, less the base). */
  readonly offset: number;
  readonly file: string;
  readonly line: number;
  readonly function: string;
}

/** The trace-pc call sites of a .ko, each with its source line (readelf + addr2line). */
export function blockSites(ko: string): BlockSite[] {
  const relocs = execFileSync('readelf', ['-rW', ko], { encoding: 'utf8', maxBuffer: 256 << 20 });
  const bySection = new Map<string, number[]>();
  let section = '';
  for (const line of relocs.split('\n')) {
    const head = /^Relocation section '\.rela(\S+)'/.exec(line);
    if (head !== null) {
      section = head[1] as string;
      continue;
    }
    if (!line.includes('__sanitizer_cov_trace_pc')) continue;
    if (!(SECTIONS as readonly string[]).includes(section)) continue;
    const offset = Number.parseInt(line.trim().split(/\s+/)[0] ?? '', 16);
    if (Number.isFinite(offset))
      bySection.set(section, [...(bySection.get(section) ?? []), offset]);
  }
  const sites: BlockSite[] = [];
  for (const [sec, offsets] of bySection) {
    const input = offsets.map((r) => `0x${(r - 1).toString(16)}`).join('\n');
    const out = execFileSync('addr2line', ['-f', '-e', ko, '-j', sec], {
      input,
      encoding: 'utf8',
      maxBuffer: 256 << 20,
    }).split('\n');
    offsets.forEach((r, i) => {
      const fn = out[2 * i] ?? '??';
      const where = /^(.*):(\d+)/.exec(out[2 * i + 1] ?? '');
      sites.push({
        section: sec,
        offset: r + 4,
        file: where === null ? '??' : basename(where[1] as string),
        line: where === null ? 0 : Number(where[2]),
        function: fn,
      });
    });
  }
  return sites;
}

/** A source file's blocks: how many, reached by each phase, and each line's first phase. */
export interface FileBlocks {
  readonly module: string;
  readonly file: string;
  readonly blocks: number;
  /** phase -> blocks first reached in it; `all` -> reached at all. */
  readonly reached: Readonly<Record<string, number>>;
  /** Lines holding blocks: the phase that first reached one of them, or null (never). */
  readonly lines: readonly { readonly line: number; readonly first: string | null }[];
}

export interface BlockCoverage {
  readonly kernel: string;
  readonly method: 'trace-pc';
  readonly phases: readonly string[];
  readonly lost: number;
  readonly files: readonly FileBlocks[];
}

/** Where the line's coverage builds are on the host. */
export function coverageModulesDir(kernel: string, root = cacheRoot()): string {
  return join(root, 'coverage-modules', kernel);
}

/**
 * The block coverage of a run: the snapshots (cumulative) give each reached block the phase
 * in which it first appeared (before the first snapshot: `setup`); `sitesOf` gives each
 * module's sites.
 */
export function buildBlockCoverage(
  kernel: string,
  snapshots: readonly BlockSnapshot[],
  sitesOf: (module: string) => readonly BlockSite[],
): BlockCoverage {
  const last = snapshots.at(-1);
  const firstPhase = new Map<string, string>(); // "module section offset" -> phase
  const phases: string[] = [];
  let label = 'setup';
  for (const s of snapshots) {
    for (const pc of s.blocks.pcs) {
      const at = BigInt(`0x${pc}`);
      for (const [module, secs] of Object.entries(s.blocks.sections))
        for (const [sec, base] of Object.entries(secs)) {
          const off = at - BigInt(`0x${base}`);
          if (off < 0n || off > 0x1000000n) continue;
          const key = `${module} ${sec} ${off}`;
          if (!firstPhase.has(key)) firstPhase.set(key, label);
        }
    }
    if (!phases.includes(label)) phases.push(label);
    label = s.before;
  }
  const files = new Map<string, { module: string; file: string; sites: BlockSite[] }>();
  for (const module of BLOCK_MODULES)
    for (const site of sitesOf(module)) {
      const key = `${module} ${site.file}`;
      const f = files.get(key) ?? { module, file: site.file, sites: [] };
      f.sites.push(site);
      files.set(key, f);
    }
  const order = (p: string) => phases.indexOf(p);
  return {
    kernel,
    method: 'trace-pc',
    phases: phases.filter((p) => p !== 'end'),
    lost: last?.blocks.lost ?? 0,
    files: [...files.values()]
      .sort((a, b) => `${a.module} ${a.file}`.localeCompare(`${b.module} ${b.file}`))
      .map(({ module, file, sites }) => {
        const reached: Record<string, number> = { all: 0 };
        const lines = new Map<number, string | null>();
        for (const s of sites) {
          const p = firstPhase.get(`${module} ${s.section} ${s.offset}`) ?? null;
          if (p !== null) {
            reached.all = (reached.all ?? 0) + 1;
            reached[p] = (reached[p] ?? 0) + 1;
          }
          const had = lines.get(s.line);
          if (had === undefined || (p !== null && (had === null || order(p) < order(had))))
            lines.set(s.line, p);
        }
        return {
          module,
          file,
          blocks: sites.length,
          reached,
          lines: [...lines].sort(([a], [b]) => a - b).map(([line, first]) => ({ line, first })),
        };
      }),
  };
}

/** Line numbers as ranges: 3-5, 9. */
export function ranges(lines: readonly number[]): string {
  const out: string[] = [];
  let i = 0;
  while (i < lines.length) {
    let j = i;
    while (j + 1 < lines.length && (lines[j + 1] as number) === (lines[j] as number) + 1) j++;
    out.push(i === j ? `${lines[i]}` : `${lines[i]}-${lines[j]}`);
    i = j + 1;
  }
  return out.join(', ');
}

/** The files issue 32 names: receive and send paths, and siw's connection manager. */
export const NAMED_FILES = [
  'rxe_resp.c',
  'rxe_recv.c',
  'rxe_comp.c',
  'rxe_req.c',
  'siw_qp_rx.c',
  'siw_qp_tx.c',
  'siw_cm.c',
] as const;

function pct(n: number, of: number): string {
  return of === 0 ? '-' : `${((100 * n) / of).toFixed(1)} %`;
}

/**
 * report.md's block section: per file, the blocks reached by the end of each phase
 * (cumulative, in run order: the last column is the whole run), then the lines of the
 * named files no phase reached.
 */
export function renderBlockCoverage(all: readonly BlockCoverage[]): string {
  if (all.length === 0) return '';
  const out = ['## Block coverage (trace-pc builds)', ''];
  for (const c of all) {
    const upTo = (f: FileBlocks, k: number) =>
      c.phases.slice(0, k + 1).reduce((n, p) => n + (f.reached[p] ?? 0), 0);
    out.push(
      `Kernel ${c.kernel}; addresses lost by the collector: ${c.lost}. Each column: blocks reached by the end of that phase.`,
      '',
      `| module | file | blocks | ${c.phases.map((p) => `to ${p}`).join(' | ')} |`,
      `|---|---|---|${c.phases.map(() => '---').join('|')}|`,
    );
    for (const f of c.files)
      out.push(
        `| ${f.module} | ${f.file} | ${f.blocks} | ${c.phases
          .map((_, k) => `${upTo(f, k)} (${pct(upTo(f, k), f.blocks)})`)
          .join(' | ')} |`,
      );
    for (const name of NAMED_FILES) {
      const f = c.files.find((x) => x.file === name);
      if (f === undefined) continue;
      const never = f.lines.filter((l) => l.first === null).map((l) => l.line);
      out.push('', `### ${name}: lines never reached (${never.length} of ${f.lines.length})`, '');
      out.push(never.length === 0 ? 'none' : ranges(never));
    }
    out.push('');
  }
  return `${out.join('\n')}\n`;
}
