// SPDX-License-Identifier: GPL-2.0
/*
 * STT reassembly: the segments GRO did not merge (GRO off, reordering,
 * loss) are collected per frame, keyed by outer addresses, ports and frame
 * ID, and chained into one skb through its frag_list without copying.
 *
 * Bounds: a namespace holds at most reasm_max_mem bytes (skb truesize plus
 * bookkeeping) in incomplete frames, evicting the oldest frames first; an
 * incomplete frame expires after reasm_timeout_ms.  Every segment must
 * agree on the frame length; duplicates are dropped, overlaps kill the
 * frame (a peer that sends them is broken or hostile).
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

struct stt_frag_key {
	struct in6_addr	saddr;	/* IPv4 addresses use s6_addr32[0] */
	struct in6_addr	daddr;
	__be32		frame_id;
	__be16		sport;
	__be16		dport;
	u32		ipv6;
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

/* Unhash @fq and move its segments to @free.  Lock held. */
static void stt_fq_kill(struct stt_reasm *r, struct stt_frag_queue *fq,
			struct sk_buff **free)
{
	struct sk_buff *last;

	hlist_del(&fq->hnode);
	list_del(&fq->lru);
	r->nqueues--;
	atomic_long_sub(fq->mem, &r->mem);
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
	struct stt_frag_queue *fq, *tmp;
	struct sk_buff *free = NULL;
	unsigned long next = 0;
	unsigned int expired = 0;

	spin_lock_bh(&r->lock);
	list_for_each_entry_safe(fq, tmp, &r->lru, lru) {
		if (time_before(jiffies, fq->expires)) {
			next = fq->expires;
			break;
		}
		stt_fq_kill(r, fq, &free);
		expired++;
	}
	if (next && !r->dead)
		queue_delayed_work(system_power_efficient_wq, &r->expire_work,
				   max_t(long, next - jiffies, 1));
	spin_unlock_bh(&r->lock);

	if (expired)
		stt_ns_add(sn, STT_NS_DROP_REASM_TIMEOUT, expired);
	stt_free_list(free);
}

/* Lock held.  Keeps the longest walk seen: what a crafted flood of
 * colliding keys would cost every lookup (ns_reasm_chain_max).
 */
