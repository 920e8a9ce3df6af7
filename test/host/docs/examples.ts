/**
 * The documentation's code examples as tests (the convention is in docs/contributing.md):
 * every fenced block of README.md and docs/*.md is one of
 * - ```ts: a complete ES module, type-checked with the project's tsc settings (one tsc
 *   program for all of them, importing the package by its name, `rdma-interop/...`,
 *   which resolves to dist/ by self-reference) and then run with Node; it checks its own
 *   results with `node:assert/strict`. It runs on the host, or in the guest when it needs
 *   devices (it imports `rdma-interop/verbs`, or its info string says `device`).
 * - ```sh: commands run with bash from the repository root, `rdma-interop` meaning the
 *   built CLI, each expected to exit 0; or, when they cannot run in a test, marked
 *   `not-run="<why>"` in the info string.
 * - ``` or ```text: output or a listing, not code.
 * Used by test/host/docs/ (extract, type-check, run host blocks, run sh blocks) and
 * test/kernel/docs/ (run device blocks in the guest).
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root (this file is test/host/docs/). */
export const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** The languages a fence may name; any other is a mistake the tests report. */
export const KNOWN_LANGUAGES = ['ts', 'sh', 'text', ''] as const;
export type BlockLanguage = (typeof KNOWN_LANGUAGES)[number];

export interface DocBlock {
  /** Repository-relative path of the Markdown file. */
  readonly file: string;
  /** 1-based line of the opening fence. */
  readonly line: number;
  /** The fence's language (first word of the info string). */
  readonly language: string;
  /** The rest of the info string (`device`, `not-run="..."`). */
  readonly attributes: string;
  readonly code: string;
  /** `docs/engine.md:36`: how tests and messages name the block. */
  readonly id: string;
}

/** README.md and docs/*.md, in a stable order. */
export function docFiles(): string[] {
  const docs = readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => `docs/${f}`);
  return ['README.md', ...docs];
}

/** The fenced blocks of one Markdown text (``` fences at the start of a line). */
export function extractBlocks(file: string, markdown: string): DocBlock[] {
  const blocks: DocBlock[] = [];
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\S*)\s*(.*)$/.exec(lines[i] ?? '');
    if (open === null) continue;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && !/^```\s*$/.test(lines[i] ?? ''); i++) body.push(lines[i] ?? '');
    const line = start + 1;
    blocks.push({
      file,
      line,
      language: open[1] ?? '',
      attributes: open[2] ?? '',
      code: `${body.join('\n')}\n`,
      id: `${file}:${line}`,
    });
  }
  return blocks;
}

/** Every block of every documentation file. */
export function allBlocks(): DocBlock[] {
  return docFiles().flatMap((f) => extractBlocks(f, readFileSync(join(ROOT, f), 'utf8')));
}

/** A ts block that needs real RDMA devices, so runs in the guest. */
export function needsDevices(block: DocBlock): boolean {
  return /\bdevice\b/.test(block.attributes) || /from ['"]rdma-interop\/verbs['"]/.test(block.code);
}

/** ts examples that do not check their results with node:assert yet (same rule as above). */
export const NO_ASSERT_YET: Readonly<Record<string, string>> = {};

/**
 * sh blocks of files another change owns, not yet marked in the file itself, by ordinal
 * (`docs/verbs.md sh#1`): treated as marked. Move each mark into its file and drop it here.
 */
export const PENDING_NOT_RUN: Readonly<Record<string, string>> = {};

/** The n-th (1-based) block of its file in `language`: `docs/verbs.md ts#2`. */
export function ordinal(blocks: readonly DocBlock[], block: DocBlock): string {
  const same = blocks.filter((b) => b.file === block.file && b.language === block.language);
  return `${block.file} ${block.language}#${same.indexOf(block) + 1}`;
}

/** The reason a sh block is not run, if it is marked so. */
export function notRunReason(blocks: readonly DocBlock[], block: DocBlock): string | undefined {
  return /not-run="([^"]+)"/.exec(block.attributes)?.[1] ?? PENDING_NOT_RUN[ordinal(blocks, block)];
}

/** File name of a block's module: `docs-engine.md-36.ts`. */
export function moduleName(block: DocBlock): string {
  return `${block.file.replace(/[/.]/g, '-')}-${block.line}`;
}

/** Where extracted examples go: inside the package, so `rdma-interop` self-resolves. */
export const EXAMPLES_DIR = join(ROOT, '.cache', 'doc-examples');

