// SPDX-License-Identifier: GPL-2.0
/*
 * link_stt.so: "ip link ... type stt" for iproute2 6.1 without patching it.
 *
 * ip dlopen()s $IP_LIB_DIR/link_stt.so for the unknown kind "stt" and uses
 * stt_link_util.  Words and error messages follow "ip link ... type geneve".
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <linux/stt.h>

#include "ip_plugin.h"

#define STT_NEXT_ARG() do {				\
	argv++;						\
	if (--argc <= 0)				\
		incomplete_command();			\
} while (0)

struct stt_addr {
	int family;			/* AF_UNSPEC when not given */
	union {
		struct in_addr v4;
		struct in6_addr v6;
	};
};

static void stt_explain(FILE *f)
{
	fprintf(f,
		"Usage: ... stt [ { id | key } KEY ]\n"
		"\t\t[ remote ADDR ]\n"
		"\t\t[ local ADDR ]\n"
		"\t\t[ dstport PORT ]\n"
		"\t\t[ ttl TTL ]\n"
		"\t\t[ tos TOS ]\n"
		"\t\t[ df DF ]\n"
		"\t\t[ [no]external ]\n"
		"\t\t[ dev PHYS_DEV ]\n"
		"\n"
		"Where:\tKEY   := 0-18446744073709551615\n"
		"\tADDR  := IP_ADDRESS\n"
		"\tPORT  := 1-65535 (default %u)\n"
		"\tTTL   := { 1..255 | auto | inherit }\n"
		"\tTOS   := { NUMBER | inherit }\n"
		"\tDF    := { unset | set | inherit }\n",
		STT_DST_PORT);
}

static void stt_check_duparg(__u64 *attrs, int type, const char *key,
			     const char *arg)
{
	if (*attrs & (1ULL << type))
		duparg2(key, arg);
	*attrs |= 1ULL << type;
}

/* Decimal, or hexadecimal with 0x; the whole u64 range, nothing else. */
static int stt_get_key(__u64 *key, const char *arg)
{
	const char *digits = arg;
	unsigned long long val;
	int base = 10;
	char *end;

	if (!strncasecmp(arg, "0x", 2)) {
		digits = arg + 2;
		base = 16;
	}
	/* strtoull() would accept blanks and a sign */
	if (!isxdigit((unsigned char)*digits))
		return -1;
	errno = 0;
	val = strtoull(arg, &end, base);
	if (*end || errno)
		return -1;
	*key = val;
	return 0;
}

static int stt_get_addr(struct stt_addr *addr, const char *arg)
{
	if (inet_pton(AF_INET, arg, &addr->v4) == 1)
		addr->family = AF_INET;
	else if (inet_pton(AF_INET6, arg, &addr->v6) == 1)
		addr->family = AF_INET6;
	else
		return -1;
	return 0;
}

static bool stt_addr_is_multicast(const struct stt_addr *addr)
{
	if (addr->family == AF_INET)
		return IN_MULTICAST(ntohl(addr->v4.s_addr));
	return IN6_IS_ADDR_MULTICAST(&addr->v6);
}

static bool stt_addr_is_any(const struct stt_addr *addr)
{
	if (addr->family == AF_INET)
		return addr->v4.s_addr == htonl(INADDR_ANY);
	return IN6_IS_ADDR_UNSPECIFIED(&addr->v6);
}

/* Is @word a non-empty prefix of @keyword ("rem" for "remote")?  ip's own
 * matches() does this, but returned bool until iproute2 6.7 and int (the
 * first mismatching character) from 6.8: a plugin declaring one reads a
 * garbage return from the other (ttl inherit became 0x74).  Ours is the
 * same with every ip.
 */
static bool stt_word(const char *word, const char *keyword)
{
	size_t n = strlen(word);

	return n && n <= strlen(keyword) && !strncmp(word, keyword, n);
}

static void stt_addattr_addr(struct nlmsghdr *n, int type4, int type6,
			     const struct stt_addr *addr)
{
	if (addr->family == AF_INET)
		addattr_l(n, IP_REQ_MAXLEN, type4, &addr->v4,
			  sizeof(addr->v4));
	else if (addr->family == AF_INET6)
		addattr_l(n, IP_REQ_MAXLEN, type6, &addr->v6,
			  sizeof(addr->v6));
}

