// SPDX-License-Identifier: GPL-2.0
/*
 * stt_slow_route: test-only module that delays every lookup in a tunnel's
 * route cache (dst_cache_get_ip4/ip6) by a few milliseconds, as a slow or
 * preempted CPU between reading the configuration and looking up the route
 * would.  A transmit that read the configuration before a change and looks
 * its route up after the change invalidated the cache is then the rule,
 * not a microsecond window, so a test can show whether that route
 * outlives the change.
 *
 *   insmod stt_slow_route.ko delay_us=6000 cpu=0
 *
 * With cpu=N only CPU N's lookups wait (default -1: every CPU's).  One
 * slow CPU beside fast ones is what exposes a stale cache best: the
 * fast CPUs go on transmitting, and changing the configuration, while the
 * slow one is between its configuration and its route.
 *
 * The delay is a busy wait where the lookup is made (kprobe handlers run
 * with preemption off; in transmit, bottom halves are off too), as on a
 * slow CPU.  It watches the clock rather than calling udelay(): under QEMU
 * TCG the CPUs' delay calibrations can be far off (in one guest, 60
 * udelay(100) lasted 7 us on CPU 1 and about 40 ms on CPU 0).
 * /sys/kernel/debug/stt_slow_route counts the delayed lookups and the
 * time they waited in all (lookups on other CPUs than cpu= not counted).
 *
 * Built for the selftests only (selftests/helpers), never installed.
 */

#include <linux/cpumask.h>
#include <linux/debugfs.h>
#include <linux/kprobes.h>
#include <linux/ktime.h>
#include <linux/math64.h>
#include <linux/module.h>

static unsigned int delay_us = 6000;
module_param(delay_us, uint, 0444);
MODULE_PARM_DESC(delay_us, "Microseconds each route cache lookup waits");
static int cpu = -1;
module_param(cpu, int, 0444);
MODULE_PARM_DESC(cpu, "Only this CPU's lookups wait (-1: every CPU's)");

static atomic_long_t sr_delayed;
static atomic64_t sr_waited_ns;
static struct dentry *sr_debugfs;

static int sr_pre(struct kprobe *kp, struct pt_regs *regs)
{
	u64 start, now;

	if (cpu >= 0 && smp_processor_id() != cpu)
		return 0;
	start = ktime_get_ns();
	do {
		cpu_relax();
		now = ktime_get_ns();
	} while (now - start < delay_us * (u64)NSEC_PER_USEC);
	atomic_long_inc(&sr_delayed);
	atomic64_add(now - start, &sr_waited_ns);
	return 0;
}

static struct kprobe sr_probes[] = {
	{ .symbol_name = "dst_cache_get_ip4", .pre_handler = sr_pre },
#if IS_ENABLED(CONFIG_IPV6)
	{ .symbol_name = "dst_cache_get_ip6", .pre_handler = sr_pre },
#endif
};

static struct kprobe *sr_probe_ptrs[ARRAY_SIZE(sr_probes)];

static int sr_show(struct seq_file *m, void *v)
{
	seq_printf(m, "delayed %ld\n", atomic_long_read(&sr_delayed));
	seq_printf(m, "waited_ms %llu\n",
		   div_u64(atomic64_read(&sr_waited_ns), NSEC_PER_MSEC));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(sr);

static int __init sr_init(void)
{
	int i, err;

	/* A CPU that does not exist would slow nothing, silently. */
	if (cpu < -1 || cpu >= (int)nr_cpu_ids) {
		pr_err("stt_slow_route: cpu=%d: no such CPU (0-%u, or -1)\n",
		       cpu, nr_cpu_ids - 1);
		return -EINVAL;
	}
	for (i = 0; i < ARRAY_SIZE(sr_probes); i++)
		sr_probe_ptrs[i] = &sr_probes[i];
	err = register_kprobes(sr_probe_ptrs, ARRAY_SIZE(sr_probe_ptrs));
	if (err)
		return err;
	sr_debugfs = debugfs_create_file("stt_slow_route", 0444, NULL, NULL,
					 &sr_fops);
	return 0;
}

static void __exit sr_exit(void)
{
	debugfs_remove(sr_debugfs);
	unregister_kprobes(sr_probe_ptrs, ARRAY_SIZE(sr_probe_ptrs));
}

module_init(sr_init);
module_exit(sr_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("STT selftests: delay tunnel route cache lookups");
