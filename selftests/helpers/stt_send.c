// SPDX-License-Identifier: GPL-2.0
/*
 * stt_send: fast crafted STT segments for the selftests (Python is far too
 * slow under TCG for hundreds of thousands of packets).
 *
 *   stt_send [OPTIONS] collide COUNT
 *	COUNT first segments of incomplete frames whose reassembly keys all
 *	fall into one bucket of a receiver that hashes them with jhash2 and
 *	seed 0 (what an off-path sender can aim at when the seed is known).
 *   stt_send [OPTIONS] fuzz COUNT
 *	COUNT segments: valid STT frames over IPv4 and IPv6, cut into
 *	segments, then randomly mutated (bit flips, truncation, length and
 *	offset fields, TCP and STT flags, reordering, duplication, loss).
 *	Seeded (--seed, else from the clock) and reproducible: the seed is
 *	printed first.
 *
 * Options: --dev IF, --dst-mac MAC (the receiver's underlay), --src/--dst
 * (outer IPv4), --src6/--dst6 (outer IPv6), --port, --sport, --key,
 * --inner-mac MAC (the receiving STT device's address), --seed N.
 * Packets go out of an AF_PACKET socket with sendmmsg(), as crafted.
 * Prints "<mode> seed <seed> sent <packets>" at the end.
 */

#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define BATCH		64
#define PKT_MAX		1514
#define FRAME_MAX	9000
#define MAX_SEGS	64

static struct {
	const char *dev;
	uint8_t dmac[6], smac[6], imac[6];
	struct in_addr s4, d4;
	struct in6_addr s6, d6;
	uint16_t port, sport;
	uint64_t key;
	uint64_t seed;
} o;

static int sock;
static uint8_t pkts[BATCH][PKT_MAX];
static size_t lens[BATCH];
static unsigned int npkts;
static unsigned long sent;

/* xorshift64*: small, fast, reproducible from the seed. */
static uint64_t rs;

static uint64_t rnd(void)
{
	rs ^= rs >> 12;
	rs ^= rs << 25;
	rs ^= rs >> 27;
	return rs * 0x2545f4914f6cdd1dULL;
}

static uint32_t below(uint32_t n)
{
	return n ? (uint32_t)(rnd() % n) : 0;
}

static int chance(unsigned int percent)
{
	return below(100) < percent;
}

/* ---- sending ------------------------------------------------------------ */

static void flush(void)
{
	struct mmsghdr msg[BATCH];
	struct iovec iov[BATCH];
	unsigned int i, done = 0;

	for (i = 0; i < npkts; i++) {
		iov[i].iov_base = pkts[i];
		iov[i].iov_len = lens[i];
		memset(&msg[i], 0, sizeof(msg[i]));
		msg[i].msg_hdr.msg_iov = &iov[i];
		msg[i].msg_hdr.msg_iovlen = 1;
	}
	while (done < npkts) {
		int n = sendmmsg(sock, msg + done, npkts - done, 0);

		if (n < 0) {
			if (errno == ENOBUFS || errno == EAGAIN ||
			    errno == EINTR) {
				usleep(1000);
				continue;
			}
			perror("sendmmsg");
			exit(1);
		}
		done += n;
	}
	sent += npkts;
	npkts = 0;
}

static uint8_t *next_pkt(void)
{
	if (npkts == BATCH)
		flush();
	return pkts[npkts];
}

static void commit_pkt(size_t len)
{
	lens[npkts++] = len;
}

/* ---- checksums and headers ---------------------------------------------- */

static uint32_t sum16(const void *p, size_t len, uint32_t s)
{
	const uint8_t *b = p;

	while (len > 1) {
		s += (b[0] << 8) | b[1];
		b += 2;
		len -= 2;
	}
	if (len)
		s += b[0] << 8;
	return s;
}

static uint16_t fold(uint32_t s)
{
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return ~s & 0xffff;
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v;
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, v >> 16);
	put16(p + 2, v);
}

static void tcp_csum(uint8_t *th, size_t len, int v6, int bad)
{
	uint32_t s = 0;
	uint16_t c;

	if (v6) {
		s = sum16(&o.s6, 16, s);
		s = sum16(&o.d6, 16, s);
		s += (len >> 16) + (len & 0xffff) + 6;
	} else {
		s = sum16(&o.s4, 4, s);
		s = sum16(&o.d4, 4, s);
		s += 6 + len;
	}
	th[16] = th[17] = 0;
	c = fold(sum16(th, len, s));
	if (bad)
		c ^= 1 + below(0xfffe);
	put16(th + 16, c);
}

/* A segment as the wire carries it; the TCP header is 20 bytes. */
struct seg {
	uint16_t frame_len, offset;
	uint32_t frame_id;
	uint8_t flags;		/* TCP flags */
	uint8_t doff;
	int v6;
	int bad_csum;
	uint16_t sport;
	size_t len;		/* STT payload bytes */
	uint8_t data[1500];
};

