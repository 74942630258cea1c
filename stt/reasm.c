// SPDX-License-Identifier: GPL-2.0
/*
 * STT reassembly: the segments GRO did not merge (GRO off, reordering,
 * loss) are collected per frame, keyed by outer addresses, ports and frame
 * ID, and chained into one skb through its frag_list without copying.
 *
 * Bounds: a namespace holds at most reasm_max_mem bytes (skb truesize plus
 * bookkeeping) in incomplete frames, evicting old frames first; an
 * incomplete frame expires after reasm_timeout_ms.  Every segment must
 * agree on the frame length; duplicates are dropped (a segment that
 * covers some held ones whole replaces them), partial overlaps kill the
 * frame (a peer that sends them is broken or hostile).
 *
 * Scaling: a segment takes only its hash bucket's lock and adds its size to
 * this CPU's share of the memory count, so receive queues on other CPUs
 * (RSS spreads flows, and a frame's segments share one flow) reassemble
 * side by side.  Only near the bound is the count summed over CPUs, and
 * eviction has no global order to keep: it takes the oldest of a few
 * buckets' oldest frames.
 */

#include <linux/jhash.h>
#include <linux/random.h>
#include <linux/skbuff.h>
#include <linux/slab.h>
#include <net/ip.h>
#include <net/ipv6.h>
#include <net/tcp.h>

#include "stt_private.h"

#define STT_REASM_HASH_BITS	10
#define STT_REASM_HASH_SIZE	BIT(STT_REASM_HASH_BITS)
/* What a CPU counts locally before it folds into the shared sum: about a
 * frame's worth, so a steady stream touches the shared line once a frame.
 */
#define STT_REASM_MEM_BATCH	(64 * 1024)
/* Buckets an eviction compares; the oldest of their oldest frames goes. */
#define STT_REASM_EVICT_SAMPLE	8

struct stt_frag_key {
	struct in6_addr	saddr;	/* IPv4 addresses use s6_addr32[0] */
	struct in6_addr	daddr;
	__be32		frame_id;
	__be16		sport;
	__be16		dport;
	u32		ipv6;
};

struct stt_reasm_bucket {
	spinlock_t		lock;	/* everything below */
	struct hlist_head	chain;
	struct list_head	lru;	/* this bucket's queues, oldest first */
	unsigned int		nqueues;
	/* The oldest queue's expiry, 0 if none: eviction reads it without
	 * the lock to choose a bucket.
	 */
	unsigned long		oldest;
};

struct stt_frag_queue {
	struct hlist_node	hnode;
	struct list_head	lru;
	struct stt_frag_key	key;
	unsigned long		expires;	/* jiffies */
	struct sk_buff		*segs;	/* sorted by offset, via ->next */
	struct sk_buff		*tail;	/* the last of them */
	unsigned int		frame_len;
	unsigned int		received;	/* payload bytes */
	unsigned int		mem;	/* accounted bytes */
	unsigned int		nsegs;
	bool			ce;
};

static unsigned long stt_reasm_timeout(void)
{
	return msecs_to_jiffies(READ_ONCE(stt_reasm_timeout_ms) ?: 1);
}

static void stt_frag_key_init(const struct sk_buff *skb,
			      struct stt_frag_key *k)
{
	memset(k, 0, sizeof(*k));
	if (skb->protocol == htons(ETH_P_IPV6)) {
		k->saddr = ipv6_hdr(skb)->saddr;
		k->daddr = ipv6_hdr(skb)->daddr;
		k->ipv6 = 1;
	} else {
		k->saddr.s6_addr32[0] = ip_hdr(skb)->saddr;
		k->daddr.s6_addr32[0] = ip_hdr(skb)->daddr;
	}
	k->frame_id = STT_SEG_CB(skb)->frame_id;
	k->sport = STT_SEG_CB(skb)->sport;
	k->dport = STT_SEG_CB(skb)->dport;
}

/* Keyed by a random per-namespace seed: the key is the sender's choice
 * (addresses, ports, frame ID), and with a known seed an off-path sender
 * can pile frames into one bucket that every lookup then walks under the
 * lock.
 */
