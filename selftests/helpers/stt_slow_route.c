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
 *   insmod stt_slow_route.ko delay_us=6000
 *
 * The delay is a busy wait where the lookup is made (kprobe handlers run
 * with preemption off; in transmit, bottom halves are off too), as on a
 * slow CPU.  Counter of delayed lookups: /sys/kernel/debug/stt_slow_route.
 *
 * Built for the selftests only (selftests/helpers), never installed.
 */

#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/kprobes.h>
#include <linux/module.h>

static unsigned int delay_us = 6000;
module_param(delay_us, uint, 0444);
MODULE_PARM_DESC(delay_us, "Microseconds each route cache lookup waits");

static atomic_long_t sr_delayed;
static struct dentry *sr_debugfs;

static int sr_pre(struct kprobe *kp, struct pt_regs *regs)
{
	/* udelay() is only good for short waits: step by 100 us. */
	unsigned int left = delay_us;

	while (left) {
		unsigned int step = min(left, 100U);

		udelay(step);
		left -= step;
	}
	atomic_long_inc(&sr_delayed);
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
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(sr);

static int __init sr_init(void)
{
	int i, err;

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