static void emit(const struct seg *s)
{
	uint8_t *p = next_pkt(), *th;
	size_t l3 = s->v6 ? 40 : 20, tl = 20 + s->len;

	memcpy(p, o.dmac, 6);
	memcpy(p + 6, o.smac, 6);
	put16(p + 12, s->v6 ? ETH_P_IPV6 : ETH_P_IP);
	if (s->v6) {
		uint8_t *ip = p + 14;

		memset(ip, 0, 40);
		ip[0] = 0x60;
		put16(ip + 4, tl);
		ip[6] = 6;
		ip[7] = 64;
		memcpy(ip + 8, &o.s6, 16);
		memcpy(ip + 24, &o.d6, 16);
	} else {
		uint8_t *ip = p + 14;
		static uint16_t ipid;

		memset(ip, 0, 20);
		ip[0] = 0x45;
		put16(ip + 2, 20 + tl);
		put16(ip + 4, ipid++);
		ip[8] = 64;
		ip[9] = 6;
		memcpy(ip + 12, &o.s4, 4);
		memcpy(ip + 16, &o.d4, 4);
		put16(ip + 10, fold(sum16(ip, 20, 0)));
	}
	th = p + 14 + l3;
	put16(th, s->sport);
	put16(th + 2, o.port);
	put32(th + 4, ((uint32_t)s->frame_len << 16) | s->offset);
	put32(th + 8, s->frame_id);
	th[12] = s->doff << 4;
	th[13] = s->flags;
	put16(th + 14, 0xffff);
	put16(th + 18, 0);
	memcpy(th + 20, s->data, s->len);
	tcp_csum(th, tl, s->v6, s->bad_csum);
	commit_pkt(14 + l3 + tl);
}

/* ---- collide ------------------------------------------------------------ */

static uint32_t rol32(uint32_t w, unsigned int s)
{
	return (w << s) | (w >> (32 - s));
}

/* Bob Jenkins' lookup3 hashword(), as the kernel's jhash2() computes it. */
static uint32_t jhash2(const uint32_t *k, unsigned int n, uint32_t init)
{
	uint32_t a, b, c;

	a = b = c = 0xdeadbeef + (n << 2) + init;
	while (n > 3) {
		a += k[0];
		b += k[1];
		c += k[2];
		a -= c; a ^= rol32(c, 4); c += b;
		b -= a; b ^= rol32(a, 6); a += c;
		c -= b; c ^= rol32(b, 8); b += a;
		a -= c; a ^= rol32(c, 16); c += b;
		b -= a; b ^= rol32(a, 19); a += c;
		c -= b; c ^= rol32(b, 4); b += a;
		n -= 3;
		k += 3;
	}
	switch (n) {
	case 3:
		c += k[2];
		/* fall through */
	case 2:
		b += k[1];
		/* fall through */
	case 1:
		a += k[0];
		c ^= b; c -= rol32(b, 14);
		a ^= c; a -= rol32(c, 11);
		b ^= a; b -= rol32(a, 25);
		c ^= b; c -= rol32(b, 16);
		a ^= c; a -= rol32(c, 4);
		b ^= a; b -= rol32(a, 14);
		c ^= b; c -= rol32(b, 24);
	}
	return c;
}

/* The receiver's reassembly key of an IPv4 segment (stt/reasm.c). */
struct frag_key {
	uint8_t saddr[16], daddr[16];
	uint32_t frame_id;	/* network order */
	uint16_t sport, dport;	/* network order */
	uint32_t ipv6;
};

#define REASM_HASH_MASK	1023

static void collide(unsigned long count)
{
	struct frag_key k;
	struct seg s;
	uint32_t id, words[sizeof(k) / 4], target = 0;
	unsigned long n = 0;
	int first = 1;

	memset(&k, 0, sizeof(k));
	memcpy(k.saddr, &o.s4, 4);
	memcpy(k.daddr, &o.d4, 4);
	k.sport = htons(o.sport);
	k.dport = htons(o.port);

	memset(&s, 0, sizeof(s));
	s.frame_len = 1000;	/* never completes: 100 of 1000 bytes */
	s.flags = 0x18;		/* ACK PSH */
	s.doff = 5;
	s.sport = o.sport;
	s.len = 100;
	for (id = (uint32_t)rnd(); n < count; id++) {
		k.frame_id = htonl(id);
		memcpy(words, &k, sizeof(k));
		if ((jhash2(words, sizeof(k) / 4, 0) & REASM_HASH_MASK) !=
		    target) {
			if (!first)
				continue;
			target = jhash2(words, sizeof(k) / 4, 0) &
				 REASM_HASH_MASK;
			first = 0;
		}
		s.frame_id = id;
		emit(&s);
		n++;
	}
}