static struct stt_frag_queue *stt_fq_find(struct stt_reasm *r, u32 h,
					  const struct stt_frag_key *k)
{
	struct stt_frag_queue *fq, *found = NULL;
	unsigned int walked = 0;

	hlist_for_each_entry(fq, &r->hash[h], hnode) {
		walked++;
		if (!memcmp(&fq->key, k, sizeof(*k))) {
			found = fq;
			break;
		}
	}
	if (walked > r->chain_max)
		WRITE_ONCE(r->chain_max, walked);
	return found;
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
	struct sk_buff *free = NULL, *prev, *cur, *frame = NULL;
	enum stt_ns_stat why = STT_NS_STAT_MAX;
	unsigned int evicted = 0, cost;
	struct stt_frag_queue *fq;
	struct stt_frag_key k;
	u32 h;

	stt_frag_key_init(skb, &k);
	h = stt_frag_hash(r, &k);
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
	cost = skb->truesize;

	spin_lock_bh(&r->lock);
	fq = stt_fq_find(r, h, &k);
	if (!fq)
		cost += sizeof(*fq);

	/* Stay within the bound: oldest incomplete frames go first. */
	while (atomic_long_read(&r->mem) + cost > READ_ONCE(stt_reasm_max_mem)) {
		struct stt_frag_queue *old;

		old = list_first_entry_or_null(&r->lru, struct stt_frag_queue,
					       lru);
		if (!old || old == fq)
			break;
		stt_fq_kill(r, old, &free);
		evicted++;
	}
	if (atomic_long_read(&r->mem) + cost > READ_ONCE(stt_reasm_max_mem)) {
		if (fq)
			stt_fq_kill(r, fq, &free);
		why = STT_NS_DROP_REASM_MEM;
		goto drop;
	}

	if (!fq) {
		fq = kzalloc_obj(*fq, GFP_ATOMIC);
		if (!fq) {
			why = STT_NS_DROP_NOMEM;
			goto drop;
		}
		fq->key = k;
		fq->frame_len = STT_SEG_CB(skb)->frame_len;
		fq->expires = jiffies + stt_reasm_timeout();
		fq->mem = sizeof(*fq);
		atomic_long_add(sizeof(*fq), &r->mem);
		hlist_add_head(&fq->hnode, &r->hash[h]);
		list_add_tail(&fq->lru, &r->lru);
		if (!r->nqueues++ && !r->dead)
			queue_delayed_work(system_power_efficient_wq,
					   &r->expire_work,
					   stt_reasm_timeout() + 1);
	}

	if (STT_SEG_CB(skb)->frame_len != fq->frame_len) {
		stt_fq_kill(r, fq, &free);
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
	if (cur && STT_SEG_CB(cur)->offset == off && cur->len == len) {
		why = STT_NS_DROP_DUP;
		goto drop;
	}
	if ((prev && STT_SEG_CB(prev)->offset + prev->len > off) ||
	    (cur && off + len > STT_SEG_CB(cur)->offset)) {
		stt_fq_kill(r, fq, &free);
		why = STT_NS_DROP_OVERLAP;
		goto drop;
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
	atomic_long_add(skb->truesize, &r->mem);
	fq->ce |= STT_SEG_CB(skb)->ecn_ce;

	if (fq->received == fq->frame_len) {
		bool ce = fq->ce;

		*nsegs = fq->nsegs;
		frame = fq->segs;
		fq->segs = NULL;
		stt_fq_kill(r, fq, &free);
		spin_unlock_bh(&r->lock);

		frame = stt_build_frame(frame);
		/* The head may have arrived on a device since deleted. */
		frame->dev = dev;
		STT_SEG_CB(frame)->ecn_ce = ce;
		stt_ns_inc(sn, STT_NS_REASM_FRAMES);
		stt_ns_add(sn, STT_NS_REASM_SEGS, *nsegs);
		goto out;
	}
	spin_unlock_bh(&r->lock);
	goto out;

drop:
	spin_unlock_bh(&r->lock);
	stt_ns_inc(sn, why);
	kfree_skb(skb);
out:
	if (evicted)
		stt_ns_add(sn, STT_NS_DROP_REASM_MEM, evicted);
	stt_free_list(free);
	return frame;
}

int stt_reasm_init(struct stt_net *sn)
{
	struct stt_reasm *r = &sn->reasm;
	int i;

	r->hash = kvmalloc_array(STT_REASM_HASH_SIZE, sizeof(*r->hash),
				 GFP_KERNEL);
	if (!r->hash)
		return -ENOMEM;
	for (i = 0; i < STT_REASM_HASH_SIZE; i++)
		INIT_HLIST_HEAD(&r->hash[i]);
	r->hash_rnd = get_random_u32();
	spin_lock_init(&r->lock);
	INIT_LIST_HEAD(&r->lru);
	atomic_long_set(&r->mem, 0);
	INIT_DELAYED_WORK(&r->expire_work, stt_reasm_expire);
	return 0;
}

/* Namespace exit: the hooks are gone, nothing adds segments any more. */
void stt_reasm_exit(struct stt_net *sn)
{
	struct stt_reasm *r = &sn->reasm;
	struct stt_frag_queue *fq, *tmp;
	struct sk_buff *free = NULL;

	spin_lock_bh(&r->lock);
	r->dead = true;
	spin_unlock_bh(&r->lock);
	cancel_delayed_work_sync(&r->expire_work);

	spin_lock_bh(&r->lock);
	list_for_each_entry_safe(fq, tmp, &r->lru, lru)
		stt_fq_kill(r, fq, &free);
	spin_unlock_bh(&r->lock);
	stt_free_list(free);
	kvfree(r->hash);
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

/* Give an inner GSO frame that spans a frag_list the layout GRO produces
 * and skb_segment() expects: the head holds the headers and exactly one
 * MSS of payload, every frag_list member exactly one MSS (the last one
 * less), members without linear data.  Pages are shared, not copied.
 * Returns 0 if the frame already fits, 1 if reshaped, 2 if it had to be
 * linearized (a head with more than one MSS of linear payload), -errno.
 */
int stt_fraglist_fit(struct sk_buff *skb)
{
	unsigned int mss = skb_shinfo(skb)->gso_size;
	unsigned int hdr = skb_transport_offset(skb) + tcp_hdrlen(skb);
	unsigned int n = 0, i = 0, max, head_want, total, j;
	struct sk_buff *fl, *it, *nlist = NULL, **tail = &nlist;
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
	for (j = 0; j < skb_shinfo(skb)->nr_frags; j++)
		skb_frag_unref(skb, j);
	skb_shinfo(skb)->nr_frags = 0;
	if (stt_fill_frags(skb, p, n, &i, head_want) != head_want)
		goto err_pieces;	/* the head lost its frags: drop it */

	while (i < n) {
		struct sk_buff *m = alloc_skb(0, GFP_ATOMIC);
		unsigned int got;

		if (!m)
			goto err_list;
		got = stt_fill_frags(m, p, n, &i, mss);
		m->len = got;
		m->data_len = got;
		m->truesize += got;
		*tail = m;
		tail = &m->next;
		if (got < mss && i < n) {
			err = -E2BIG;	/* more than MAX_SKB_FRAGS pieces */
			goto err_list;
		}
	}

	skb_shinfo(skb)->frag_list = nlist;
	/* Members may be shared (the frame was a clone): leave their ->next
	 * alone, as stt_free_list() would not.
	 */
	kfree_skb_list(fl);
	skb->data_len = skb->len - skb_headlen(skb);
	kfree(p);
	return 1;

err_list:
	stt_free_list(nlist);
err_pieces:
	while (i < n)
		put_page(p[i++].page);
	kfree(p);
	return err;

linearize:
	return skb_linearize(skb) ? -ENOMEM : 2;
}