static u32 stt_frag_hash(const struct stt_reasm *r,
			 const struct stt_frag_key *k)
{
	return jhash2((const u32 *)k, sizeof(*k) / sizeof(u32), r->hash_rnd) &
	       (STT_REASM_HASH_SIZE - 1);
}

static void stt_mem_add(struct stt_reasm *r, s64 bytes)
{
	percpu_counter_add_batch(&r->mem, bytes, STT_REASM_MEM_BATCH);
}

/* Is the namespace above its bound?  Exact near it, cheap far from it. */
static bool stt_mem_over(struct stt_reasm *r)
{
	return __percpu_counter_compare(&r->mem, READ_ONCE(stt_reasm_max_mem),
					STT_REASM_MEM_BATCH) > 0;
}

/* After the bucket's oldest queue changed.  Bucket lock held. */
static void stt_bucket_update(struct stt_reasm_bucket *b)
{
	struct stt_frag_queue *fq;

	fq = list_first_entry_or_null(&b->lru, struct stt_frag_queue, lru);
	WRITE_ONCE(b->oldest, fq ? fq->expires : 0);
}

/* Unhash @fq and move its segments to @free.  Bucket lock held. */
static void stt_fq_kill(struct stt_reasm *r, struct stt_reasm_bucket *b,
			struct stt_frag_queue *fq, struct sk_buff **free)
{
	struct sk_buff *last;
	bool was_oldest = b->lru.next == &fq->lru;

	hlist_del(&fq->hnode);
	list_del(&fq->lru);
	/* Read locklessly by the expiry worker and stt_reasm_pending(). */
	WRITE_ONCE(b->nqueues, b->nqueues - 1);
	if (was_oldest)
		stt_bucket_update(b);
	stt_mem_add(r, -(s64)fq->mem);
	if (fq->segs) {
		last = fq->tail;
		last->next = *free;
		*free = fq->segs;
	}
	kfree(fq);
}

static void stt_free_list(struct sk_buff *list)
{
	while (list) {
		struct sk_buff *next = list->next;

		list->next = NULL;
		kfree_skb(list);
		list = next;
	}
}

static void stt_reasm_expire(struct work_struct *work)
{
	struct stt_reasm *r = container_of(to_delayed_work(work),
					   struct stt_reasm, expire_work);
	struct stt_net *sn = container_of(r, struct stt_net, reasm);
	unsigned long now = jiffies, next = 0;
	struct stt_frag_queue *fq, *tmp;
	struct sk_buff *free = NULL;
	unsigned int expired = 0, i;

	for (i = 0; i < STT_REASM_HASH_SIZE; i++) {
		struct stt_reasm_bucket *b = &r->buckets[i];

		if (!READ_ONCE(b->nqueues))
			continue;
		spin_lock_bh(&b->lock);
		list_for_each_entry_safe(fq, tmp, &b->lru, lru) {
			if (time_before(now, fq->expires)) {
				if (!next || time_before(fq->expires, next))
					next = fq->expires;
				break;
			}
			stt_fq_kill(r, b, fq, &free);
			expired++;
		}
		spin_unlock_bh(&b->lock);
	}
	/* Queues created meanwhile saw this work not pending and queued it
	 * again; those seen here are waited for.
	 */
	if (next)
		queue_delayed_work(system_power_efficient_wq, &r->expire_work,
				   max_t(long, next - jiffies, 1));

	if (expired) {
		/* Receive writes the per-CPU statistics in softirq context:
		 * not to be interrupted by it (32-bit counters).
		 */
		local_bh_disable();
		stt_ns_add(sn, STT_NS_DROP_REASM_TIMEOUT, expired);
		local_bh_enable();
	}
	stt_free_list(free);
}

/* Bucket lock held.  Keeps the longest walk seen: what a crafted flood of
 * colliding keys would cost every lookup (ns_reasm_chain_max).
 */