/* ---- fuzz --------------------------------------------------------------- */

/* A valid STT frame: header, then an inner Ethernet frame to the
 * receiving device, with or without offload descriptions.
 */
static size_t make_frame(uint8_t *f)
{
	size_t inner = 60 + below(below(4) ? 1400 : FRAME_MAX - 60 - 18);
	uint8_t *e = f + 18, *ip, *l4;
	int v6 = chance(40), tcp = chance(60), partial = chance(50);
	size_t l3len = v6 ? 40 : 20, l4off = 14 + l3len, i;
	uint16_t mss = 0;
	uint8_t flags = 0;

	memset(f, 0, 18);
	if (inner < l4off + 20)
		inner = l4off + 20;
	memcpy(e, o.imac, 6);
	memcpy(e + 6, "\x02\x00\x00\x00\xee\x01", 6);
	put16(e + 12, v6 ? ETH_P_IPV6 : ETH_P_IP);
	ip = e + 14;
	memset(ip, 0, l3len);
	if (v6) {
		ip[0] = 0x60;
		put16(ip + 4, inner - l4off);
		ip[6] = tcp ? 6 : 17;
		ip[7] = 64;
		ip[8] = 0xfd;
		ip[23] = 1;
		ip[24] = 0xfd;
		ip[39] = 2 + below(2);
	} else {
		ip[0] = 0x45;
		put16(ip + 2, inner - 14);
		ip[8] = 64;
		ip[9] = tcp ? 6 : 17;
		put32(ip + 12, 0xc0a80001);	/* 192.168.0.1 */
		put32(ip + 16, chance(50) ? 0xc0a80002 : 0xc6336402);
		put16(ip + 10, fold(sum16(ip, 20, 0)));
	}
	l4 = e + l4off;
	for (i = l4off; i < inner; i++)
		e[i] = rnd();
	if (tcp) {
		l4[12] = 5 << 4;
		l4[13] = 0x10;
	} else {
		put16(l4 + 4, inner - l4off);
	}
	if (partial) {
		flags = 0x02 | (v6 ? 0 : 0x04) | (tcp ? 0x08 : 0);
		f[2] = l4off;
		if (tcp && chance(60))
			mss = 48 + below(1500);
	} else if (chance(50)) {
		flags = 0x01;
	}
	f[0] = 0;
	f[1] = flags;
	put16(f + 4, mss);
	put16(f + 6, chance(20) ? 0x1000 | below(4096) : 0);
	for (i = 0; i < 8; i++)
		f[8 + i] = o.key >> (56 - 8 * i);
	return 18 + inner;
}

static void mutate_bytes(uint8_t *p, size_t len)
{
	unsigned int n = 1 + below(4);

	while (n-- && len) {
		size_t at = below(len);

		/* Mostly the headers: that is where the checks are. */
		if (chance(70) && len > 40)
			at = below(40);
		if (chance(50))
			p[at] ^= 1 << below(8);
		else
			p[at] = rnd();
	}
}

static void fuzz_one(void)
{
	static struct seg segs[MAX_SEGS + 8];
	static uint8_t frame[FRAME_MAX];
	size_t flen = make_frame(frame), off = 0, mss;
	unsigned int n = 0, i;
	uint32_t id = rnd();
	uint16_t sport = o.sport + below(8);
	int v6 = chance(50);

	mss = chance(30) ? 1 + below(1400) : (v6 ? 1420 : 1440);
	if (chance(30))
		mutate_bytes(frame, 18 + 60);	/* STT + inner headers */
	while (off < flen && n < MAX_SEGS) {
		struct seg *s = &segs[n++];
		size_t len = flen - off < mss ? flen - off : mss;

		memset(s, 0, offsetof(struct seg, data));
		s->frame_len = flen;
		s->offset = off;
		s->frame_id = id;
		s->flags = 0x10 | (off + len == flen ? 0x08 : 0);
		s->doff = 5;
		s->v6 = v6;
		s->sport = sport;
		s->len = len;
		memcpy(s->data, frame + off, len);
		off += len;
	}

	/* Mutations of the segments and their order. */
	for (i = 0; i < n; i++) {
		struct seg *s = &segs[i];

		if (chance(3))
			mutate_bytes(s->data, s->len);
		if (chance(2))
			s->len = below(s->len + 1);
		if (chance(2))
			s->frame_len = chance(50) ? rnd() : s->frame_len +
				       below(64) - 32;
		if (chance(2))
			s->offset = chance(50) ? rnd() : s->offset +
				    below(64) - 32;
		if (chance(1))
			s->frame_id = chance(50) ? rnd() : id + 1;
		if (chance(1))
			s->flags = rnd();
		if (chance(1))
			s->doff = below(16);
		if (chance(1))
			s->bad_csum = 1;
	}
	if (n > 1 && chance(20)) {		/* reorder */
		for (i = 0; i < n; i++) {
			unsigned int j = below(n);
			struct seg t = segs[i];

			segs[i] = segs[j];
			segs[j] = t;
		}
	}
	if (chance(10) && n < MAX_SEGS + 8) {	/* duplicate */
		segs[n] = segs[below(n)];
		n++;
	}
	for (i = 0; i < n; i++) {
		if (chance(2))			/* loss */
			continue;
		emit(&segs[i]);
	}
}

