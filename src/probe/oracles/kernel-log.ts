/**
 * The kernel-log oracles (issue 32): each names one kind of report the kernel writes when
 * it catches itself misbehaving, so that a failure says which detector fired. The patterns
 * are the kernel's own message prefixes, cited per row.
 */

/** One named detector over dmesg lines. */
export interface KernelLogOracle {
  /** The oracle's name in results and failures (`kernel-log/<name>`). */
  readonly name: string;
  readonly pattern: RegExp;
  /** Where the kernel prints it. */
  readonly source: string;
}

/** In order: the first that matches a line names it (KFENCE and KASAN before plain BUG). */
export const KERNEL_LOG_ORACLES: readonly KernelLogOracle[] = [
  {
    name: 'kfence',
    pattern: /BUG: KFENCE:|KFENCE:/,
    source: 'mm/kfence/report.c ("BUG: KFENCE: %s")',
  },
  { name: 'kasan', pattern: /KASAN/, source: 'mm/kasan/report.c ("BUG: KASAN: %s")' },
  { name: 'ubsan', pattern: /UBSAN:/, source: 'lib/ubsan.c ("UBSAN: %s in %s")' },
  {
    name: 'soft-lockup',
    pattern: /soft lockup/,
    source: 'kernel/watchdog.c ("watchdog: BUG: soft lockup - CPU#%d stuck")',
  },
  {
    name: 'rcu-stall',
    pattern: /rcu.*(detected stalls|self-detected stall)/,
    source: 'kernel/rcu/tree_stall.h ("INFO: %s detected stalls on CPUs/tasks")',
  },
  {
    name: 'hung-task',
    pattern: /blocked for more than \d+ seconds/,
    source: 'kernel/hung_task.c ("INFO: task %s:%d blocked for more than %ld seconds.")',
  },
  {
    name: 'refcount',
    pattern: /refcount_t: /,
    source: 'lib/refcount.c ("refcount_t: underflow; use-after-free.", "saturated")',
  },
  {
    name: 'list-corruption',
    pattern: /list_(add|del) corruption/,
    source: 'lib/list_debug.c',
  },
  {
    name: 'general-protection',
    pattern: /general protection/,
    source: 'arch/x86/kernel/traps.c ("general protection fault")',
  },
  { name: 'oops', pattern: /Oops/, source: 'arch/x86/kernel/dumpstack.c (__die: "Oops: ")' },
  {
    name: 'bug',
    pattern: /BUG/,
    source: 'BUG(), "BUG: unable to handle page fault" (arch/x86/mm/fault.c)',
  },
  {
    name: 'warning',
    pattern: /WARNING/,
    source: 'kernel/panic.c __warn ("WARNING: CPU: %d PID: %d at")',
  },
  { name: 'rip', pattern: /RIP:/, source: 'arch/x86/kernel/process_64.c __show_regs' },
];

/** Any line an oracle names (the former KERNEL_TROUBLE, plus UBSAN, KFENCE, stalls, refcounts). */
export const KERNEL_TROUBLE = new RegExp(
  KERNEL_LOG_ORACLES.map((o) => `(?:${o.pattern.source})`).join('|'),
);

/** The oracle that names `line`, or undefined when no detector wrote it. */
export function kernelLogOracleOf(line: string): string | undefined {
  return KERNEL_LOG_ORACLES.find((o) => o.pattern.test(line))?.name;
}

/** The distinct oracles over `lines`, in table order, as `kernel-log/<name>`. */
export function kernelLogOracles(lines: readonly string[]): string[] {
  const fired = new Set(lines.map(kernelLogOracleOf).filter((n) => n !== undefined));
  return KERNEL_LOG_ORACLES.filter((o) => fired.has(o.name)).map((o) => `kernel-log/${o.name}`);
}