static struct stt_frag_queue *stt_fq_find(struct stt_reasm *r,
					  struct stt_reasm_bucket *b,
					  const struct stt_frag_key *k)
{
	struct stt_frag_queue *fq, *found = NULL;
	unsigned int walked = 0;

	hlist_for_each_entry(fq, &b->chain, hnode) {
		walked++;
		if (!memcmp(&fq->key, k, sizeof(*k))) {
			found = fq;
			break;
		}
	}
	if (walked > READ_ONCE(r->chain_max))
		WRITE_ONCE(r->chain_max, walked);
	return found;
}

/* Evict one incomplete frame, not @self's: the oldest among the oldest
 * frames of STT_REASM_EVICT_SAMPLE buckets, taken in turn.  A flood's
 * frames never complete and grow old, while a legitimate frame completes
 * within a few round trips, so sampling finds the flood's first as the old
 * global oldest-first list did.  No lock held on entry.  Returns false when
 * nothing but @self is left.
 */
static bool stt_reasm_evict_one(struct stt_reasm *r,
				const struct stt_frag_key *self,
				struct sk_buff **free)
{
	unsigned int i, start, tried;

	for (tried = 0; tried < STT_REASM_HASH_SIZE;
	     tried += STT_REASM_EVICT_SAMPLE) {
		struct stt_reasm_bucket *b, *victim = NULL;
		unsigned long oldest = 0;
		struct stt_frag_queue *fq;

		start = READ_ONCE(r->evict_next);
		WRITE_ONCE(r->evict_next, start + STT_REASM_EVICT_SAMPLE);
		for (i = 0; i < STT_REASM_EVICT_SAMPLE; i++) {
			unsigned long e;

			b = &r->buckets[(start + i) & (STT_REASM_HASH_SIZE - 1)];
			e = READ_ONCE(b->oldest);
			if (e && (!victim || time_before(e, oldest))) {
				victim = b;
				oldest = e;
			}
		}
		if (!victim)
			continue;

		spin_lock_bh(&victim->lock);
		list_for_each_entry(fq, &victim->lru, lru) {
			if (memcmp(&fq->key, self, sizeof(*self))) {
				stt_fq_kill(r, victim, fq, free);
				spin_unlock_bh(&victim->lock);
				return true;
			}
		}
		spin_unlock_bh(&victim->lock);
	}
	return false;
}

/* Chain the sorted segments of a complete frame into one skb.  The frame
 * is CHECKSUM_COMPLETE, its sum the segments' sums added at their
 * offsets, if every segment was; otherwise no sum describes it.
 */
static struct sk_buff *stt_build_frame(struct sk_buff *head)
{
	bool complete = head->ip_summed == CHECKSUM_COMPLETE;
	struct sk_buff *seg, *next, **tail;
	unsigned int len = 0, truesize = 0;
	__wsum csum = head->csum;

	next = head->next;
	head->next = NULL;

	/* Members must not carry frag_lists of their own: splice them in. */
	tail = &skb_shinfo(head)->frag_list;
	while (*tail)
		tail = &(*tail)->next;
	for (seg = next; seg; seg = next) {
		struct sk_buff *fl = skb_shinfo(seg)->frag_list;

		next = seg->next;
		seg->next = NULL;
		skb_dst_drop(seg);
		if (seg->ip_summed == CHECKSUM_COMPLETE)
			csum = csum_block_add(csum, seg->csum,
					      STT_SEG_CB(seg)->offset);
		else
			complete = false;
		if (fl) {
			struct sk_buff *it;

			skb_shinfo(seg)->frag_list = NULL;
			for (it = fl; it; it = it->next) {
				seg->len -= it->len;
				seg->data_len -= it->len;
				seg->truesize -= it->truesize;
			}
			seg->next = fl;
		}
		for (*tail = seg; *tail; tail = &(*tail)->next) {
			len += (*tail)->len;
			truesize += (*tail)->truesize;
		}
	}
	head->len += len;
	head->data_len += len;
	head->truesize += truesize;
	if (complete)
		head->csum = csum;
	else if (head->ip_summed == CHECKSUM_COMPLETE)
		head->ip_summed = CHECKSUM_NONE;
	return head;
}