static int stt_parse_opt(struct link_util *lu, int argc, char **argv,
			 struct nlmsghdr *n)
{
	bool set_op = n->nlmsg_type == RTM_NEWLINK &&
		      !(n->nlmsg_flags & NLM_F_CREATE);
	struct stt_addr remote = { .family = AF_UNSPEC };
	struct stt_addr local = { .family = AF_UNSPEC };
	bool ttl_inherit = false;
	bool metadata = false;
	unsigned int ifindex = 0;
	__u16 dstport = 0;
	__u8 df = 0;
	__u8 ttl = 0;
	__u8 tos = 0;
	__u64 attrs = 0;
	__u64 key = 0;

	while (argc > 0) {
		if (stt_word(*argv, "id") || !strcmp(*argv, "key")) {
			STT_NEXT_ARG();
			stt_check_duparg(&attrs, IFLA_STT_ID, "id", *argv);
			if (stt_get_key(&key, *argv))
				invarg("invalid id", *argv);
		} else if (stt_word(*argv, "remote")) {
			STT_NEXT_ARG();
			stt_check_duparg(&attrs, IFLA_STT_REMOTE, "remote",
					 *argv);
			if (stt_get_addr(&remote, *argv) ||
			    stt_addr_is_multicast(&remote) ||
			    stt_addr_is_any(&remote))
				invarg("invalid remote address", *argv);
		} else if (stt_word(*argv, "local")) {
			STT_NEXT_ARG();
			stt_check_duparg(&attrs, IFLA_STT_LOCAL, "local",
					 *argv);
			if (stt_get_addr(&local, *argv) ||
			    stt_addr_is_multicast(&local))
				invarg("invalid local address", *argv);
		} else if (stt_word(*argv, "dstport")) {
			STT_NEXT_ARG();
			stt_check_duparg(&attrs, IFLA_STT_PORT, "dstport",
					 *argv);
			if (get_u16(&dstport, *argv, 0) || !dstport)
				invarg("dstport", *argv);
		} else if (stt_word(*argv, "ttl") ||
			   stt_word(*argv, "hoplimit")) {
			unsigned int uval;

			STT_NEXT_ARG();
			stt_check_duparg(&attrs, IFLA_STT_TTL, "ttl", *argv);
			if (!strcmp(*argv, "inherit")) {
				ttl_inherit = true;
			} else if (strcmp(*argv, "auto")) {
				if (get_unsigned(&uval, *argv, 0))
					invarg("invalid TTL", *argv);
				if (uval > 255)
					invarg("TTL must be <= 255", *argv);
				ttl = uval;
			}
		} else if (stt_word(*argv, "tos") ||
			   stt_word(*argv, "dsfield")) {
			__u32 uval;

			STT_NEXT_ARG();
			stt_check_duparg(&attrs, IFLA_STT_TOS, "tos", *argv);
			if (!strcmp(*argv, "inherit")) {
				tos = 1;
			} else {
				if (rtnl_dsfield_a2n(&uval, *argv))
					invarg("bad TOS value", *argv);
				tos = uval;
			}
		} else if (stt_word(*argv, "df")) {
			STT_NEXT_ARG();
			stt_check_duparg(&attrs, IFLA_STT_DF, "df", *argv);
			if (!strcmp(*argv, "unset"))
				df = STT_DF_UNSET;
			else if (!strcmp(*argv, "set"))
				df = STT_DF_SET;
			else if (!strcmp(*argv, "inherit"))
				df = STT_DF_INHERIT;
			else
				invarg("DF must be 'unset', 'set' or 'inherit'",
				       *argv);
		} else if (stt_word(*argv, "external")) {
			stt_check_duparg(&attrs, IFLA_STT_COLLECT_METADATA,
					 *argv, *argv);
			metadata = true;
		} else if (stt_word(*argv, "noexternal")) {
			stt_check_duparg(&attrs, IFLA_STT_COLLECT_METADATA,
					 *argv, *argv);
			metadata = false;
		} else if (stt_word(*argv, "dev")) {
			STT_NEXT_ARG();
			stt_check_duparg(&attrs, IFLA_STT_LINK, "dev", *argv);
			ifindex = ll_name_to_index(*argv);
			if (!ifindex)
				exit(nodev(*argv));
		} else {
			if (!stt_word(*argv, "help"))
				fprintf(stderr, "stt: unknown command \"%s\"?\n",
					*argv);
			stt_explain(stderr);
			return -1;
		}
		argc--, argv++;
	}

