// SPDX-License-Identifier: GPL-2.0
/*
 * rdma_cov: the block-coverage collector of rdma-interop (issue 32). rdma_rxe.ko and siw.ko
 * built by scripts/setup/coverage-modules.sh are compiled with -fsanitize-coverage=trace-pc,
 * so every basic block calls __sanitizer_cov_trace_pc(); the kernel has no KCOV, and KCOV
 * would record nothing in softirq anyway, where both receive paths run. This module defines
 * that function: it keeps each caller's return address once, in a lock-free open-addressing
 * table (cmpxchg only: safe in any context, softirq and hardirq included), and lists the
 * addresses in debugfs, one hex address a line:
 *   /sys/kernel/debug/rdma_cov/pcs    read: the addresses seen; write anything: forget them
 *   /sys/kernel/debug/rdma_cov/lost   how many addresses found the table full
 *   /sys/kernel/debug/rdma_cov/count  how many addresses are kept (the guided fuzz's feedback:
 *                                     cheaper to read than the list)
 * The host maps each address to its module by /sys/module/<m>/sections/.text and to a
 * source line by addr2line on the module's debug info (src/coverage/blocks.ts).
 * This file is built without the instrumentation (it would call itself).
 */
#include <linux/module.h>
#include <linux/debugfs.h>
#include <linux/seq_file.h>
#include <linux/atomic.h>
#include <linux/vmalloc.h>
#include <linux/hash.h>

#define RDMA_COV_BITS 16
#define RDMA_COV_SLOTS (1UL << RDMA_COV_BITS)
/* Probes before an address counts as lost: the table is large next to the ~8000 blocks. */
#define RDMA_COV_PROBES 64

static unsigned long *rdma_cov_table;
static atomic_long_t rdma_cov_lost = ATOMIC_LONG_INIT(0);
static atomic_long_t rdma_cov_count = ATOMIC_LONG_INIT(0);
static struct dentry *rdma_cov_dir;

void notrace __sanitizer_cov_trace_pc(void)
{
	unsigned long pc = (unsigned long)__builtin_return_address(0);
	unsigned long *table = READ_ONCE(rdma_cov_table);
	unsigned long slot, seen;
	int i;

	if (!table)
		return;
	slot = hash_long(pc, RDMA_COV_BITS);
	for (i = 0; i < RDMA_COV_PROBES; i++) {
		unsigned long *at = &table[(slot + i) & (RDMA_COV_SLOTS - 1)];

		seen = READ_ONCE(*at);
		if (seen == pc)
			return;
		if (seen == 0) {
			seen = cmpxchg(at, 0UL, pc);
			if (seen == 0)
				atomic_long_inc(&rdma_cov_count);
			if (seen == 0 || seen == pc)
				return;
		}
	}
	atomic_long_inc(&rdma_cov_lost);
}
EXPORT_SYMBOL(__sanitizer_cov_trace_pc);

static int rdma_cov_pcs_show(struct seq_file *m, void *v)
{
	unsigned long i, pc;

	for (i = 0; i < RDMA_COV_SLOTS; i++) {
		pc = READ_ONCE(rdma_cov_table[i]);
		if (pc)
			seq_printf(m, "%lx\n", pc);
	}
	return 0;
}

static int rdma_cov_pcs_open(struct inode *inode, struct file *file)
{
	return single_open_size(file, rdma_cov_pcs_show, NULL, 64 * 1024);
}

static ssize_t rdma_cov_pcs_write(struct file *file, const char __user *buf, size_t len,
				  loff_t *ppos)
{
	unsigned long i;

	for (i = 0; i < RDMA_COV_SLOTS; i++)
		WRITE_ONCE(rdma_cov_table[i], 0UL);
	atomic_long_set(&rdma_cov_lost, 0);
	atomic_long_set(&rdma_cov_count, 0);
	return len;
}

static const struct file_operations rdma_cov_pcs_fops = {
	.owner = THIS_MODULE,
	.open = rdma_cov_pcs_open,
	.read = seq_read,
	.llseek = seq_lseek,
	.release = single_release,
	.write = rdma_cov_pcs_write,
};

static int rdma_cov_lost_get(void *data, u64 *val)
{
	*val = atomic_long_read(&rdma_cov_lost);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(rdma_cov_lost_fops, rdma_cov_lost_get, NULL, "%llu\n");

static int rdma_cov_count_get(void *data, u64 *val)
{
	*val = atomic_long_read(&rdma_cov_count);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(rdma_cov_count_fops, rdma_cov_count_get, NULL, "%llu\n");

static int __init rdma_cov_init(void)
{
	unsigned long *table = vzalloc(RDMA_COV_SLOTS * sizeof(unsigned long));

	if (!table)
		return -ENOMEM;
	rdma_cov_dir = debugfs_create_dir("rdma_cov", NULL);
	debugfs_create_file("pcs", 0600, rdma_cov_dir, NULL, &rdma_cov_pcs_fops);
	debugfs_create_file_unsafe("lost", 0400, rdma_cov_dir, NULL, &rdma_cov_lost_fops);
	debugfs_create_file_unsafe("count", 0400, rdma_cov_dir, NULL, &rdma_cov_count_fops);
	WRITE_ONCE(rdma_cov_table, table);
	return 0;
}

static void __exit rdma_cov_exit(void)
{
	unsigned long *table = rdma_cov_table;

	/* Only once rdma_rxe and siw are gone (they hold a reference on this module). */
	WRITE_ONCE(rdma_cov_table, NULL);
	debugfs_remove_recursive(rdma_cov_dir);
	vfree(table);
}

module_init(rdma_cov_init);
module_exit(rdma_cov_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("rdma-interop block coverage collector for rdma_rxe and siw (trace-pc)");