/* Make @skb's shared info and frag_list chain ours alone before the queue
 * links and splices them.  A segment can be a clone (a packet tap, netem
 * duplication) whose shared info another skb still uses, and after
 * unsharing it, its frag_list members are shared with that skb: members
 * another owner still holds are replaced by clones of their own, so that
 * no ->next pointer outside our chain is ever written.  Copies the linear
 * part of cloned segments only; frags and member data stay shared.
 */
static int stt_seg_own(struct sk_buff *skb)
{
	struct sk_buff **p;

	if (skb_unclone(skb, GFP_ATOMIC))
		return -ENOMEM;
	for (p = &skb_shinfo(skb)->frag_list; *p; p = &(*p)->next) {
		struct sk_buff *m = *p, *c;

		if (!skb_shared(m))
			continue;
		c = skb_clone(m, GFP_ATOMIC);
		if (!c)
			return -ENOMEM;
		c->next = m->next;
		*p = c;
		consume_skb(m);
	}
	return 0;
}

struct sk_buff *stt_reasm_add(struct stt_net *sn, struct sk_buff *skb,
			      unsigned int *nsegs)
{
	unsigned int off = STT_SEG_CB(skb)->offset, len = skb->len;
	struct net_device *dev = skb->dev;
	struct stt_reasm *r = &sn->reasm;
	struct sk_buff *free = NULL, *prev, *cur, *next, *frame = NULL;
	enum stt_ns_stat why = STT_NS_STAT_MAX;
	unsigned int evicted = 0, replaced = 0, charged;
	struct stt_reasm_bucket *b;
	struct stt_frag_queue *fq;
	struct stt_frag_key k;
	bool full = false;

	stt_frag_key_init(skb, &k);
	b = &r->buckets[stt_frag_hash(r, &k)];
	/* Segments hold their outer headers until the frame is built, but
	 * nothing that pins other state: a socket, a route, or the outer
	 * conntrack entry conntrack made before the hook stole the segment.
	 * Namespace exit runs conntrack's cleanup before ours when nf_conntrack
	 * was loaded after stt, and that cleanup waits for every entry of the
	 * namespace to be freed, forever if a queued segment holds one.
	 */
	skb_orphan(skb);
	skb_dst_drop(skb);
	nf_reset_ct(skb);
	if (stt_seg_own(skb)) {
		stt_ns_inc(sn, STT_NS_DROP_NOMEM);
		kfree_skb(skb);
		return NULL;
	}

	/* Charge first, as if a new queue were needed, then get back within
	 * the bound: each segment sees the charges of those in flight on
	 * other CPUs, and once they are all done the namespace is within it.
	 */
	charged = skb->truesize + sizeof(*fq);
	stt_mem_add(r, charged);
	while (stt_mem_over(r)) {
		if (!stt_reasm_evict_one(r, &k, &free)) {
			full = true;
			break;
		}
		evicted++;
	}

	spin_lock_bh(&b->lock);
	fq = stt_fq_find(r, b, &k);
	if (full) {
		/* Nothing else left to evict: this frame cannot complete. */
		if (fq)
			stt_fq_kill(r, b, fq, &free);
		why = STT_NS_DROP_REASM_MEM;
		goto drop;
	}
	if (fq) {
		stt_mem_add(r, -(s64)sizeof(*fq));
	} else {
		fq = kzalloc_obj(*fq, GFP_ATOMIC);
		if (!fq) {
			why = STT_NS_DROP_NOMEM;
			goto drop;
		}
		fq->key = k;
		fq->frame_len = STT_SEG_CB(skb)->frame_len;
		fq->expires = jiffies + stt_reasm_timeout();
		fq->mem = sizeof(*fq);
		hlist_add_head(&fq->hnode, &b->chain);
		list_add_tail(&fq->lru, &b->lru);
		WRITE_ONCE(b->nqueues, b->nqueues + 1);
		if (b->nqueues == 1)
			stt_bucket_update(b);
		/* Reads the pending bit only: no shared write per frame. */
		if (!delayed_work_pending(&r->expire_work))
			queue_delayed_work(system_power_efficient_wq,
					   &r->expire_work,
					   stt_reasm_timeout() + 1);
	}
	/* The queue's own size is in fq->mem now; the segment's until it is
	 * queued or dropped.
	 */
	charged = skb->truesize;

	if (STT_SEG_CB(skb)->frame_len != fq->frame_len) {
		stt_fq_kill(r, b, fq, &free);
		why = STT_NS_DROP_LEN_MISMATCH;
		goto drop;
	}

	/* Most segments arrive in order: after the last one, found in O(1)
	 * (a walk from the head would make a frame quadratic in its
	 * segments).  Only a segment that arrives early walks.
	 */
	if (!fq->tail || off >= STT_SEG_CB(fq->tail)->offset + fq->tail->len) {
		prev = fq->tail;
		cur = NULL;
	} else {
		prev = NULL;
		for (cur = fq->segs; cur; prev = cur, cur = cur->next)
			if (STT_SEG_CB(cur)->offset >= off)
				break;
	}
	/* A duplicate, or a segment inside one held already (GRO merged it
	 * with its neighbours before its duplicate came): it adds nothing,
	 * and the frame need not go for it.  Only a partial overlap, where
	 * two segments would disagree on some bytes, kills the frame.
	 */
	if ((cur && STT_SEG_CB(cur)->offset == off && cur->len >= len) ||
	    (prev && STT_SEG_CB(prev)->offset + prev->len >= off + len)) {
		why = STT_NS_DROP_DUP;
		goto drop;
	}
	/* The reverse: segments held already that lie inside this one (they
	 * came alone, then their duplicates merged with their neighbours).
	 * This one replaces them, unless it overlaps the next one partly.
	 */
	for (next = cur; next; next = next->next)
		if (STT_SEG_CB(next)->offset + next->len > off + len)
			break;
	if ((prev && STT_SEG_CB(prev)->offset + prev->len > off) ||
	    (next && off + len > STT_SEG_CB(next)->offset)) {
		stt_fq_kill(r, b, fq, &free);
		why = STT_NS_DROP_OVERLAP;
		goto drop;
	}
	while (cur != next) {
		struct sk_buff *inside = cur;

		cur = cur->next;
		fq->received -= inside->len;
		fq->nsegs--;
		fq->mem -= inside->truesize;
		stt_mem_add(r, -(s64)inside->truesize);
		inside->next = free;
		free = inside;
		replaced++;
	}

	skb->next = cur;
	if (prev)
		prev->next = skb;
	else
		fq->segs = skb;
	if (!cur)
		fq->tail = skb;
	fq->received += len;
	fq->nsegs++;
	fq->mem += skb->truesize;
	charged = 0;
	fq->ce |= STT_SEG_CB(skb)->ecn_ce;

	if (fq->received == fq->frame_len) {
		bool ce = fq->ce;

		*nsegs = fq->nsegs;
		frame = fq->segs;
		fq->segs = NULL;
		stt_fq_kill(r, b, fq, &free);
		spin_unlock_bh(&b->lock);

		frame = stt_build_frame(frame);
		/* The head may have arrived on a device since deleted. */
		frame->dev = dev;
		STT_SEG_CB(frame)->ecn_ce = ce;
		stt_ns_inc(sn, STT_NS_REASM_FRAMES);
		stt_ns_add(sn, STT_NS_REASM_SEGS, *nsegs);
		goto out;
	}
	spin_unlock_bh(&b->lock);
	goto out;

drop:
	spin_unlock_bh(&b->lock);
	stt_mem_add(r, -(s64)charged);
	stt_ns_inc(sn, why);
	kfree_skb(skb);
out:
	if (evicted)
		stt_ns_add(sn, STT_NS_DROP_REASM_MEM, evicted);
	if (replaced)
		stt_ns_add(sn, STT_NS_DROP_DUP, replaced);
	stt_free_list(free);
	return frame;
}