	if (metadata && (attrs & (1ULL << IFLA_STT_ID))) {
		fprintf(stderr, "stt: both 'external' and id cannot be specified\n");
		return -1;
	}
	if (metadata && remote.family != AF_UNSPEC) {
		fprintf(stderr, "stt: both 'external' and remote cannot be specified\n");
		return -1;
	}
	if (remote.family != AF_UNSPEC && local.family != AF_UNSPEC &&
	    remote.family != local.family) {
		fprintf(stderr, "stt: remote and local addresses must be of the same family\n");
		return -1;
	}
	if (set_op && !metadata &&
	    (attrs & (1ULL << IFLA_STT_COLLECT_METADATA))) {
		/* An absent flag means "unchanged" in a change request. */
		fprintf(stderr, "stt: 'noexternal' cannot be changed on an existing device\n");
		return -1;
	}
	if (!set_op && !metadata && remote.family == AF_UNSPEC) {
		fprintf(stderr, "stt: remote link partner not specified\n");
		return -1;
	}

	/*
	 * The kernel has a default for everything, so a new device gets only
	 * what was given, just like a change request.
	 */
	if (attrs & (1ULL << IFLA_STT_ID))
		addattr64(n, IP_REQ_MAXLEN, IFLA_STT_ID, key);
	stt_addattr_addr(n, IFLA_STT_REMOTE, IFLA_STT_REMOTE6, &remote);
	stt_addattr_addr(n, IFLA_STT_LOCAL, IFLA_STT_LOCAL6, &local);
	if (attrs & (1ULL << IFLA_STT_PORT))
		addattr16(n, IP_REQ_MAXLEN, IFLA_STT_PORT, htons(dstport));
	if (attrs & (1ULL << IFLA_STT_TTL)) {
		if (!ttl_inherit)
			addattr8(n, IP_REQ_MAXLEN, IFLA_STT_TTL, ttl);
		addattr8(n, IP_REQ_MAXLEN, IFLA_STT_TTL_INHERIT, ttl_inherit);
	}
	if (attrs & (1ULL << IFLA_STT_TOS))
		addattr8(n, IP_REQ_MAXLEN, IFLA_STT_TOS, tos);
	if (attrs & (1ULL << IFLA_STT_DF))
		addattr8(n, IP_REQ_MAXLEN, IFLA_STT_DF, df);
	if (metadata)
		addattr(n, IP_REQ_MAXLEN, IFLA_STT_COLLECT_METADATA);
	if (attrs & (1ULL << IFLA_STT_LINK))
		addattr32(n, IP_REQ_MAXLEN, IFLA_STT_LINK, ifindex);

	return 0;
}

/* tb[] is not validated by a policy: check lengths before reading. */
static const void *stt_rta(struct rtattr *tb[], int type, size_t len)
{
	if (!tb[type] || RTA_PAYLOAD(tb[type]) < len)
		return NULL;
	return RTA_DATA(tb[type]);
}

static void stt_print_addr(struct rtattr *tb[], int type4, int type6,
			   const char *key4, const char *key6,
			   const char *fmt)
{
	const void *data;

	data = stt_rta(tb, type4, sizeof(struct in_addr));
	if (data) {
		const struct in_addr *a = data;

		if (a->s_addr != htonl(INADDR_ANY))
			print_color_string(PRINT_ANY, COLOR_NONE, key4, fmt,
					   format_host(AF_INET, sizeof(*a), a));
		return;
	}
	data = stt_rta(tb, type6, sizeof(struct in6_addr));
	if (data) {
		const struct in6_addr *a = data;

		if (!IN6_IS_ADDR_UNSPECIFIED(a))
			print_color_string(PRINT_ANY, COLOR_NONE, key6, fmt,
					   format_host(AF_INET6, sizeof(*a), a));
	}
}