static void fuzz(unsigned long count)
{
	while (sent + npkts < count)
		fuzz_one();
}

/* ---- main --------------------------------------------------------------- */

static int parse_mac(const char *s, uint8_t *mac)
{
	return sscanf(s, "%hhx:%hhx:%hhx:%hhx:%hhx:%hhx", &mac[0], &mac[1],
		      &mac[2], &mac[3], &mac[4], &mac[5]) == 6 ? 0 : -1;
}

static void usage(void)
{
	fprintf(stderr, "usage: stt_send --dev IF --dst-mac MAC [--src A] [--dst A] [--src6 A] [--dst6 A]\n"
		"\t[--port P] [--sport P] [--key K] [--inner-mac MAC] [--seed N] collide|fuzz COUNT\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "dev", 1, 0, 'd' }, { "dst-mac", 1, 0, 'm' },
		{ "src", 1, 0, 's' }, { "dst", 1, 0, 't' },
		{ "src6", 1, 0, 'S' }, { "dst6", 1, 0, 'T' },
		{ "port", 1, 0, 'p' }, { "sport", 1, 0, 'P' },
		{ "key", 1, 0, 'k' }, { "inner-mac", 1, 0, 'i' },
		{ "seed", 1, 0, 'r' }, { 0, 0, 0, 0 }
	};
	struct sockaddr_ll sll = { .sll_family = AF_PACKET };
	const char *mode;
	unsigned long count;
	socklen_t sl = sizeof(sll);
	int c, have_seed = 0;

	inet_pton(AF_INET, "10.0.0.1", &o.s4);
	inet_pton(AF_INET, "10.0.0.2", &o.d4);
	inet_pton(AF_INET6, "fd00::1", &o.s6);
	inet_pton(AF_INET6, "fd00::2", &o.d6);
	o.port = 7471;
	o.sport = 40000;
	o.key = 1;
	parse_mac("02:00:00:00:ee:02", o.imac);
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'd': o.dev = optarg; break;
		case 'm': if (parse_mac(optarg, o.dmac)) usage(); break;
		case 'i': if (parse_mac(optarg, o.imac)) usage(); break;
		case 's': if (inet_pton(AF_INET, optarg, &o.s4) != 1) usage(); break;
		case 't': if (inet_pton(AF_INET, optarg, &o.d4) != 1) usage(); break;
		case 'S': if (inet_pton(AF_INET6, optarg, &o.s6) != 1) usage(); break;
		case 'T': if (inet_pton(AF_INET6, optarg, &o.d6) != 1) usage(); break;
		case 'p': o.port = atoi(optarg); break;
		case 'P': o.sport = atoi(optarg); break;
		case 'k': o.key = strtoull(optarg, NULL, 0); break;
		case 'r': o.seed = strtoull(optarg, NULL, 0); have_seed = 1; break;
		default: usage();
		}
	}
	if (!o.dev || optind + 2 != argc)
		usage();
	mode = argv[optind];
	count = strtoul(argv[optind + 1], NULL, 0);
	if (!have_seed) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		o.seed = ts.tv_sec * 1000003ULL ^ ts.tv_nsec ^ getpid();
	}
	rs = o.seed ? o.seed : 1;
	printf("%s seed %llu\n", mode, (unsigned long long)o.seed);
	fflush(stdout);

	sock = socket(AF_PACKET, SOCK_RAW, 0);
	if (sock < 0) {
		perror("socket");
		return 1;
	}
	sll.sll_ifindex = if_nametoindex(o.dev);
	if (!sll.sll_ifindex || bind(sock, (struct sockaddr *)&sll, sizeof(sll)) ||
	    getsockname(sock, (struct sockaddr *)&sll, &sl)) {
		perror(o.dev);
		return 1;
	}
	memcpy(o.smac, sll.sll_addr, 6);

	if (!strcmp(mode, "collide"))
		collide(count);
	else if (!strcmp(mode, "fuzz"))
		fuzz(count);
	else
		usage();
	flush();
	printf("%s seed %llu sent %lu\n", mode, (unsigned long long)o.seed,
	       sent);
	return 0;
}