int stt_reasm_init(struct stt_net *sn)
{
	struct stt_reasm *r = &sn->reasm;
	int i, err;

	r->buckets = kvmalloc_array(STT_REASM_HASH_SIZE, sizeof(*r->buckets),
				    GFP_KERNEL);
	if (!r->buckets)
		return -ENOMEM;
	err = percpu_counter_init(&r->mem, 0, GFP_KERNEL);
	if (err) {
		kvfree(r->buckets);
		r->buckets = NULL;
		return err;
	}
	for (i = 0; i < STT_REASM_HASH_SIZE; i++) {
		struct stt_reasm_bucket *b = &r->buckets[i];

		spin_lock_init(&b->lock);
		INIT_HLIST_HEAD(&b->chain);
		INIT_LIST_HEAD(&b->lru);
		b->nqueues = 0;
		b->oldest = 0;
	}
	r->hash_rnd = get_random_u32();
	r->evict_next = 0;
	r->chain_max = 0;
	INIT_DELAYED_WORK(&r->expire_work, stt_reasm_expire);
	return 0;
}

/* Namespace exit: the hooks are gone, nothing adds segments any more, so
 * once the expiry work is cancelled (it may have queued itself again)
 * nothing else touches the buckets.
 */
void stt_reasm_exit(struct stt_net *sn)
{
	struct stt_reasm *r = &sn->reasm;
	struct stt_frag_queue *fq, *tmp;
	struct sk_buff *free = NULL;
	int i;

	if (!r->buckets)
		return;
	cancel_delayed_work_sync(&r->expire_work);
	for (i = 0; i < STT_REASM_HASH_SIZE; i++) {
		struct stt_reasm_bucket *b = &r->buckets[i];

		spin_lock_bh(&b->lock);
		list_for_each_entry_safe(fq, tmp, &b->lru, lru)
			stt_fq_kill(r, b, fq, &free);
		spin_unlock_bh(&b->lock);
	}
	stt_free_list(free);
	percpu_counter_destroy(&r->mem);
	kvfree(r->buckets);
	r->buckets = NULL;
}