static void stt_print_opt(struct link_util *lu, FILE *f, struct rtattr *tb[])
{
	static const char * const df_names[] = {
		[STT_DF_UNSET] = "unset",
		[STT_DF_SET] = "set",
		[STT_DF_INHERIT] = "inherit",
	};
	const __u8 *u8p;
	bool ttl_inherit;
	const void *p;

	if (!tb)
		return;

	p = stt_rta(tb, IFLA_STT_ID, sizeof(__u64));
	if (p) {
		__u64 key;

		memcpy(&key, p, sizeof(key));
		print_color_u64(PRINT_ANY, COLOR_NONE, "id", "id %llu ", key);
	}

	stt_print_addr(tb, IFLA_STT_REMOTE, IFLA_STT_REMOTE6,
		       "remote", "remote6", "remote %s ");
	stt_print_addr(tb, IFLA_STT_LOCAL, IFLA_STT_LOCAL6,
		       "local", "local6", "local %s ");

	p = stt_rta(tb, IFLA_STT_PORT, sizeof(__be16));
	if (p) {
		__be16 port;

		memcpy(&port, p, sizeof(port));
		print_color_uint(PRINT_ANY, COLOR_NONE, "port", "dstport %u ",
				 ntohs(port));
	}

	/* JSON gets both the number and the flag; text only one word. */
	u8p = stt_rta(tb, IFLA_STT_TTL_INHERIT, sizeof(__u8));
	ttl_inherit = u8p && *u8p;
	if (ttl_inherit) {
		print_color_string(PRINT_FP, COLOR_NONE, NULL, "ttl %s ",
				   "inherit");
		print_color_bool(PRINT_JSON, COLOR_NONE, "ttl_inherit", NULL,
				 true);
	}
	u8p = stt_rta(tb, IFLA_STT_TTL, sizeof(__u8));
	if (u8p && (is_json_context() || !ttl_inherit)) {
		if (is_json_context() || *u8p)
			print_color_uint(PRINT_ANY, COLOR_NONE, "ttl",
					 "ttl %u ", *u8p);
		else
			print_color_string(PRINT_FP, COLOR_NONE, NULL,
					   "ttl %s ", "auto");
	}

	u8p = stt_rta(tb, IFLA_STT_TOS, sizeof(__u8));
	if (u8p) {
		if (is_json_context() || *u8p != 1)
			print_color_0xhex(PRINT_ANY, COLOR_NONE, "tos",
					  "tos %#llx ", *u8p);
		else
			print_color_string(PRINT_FP, COLOR_NONE, NULL,
					   "tos %s ", "inherit");
	}

	u8p = stt_rta(tb, IFLA_STT_DF, sizeof(__u8));
	if (u8p) {
		if (*u8p <= STT_DF_MAX)
			print_color_string(PRINT_ANY, COLOR_NONE, "df",
					   "df %s ", df_names[*u8p]);
		else
			print_color_uint(PRINT_ANY, COLOR_NONE, "df", "df %u ",
					 *u8p);
	}

	print_color_bool(tb[IFLA_STT_COLLECT_METADATA] ? PRINT_ANY : PRINT_JSON,
			 COLOR_NONE, "external", "external ",
			 !!tb[IFLA_STT_COLLECT_METADATA]);

	p = stt_rta(tb, IFLA_STT_LINK, sizeof(__u32));
	if (p) {
		__u32 ifindex;

		memcpy(&ifindex, p, sizeof(ifindex));
		if (ifindex)
			print_color_string(PRINT_ANY, COLOR_NONE, "link",
					   "dev %s ",
					   ll_index_to_name(ifindex));
	}
}

static void stt_print_help(struct link_util *lu, int argc, char **argv,
			   FILE *f)
{
	stt_explain(f);
}

struct link_util stt_link_util = {
	.id		= "stt",
	.maxattr	= IFLA_STT_MAX,
	.parse_opt	= stt_parse_opt,
	.print_opt	= stt_print_opt,
	.print_help	= stt_print_help,
};