/**
 * `<dir>/bin`, holding an `rdma-interop` that runs the built CLI: the PATH entry under which
 * the docs' sh blocks see the command as an installed user would.
 */
export function cliShim(dir: string): string {
  const bin = join(dir, 'bin');
  mkdirSync(bin, { recursive: true });
  const shim = join(bin, 'rdma-interop');
  writeFileSync(
    shim,
    `#!/bin/sh\nexec "${process.execPath}" "${join(ROOT, 'dist', 'cli', 'main.js')}" "$@"\n`,
  );
  chmodSync(shim, 0o755);
  return bin;
}

export interface TypeCheckResult {
  /** tsc's diagnostics per block id (empty array: it compiles). */
  readonly errors: ReadonlyMap<string, string[]>;
  /** The compiled module of each block id. */
  readonly outputs: ReadonlyMap<string, string>;
}

/**
 * Writes the ts blocks into EXAMPLES_DIR and compiles them in one tsc program with the
 * project's settings (tsconfig.json: strict, noUncheckedIndexedAccess, ...), emitting
 * JavaScript even where there are errors (each block's test reports its own).
 */
export function typeCheck(
  blocks: readonly DocBlock[],
  // Its own directory: other test files write theirs under EXAMPLES_DIR in parallel.
  dir: string = join(EXAMPLES_DIR, 'typecheck'),
): TypeCheckResult {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  for (const b of blocks) writeFileSync(join(dir, `${moduleName(b)}.ts`), b.code);
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({
      extends: relative(dir, join(ROOT, 'tsconfig.json')),
      compilerOptions: {
        rootDir: '.',
        outDir: 'out',
        noEmit: false,
        declaration: false,
        sourceMap: false,
      },
      include: ['*.ts'],
    }),
  );
  const tsc = spawnSync(
    process.execPath,
    [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', dir, '--pretty', 'false'],
    { cwd: ROOT, encoding: 'utf8' },
  );
  const errors = new Map<string, string[]>(blocks.map((b) => [b.id, []]));
  const byModule = new Map(blocks.map((b) => [`${moduleName(b)}.ts`, b]));
  for (const line of tsc.stdout.split('\n')) {
    const m = /([^/\s]+\.ts)\((\d+),(\d+)\): (error .*)$/.exec(line);
    const block = m === null ? undefined : byModule.get(m[1] ?? '');
    if (m === null || block === undefined) continue;
    // Report the line as the Markdown file numbers it.
    const docLine = block.line + Number(m[2]);
    errors.get(block.id)?.push(`${block.file}:${docLine}: ${m[4]}`);
  }
  if (tsc.status !== 0 && [...errors.values()].every((e) => e.length === 0))
    throw new Error(`tsc failed outside the examples:\n${tsc.stdout}${tsc.stderr}`);
  const outputs = new Map(blocks.map((b) => [b.id, join(dir, 'out', `${moduleName(b)}.js`)]));
  return { errors, outputs };
}

/** Runs one compiled example with `node` (default: this Node); resolves its outcome. */
export function runModule(file: string, node: string = process.execPath, timeoutMs = 60_000) {
  const r = spawnSync(node, [file], { cwd: ROOT, encoding: 'utf8', timeout: timeoutMs });
  return { status: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr };
}

/**
 * Examples known not to compile or run yet, with why; their tests are `it.fails`, so
 * fixing one makes its test fail until the entry goes (nobody forgets to remove it).
 */
export const KNOWN_BROKEN: Readonly<Record<string, string>> = {};

/**
 * Transpiles one ts block to JavaScript (no type-check: the host tests did that) into
 * `dir` inside the package, for the guest, where a whole tsc run would be slow.
 */
/**
 * Writes the block as an ES module: its types erased, the rest as written. `target`
 * ES2022 (the default) also lowers `using` declarations for Node versions before 24;
 * `esnext` keeps them, as a user who copies the example into a `.mjs` on Node 24 has them.
 */
export async function transpileBlock(
  block: DocBlock,
  dir: string,
  target: 'es2022' | 'esnext' = 'es2022',
): Promise<string> {
  const ts = (await import('typescript')).default;
  const { outputText } = ts.transpileModule(block.code, {
    compilerOptions: {
      target: target === 'esnext' ? ts.ScriptTarget.ESNext : ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.ESNext,
      esModuleInterop: true,
    },
    fileName: `${moduleName(block)}.ts`,
  });
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${moduleName(block)}${target === 'esnext' ? '.esnext' : ''}.mjs`);
  writeFileSync(file, outputText);
  return file;
}