/* ns_reasm_mem_bytes: exact, summed over CPUs. */
s64 stt_reasm_mem(struct stt_net *sn)
{
	return percpu_counter_sum_positive(&sn->reasm.mem);
}

/* ns_reasm_pending_frames */
unsigned int stt_reasm_pending(struct stt_net *sn)
{
	unsigned int i, n = 0;

	for (i = 0; i < STT_REASM_HASH_SIZE; i++)
		n += READ_ONCE(sn->reasm.buckets[i].nqueues);
	return n;
}

/* A piece of payload in a page, with its own page reference. */
struct stt_piece {
	struct page	*page;
	unsigned int	off;
	unsigned int	len;
};

/* Add @skb's payload beyond @from (linear part, then page fragments) to
 * @p.  Linear bytes in a page fragment head are shared; those in a
 * kmalloc'ed head are copied into a page fragment (a few header-sized
 * bytes per segment at most).
 */
static int stt_gather(struct sk_buff *skb, unsigned int from,
		      struct stt_piece *p, unsigned int *n)
{
	unsigned int hl = skb_headlen(skb);
	int i;

	if (hl > from) {
		unsigned int len = hl - from;
		void *data = skb->data + from;
		struct page *page;

		if (!skb->head_frag) {
			void *copy = netdev_alloc_frag(len);

			if (!copy)
				return -ENOMEM;
			memcpy(copy, data, len);
			data = copy;
			page = virt_to_head_page(data);
		} else {
			page = virt_to_head_page(data);
			get_page(page);
		}
		p[*n].page = page;
		p[*n].off = data - page_address(page);
		p[*n].len = len;
		(*n)++;
	}
	for (i = 0; i < skb_shinfo(skb)->nr_frags; i++) {
		skb_frag_t *f = &skb_shinfo(skb)->frags[i];

		if (!skb_frag_size(f))
			continue;
		p[*n].page = skb_frag_page(f);
		p[*n].off = skb_frag_off(f);
		p[*n].len = skb_frag_size(f);
		get_page(p[*n].page);
		(*n)++;
	}
	return 0;
}

