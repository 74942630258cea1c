/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The part of /usr/sbin/ip that a link_<kind>.so plugin uses.
 *
 * There is no iproute2 development package, so the plugin ABI is declared
 * here by hand: struct link_util (72 bytes on x86-64, unchanged from 4.20
 * to 7.1) and prototypes of functions that ip exports with -export-dynamic,
 * each compared with iproute2's own headers at v6.1.0 (Debian 12), v6.15.0
 * (Debian 13) and v7.1.0; ip-imports.txt lists them, and check-symbols.sh
 * refuses a plugin that imports anything else.
 * Only exported functions may be declared here: ip resolves the plugin
 * lazily, so a call to anything else kills ip with "symbol lookup error".
 * The Makefile checks every undefined symbol of the plugin against the
 * dynamic symbols of ip and libc.  Inline helpers of iproute2 (print_string,
 * rta_getattr_u8, NEXT_ARG, ...) are not exported and are not declared.
 */
#ifndef IP_PLUGIN_H
#define IP_PLUGIN_H

#include <stdbool.h>
#include <stdio.h>
#include <stdnoreturn.h>
#include <linux/types.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

/* Size of the request buffer that ip hands to parse_opt(). */
#define IP_REQ_MAXLEN	1024

struct link_util {
	struct link_util *next;	/* written by ip: must not be const */
	const char *id;		/* kind, "stt" */
	int maxattr;		/* highest IFLA_INFO_DATA attribute */
	int (*parse_opt)(struct link_util *lu, int argc, char **argv,
			 struct nlmsghdr *n);
	void (*print_opt)(struct link_util *lu, FILE *f, struct rtattr *tb[]);
	void (*print_xstats)(struct link_util *lu, FILE *f,
			     struct rtattr *xstats);
	void (*print_help)(struct link_util *lu, int argc, char **argv,
			   FILE *f);
	int (*parse_ifla_xstats)(struct link_util *lu, int argc, char **argv);
	int (*print_ifla_xstats)(struct nlmsghdr *n, void *arg);
};

/* lib/libnetlink.c */
int addattr(struct nlmsghdr *n, int maxlen, int type);
int addattr8(struct nlmsghdr *n, int maxlen, int type, __u8 data);
int addattr16(struct nlmsghdr *n, int maxlen, int type, __u16 data);
int addattr32(struct nlmsghdr *n, int maxlen, int type, __u32 data);
int addattr64(struct nlmsghdr *n, int maxlen, int type, __u64 data);
int addattr_l(struct nlmsghdr *n, int maxlen, int type, const void *data,
	      int alen);

/* lib/utils.c.  Not matches(): its return type changed (bool to int in
 * 6.8); link_stt.c has its own.
 */
int get_unsigned(unsigned int *val, const char *arg, int base);
int get_u16(__u16 *val, const char *arg, int base);
noreturn void incomplete_command(void);
noreturn void invarg(const char *msg, const char *arg);
noreturn void duparg2(const char *key, const char *arg);
int nodev(const char *dev);
const char *format_host(int af, int len, const void *addr);

/* lib/rt_names.c */
int rtnl_dsfield_a2n(__u32 *id, const char *arg);

/* lib/ll_map.c */
unsigned int ll_name_to_index(const char *name);
const char *ll_index_to_name(unsigned int idx);

/* lib/json_print.c, lib/color.c */
enum output_type {
	PRINT_FP = 1,
	PRINT_JSON = 2,
	PRINT_ANY = 4,
};

enum color_attr {
	COLOR_IFNAME,
	COLOR_MAC,
	COLOR_INET,
	COLOR_INET6,
	COLOR_OPERSTATE_UP,
	COLOR_OPERSTATE_DOWN,
	COLOR_NONE,
};

bool is_json_context(void);
int print_color_string(enum output_type t, enum color_attr color,
		       const char *key, const char *fmt, const char *value);
int print_color_uint(enum output_type t, enum color_attr color,
		     const char *key, const char *fmt, unsigned int value);
int print_color_u64(enum output_type t, enum color_attr color,
		    const char *key, const char *fmt, __u64 value);
int print_color_bool(enum output_type t, enum color_attr color,
		     const char *key, const char *fmt, bool value);
int print_color_0xhex(enum output_type t, enum color_attr color,
		      const char *key, const char *fmt,
		      unsigned long long value);

#endif /* IP_PLUGIN_H */