/* Fill @skb's page fragments with @want bytes from pieces[*i..], splitting
 * the last piece when needed.  Returns bytes placed.
 */
static unsigned int stt_fill_frags(struct sk_buff *skb, struct stt_piece *p,
				   unsigned int n, unsigned int *i,
				   unsigned int want)
{
	unsigned int placed = 0, nr = 0;

	while (placed < want && *i < n && nr < MAX_SKB_FRAGS) {
		struct stt_piece *pc = &p[*i];
		unsigned int take = min(pc->len, want - placed);

		if (take == pc->len) {
			/* the piece's reference moves to the skb */
			skb_fill_page_desc(skb, nr++, pc->page, pc->off, take);
			(*i)++;
		} else {
			get_page(pc->page);
			skb_fill_page_desc(skb, nr++, pc->page, pc->off, take);
			pc->off += take;
			pc->len -= take;
		}
		placed += take;
	}
	return placed;
}

/* Whether @n pieces fill the head's @head_want bytes and then each
 * member's @mss bytes (the last member less) with at most MAX_SKB_FRAGS
 * pieces to each skb, as stt_fill_frags() would place them.  Segments much
 * smaller than the inner MSS (an inner MTU far above the underlay's, or a
 * sender that cut its frame small) need more pieces per MSS than a skb
 * has fragments.
 */
static bool stt_pieces_fit(const struct stt_piece *p, unsigned int n,
			   unsigned int head_want, unsigned int mss)
{
	unsigned int i = 0, rem = n ? p[0].len : 0, want = head_want, nr = 0;

	while (i < n) {
		unsigned int take;

		if (!want) {
			want = mss;
			nr = 0;
		}
		if (++nr > MAX_SKB_FRAGS)
			return false;
		take = min(rem, want);
		rem -= take;
		want -= take;
		if (!rem && ++i < n)
			rem = p[i].len;
	}
	return true;
}

/* Empty a frag_list member whose pieces were gathered, for reuse as a
 * member of the reshaped frame: an allocation and a free saved per
 * segment.  Only a member we hold alone: a shared one is on another
 * owner's chain (its ->next is not ours to write), a clone's shared info
 * (its frags) is another skb's too.  Nor one whose memory returns to a
 * page pool or whose pages a zerocopy sender tracks: the pieces it would
 * get hold plain page references.  Its head stays, and its truesize with
 * it, until the frame is freed.
 */
static bool stt_member_empty(struct sk_buff *m)
{
	int j;

	if (skb_shared(m) || skb_cloned(m) || skb_has_frag_list(m) ||
	    m->pp_recycle || skb_zcopy(m))
		return false;
	__skb_pull(m, skb_headlen(m));
	for (j = 0; j < skb_shinfo(m)->nr_frags; j++)
		skb_frag_unref(m, j);
	skb_shinfo(m)->nr_frags = 0;
	m->len = 0;
	m->data_len = 0;
	m->ip_summed = CHECKSUM_NONE;
	return true;
}

/* Give an inner GSO frame that spans a frag_list the layout GRO produces
 * and skb_segment() expects: the head holds the headers and exactly one
 * MSS of payload, every frag_list member exactly one MSS (the last one
 * less), members without linear data.  Pages are shared, not copied.
 * Returns 0 if the frame already fits, 1 if reshaped, 2 if it had to be
 * linearized (a head with more than one MSS of linear payload, or more
 * pieces to one MSS than a skb has fragments), -errno.
 */
int stt_fraglist_fit(struct sk_buff *skb)
{
	unsigned int mss = skb_shinfo(skb)->gso_size;
	unsigned int hdr = skb_transport_offset(skb) + tcp_hdrlen(skb);
	unsigned int n = 0, i = 0, max, head_want, total, j;
	struct sk_buff *fl, *it, *next, *spare = NULL, *nlist = NULL;
	struct sk_buff **tail = &nlist;
	struct stt_piece *p;
	int err = -ENOMEM;

	fl = skb_shinfo(skb)->frag_list;
	if (skb->len - skb->data_len - hdr > mss || hdr > skb_headlen(skb))
		goto linearize;

	/* Already in shape? */
	total = skb_headlen(skb) - hdr;
	for (j = 0; j < skb_shinfo(skb)->nr_frags; j++)
		total += skb_frag_size(&skb_shinfo(skb)->frags[j]);
	if (total == mss) {
		bool fits = true;

		for (it = fl; it; it = it->next)
			if ((it->next && it->len != mss) || it->len > mss ||
			    skb_headlen(it)) {
				fits = false;
				break;
			}
		if (fits)
			return 0;
	}

	max = skb_shinfo(skb)->nr_frags;
	for (it = fl; it; it = it->next)
		max += skb_shinfo(it)->nr_frags + 1;
	p = kmalloc_array(max, sizeof(*p), GFP_ATOMIC);
	if (!p)
		return -ENOMEM;

	/* The head keeps its linear part; its fragments join the pool. */
	if (stt_gather(skb, skb_headlen(skb), p, &n))
		goto err_pieces;
	for (it = fl; it; it = it->next)
		if (stt_gather(it, 0, p, &n))
			goto err_pieces;
	head_want = mss - (skb_headlen(skb) - hdr);
	if (!stt_pieces_fit(p, n, head_want, mss)) {
		/* Nothing changed yet: a copy still delivers the frame. */
		while (i < n)
			put_page(p[i++].page);
		kfree(p);
		goto linearize;
	}

	/* Every byte is in the pool now, each piece with its own page
	 * reference: the old members are emptied for reuse or consumed (not
	 * dropped: drop monitors would report each as a lost packet), and
	 * the frame keeps only its head until the new chain is complete.
	 */
	skb_shinfo(skb)->frag_list = NULL;
	for (it = fl; it; it = next) {
		next = it->next;
		if (stt_member_empty(it)) {
			it->next = spare;
			spare = it;
		} else {
			consume_skb(it);
		}
	}
	for (j = 0; j < skb_shinfo(skb)->nr_frags; j++)
		skb_frag_unref(skb, j);
	skb_shinfo(skb)->nr_frags = 0;
	skb->len = skb_headlen(skb);
	skb->data_len = 0;

	/* From here on stt_pieces_fit() has vouched for every step: the
	 * payload exceeds one MSS (stt_apply_offloads() set gso_size only
	 * then), so the head fills, and no skb runs out of fragments before
	 * its MSS.  The checks below keep a broken invariant from building a
	 * frame that skb_segment() would mis-cut; debug kernels warn.
	 */
	if (unlikely(stt_fill_frags(skb, p, n, &i, head_want) != head_want)) {
		DEBUG_NET_WARN_ON_ONCE(1);
		err = -EINVAL;
		goto err_list;	/* the frame is no longer whole: drop it */
	}
	skb->len += head_want;
	skb->data_len += head_want;

	while (i < n) {
		struct sk_buff *m = spare;
		unsigned int got;

		if (m) {
			/* its truesize still counts the pages it held */
			spare = m->next;
			m->next = NULL;
			got = stt_fill_frags(m, p, n, &i, mss);
		} else {
			m = alloc_skb(0, GFP_ATOMIC);
			if (!m)
				goto err_list;
			got = stt_fill_frags(m, p, n, &i, mss);
			m->truesize += got;
		}
		m->len = got;
		m->data_len = got;
		*tail = m;
		tail = &m->next;
		skb->len += got;
		skb->data_len += got;
		if (unlikely(got < mss && i < n)) {
			DEBUG_NET_WARN_ON_ONCE(1);
			err = -EINVAL;
			goto err_list;
		}
	}

	skb_shinfo(skb)->frag_list = nlist;
	while (spare) {
		it = spare->next;
		consume_skb(spare);
		spare = it;
	}
	kfree(p);
	return 1;

err_list:
	/* nothing left to undo: the frame is dropped with what it holds */
	skb_shinfo(skb)->frag_list = nlist;
	stt_free_list(spare);
err_pieces:
	while (i < n)
		put_page(p[i++].page);
	kfree(p);
	return err;

linearize:
	return skb_linearize(skb) ? -ENOMEM : 2;
}
