// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The reference model of the data path: see model.h. From the README only. */
#include <stdlib.h>
#include <string.h>
#include <linux/bpf.h>
#include "xrl_meter.h"
#include "model.h"

#define ETH_IP4		0x0800
#define ETH_IP6		0x86DD
#define ETH_8021Q	0x8100
#define ETH_8021AD	0x88A8

static unsigned be16(const uint8_t *p)
{
	return (unsigned)p[0] << 8 | p[1];
}

int model_init(struct model *m)
{
	memset(m, 0, sizeof(*m));
	m->b = calloc(M_BUCKETS, sizeof(*m->b));
	m->hot = calloc(M_HOT, sizeof(*m->hot));
	m->ncpus = 1;
	m->keys = 65536;
	return m->b && m->hot ? 0 : -1;
}

static void model_hot_clear(struct model *m)
{
	for (uint32_t i = 0; i < M_HOT; i++)
		free(m->hot[i].st);
	memset(m->hot, 0, M_HOT * sizeof(*m->hot));
}

void model_free(struct model *m)
{
	if (m->hot)
		model_hot_clear(m);
	free(m->b);
	free(m->hot);
	m->b = NULL;
	m->hot = NULL;
}

/* ---- parse: README, "Packets it does not meter" ---- */

static bool is_ext6(unsigned nh)
{
	/* hop-by-hop, routing, fragment, AH, destination options, mobility */
	return nh == 0 || nh == 43 || nh == 44 || nh == 51 || nh == 60 || nh == 135;
}

/* README, Endpoint rules: the destination port (and TCP's SYN without ACK)
 * when the bytes that hold them are in the IP packet, by its length field
 * and within the frame (TCP: the first 14 bytes, through the flags; UDP:
 * the first 4); otherwise the packet has no ports, as a later fragment.
 * README, Packets it does not meter: a first fragment without the whole
 * fixed TCP (20 bytes) or UDP (8) header is malformed. l3end: the end of
 * the IP packet by its length field. */
static void model_ports(const uint8_t *f, size_t len, size_t l4, size_t l3end, bool first,
			struct m_pkt *p)
{
	size_t end = l3end < len ? l3end : len;
	size_t room = end > l4 ? end - l4 : 0;

	if (p->proto != 6 && p->proto != 17)
		return;
	if (first && room < (p->proto == 6 ? 20u : 8u)) {
		p->kind = M_MALFORMED;
		return;
	}
	if (p->proto == 6 && room >= 14) {
		p->syn = (f[l4 + 13] & 0x02) && !(f[l4 + 13] & 0x10);
	} else if (!(p->proto == 17 && room >= 4)) {
		return;
	}
	p->dport = be16(f + l4 + 2);
	p->ports = true;
}

void model_parse(const uint8_t *f, size_t len, struct m_pkt *p)
{
	size_t off = 14;
	unsigned proto, tags = 0;

	memset(p, 0, sizeof(*p));
	p->len = len;
	p->kind = M_MALFORMED;
	if (len < 14)
		return;		/* too short for Ethernet */
	proto = be16(f + 12);
	/* up to two VLAN tags are skipped; a third is malformed */
	while (proto == ETH_8021Q || proto == ETH_8021AD) {
		if (tags == 2 || off + 4 > len)
			return;
		proto = be16(f + off + 2);
		off += 4;
		tags++;
	}
	if (proto == ETH_IP4) {
		const uint8_t *ip = f + off;
		size_t hl, tot;

		if (off + 20 > len || ip[0] >> 4 != 4)
			return;
		hl = (ip[0] & 15) * 4;
		tot = be16(ip + 2);
		if (hl < 20 || off + hl > len || tot < hl || off + tot > len)
			return;
		/* options and fragments: metered by the source like any other */
		p->family = 4;
		memcpy(p->src, ip + 12, 4);
		p->kind = M_IP;
		p->proto = ip[9];
		/* RFC 3128: a TCP fragment at offset 1 is malformed */
		if (p->proto == 6 && (be16(ip + 6) & 0x1fff) == 1) {
			p->kind = M_MALFORMED;
			return;
		}
		/* a non-first fragment (offset != 0) carries no L4 header */
		if (!(be16(ip + 6) & 0x1fff))
			model_ports(f, len, off + hl, off + tot, be16(ip + 6) & 0x2000, p);
		return;
	}
	if (proto == ETH_IP6) {
		const uint8_t *ip = f + off;
		size_t at = off + 40;
		unsigned nh, i;
		bool frag = false, first = false;
		size_t l3end;

		if (at > len || ip[0] >> 4 != 6 || at + be16(ip + 4) > len)
			return;
		/* a jumbogram (payload length 0): the frame's end */
		l3end = be16(ip + 4) ? at + be16(ip + 4) : len;
		/* the first eight extension headers must lie inside the frame */
		nh = ip[6];
		for (i = 0; i < 8 && is_ext6(nh); i++) {
			size_t hl;

			if (at + 8 > len)	/* every extension header is >= 8 bytes */
				return;
			if (nh == 44)
				hl = 8;
			else if (nh == 51)
				hl = ((size_t)f[at + 1] + 2) * 4;
			else
				hl = ((size_t)f[at + 1] + 1) * 8;
			if (at + hl > len)
				return;
			/* after a non-first fragment come data, not headers:
			 * its protocol is the fragment header's next header */
			if (nh == 44 && (be16(f + at + 2) & 0xfff8)) {
				frag = true;
				nh = f[at];
				at += hl;
				/* RFC 3128, as for IPv4 */
				if (nh == 6 && (be16(f + at - hl + 2) & 0xfff8) == 8)
					return;
				break;
			}
			if (nh == 44)
				first = be16(f + at + 2) & 1;
			nh = f[at];
			at += hl;
		}
		/* a ninth extension header: the protocol unknown, malformed */
		if (!frag && is_ext6(nh))
			return;
		p->family = 6;
		memcpy(p->src, ip + 8, 16);
		p->kind = M_IP;
		/* past the eighth extension header: the header found there */
		p->proto = nh;
		if (!frag)
			model_ports(f, len, at, l3end, first, p);
		return;
	}
	p->kind = M_NON_IP;
}

/* ---- classify: the most specific prefix of the packet's family ---- */

static bool prefix_has(const uint8_t *pfx, unsigned bits, const uint8_t *a)
{
	unsigned i;

	for (i = 0; i < bits / 8; i++)
		if (pfx[i] != a[i])
			return false;
	if (bits % 8) {
		uint8_t mask = (uint8_t)(0xff << (8 - bits % 8));

		if ((pfx[i] ^ a[i]) & mask)
			return false;
	}
	return true;
}

int model_classify(const struct model *m, const struct m_pkt *p)
{
	int best = -1;

	for (int i = 0; i < m->n_rules; i++) {
		const struct m_rule *r = &m->rules[i];

		if (r->ep || r->family != p->family || !prefix_has(r->addr, r->prefix_len, p->src))
			continue;
		if (best < 0 || r->prefix_len > m->rules[best].prefix_len)
			best = i;
	}
	return best;
}

/* README, Endpoint rules: "dport 0-65535" is every port, as no dport. */
static bool names_ports(const struct m_rule *r)
{
	return r->has_dport && !(r->dport_lo == 0 && r->dport_hi == 65535);
}

static bool ep_covers(const struct m_rule *r, const struct m_pkt *p)
{
	if (!r->ep || r->family != p->family || r->proto != p->proto ||
	    !prefix_has(r->addr, r->prefix_len, p->src))
		return false;
	if (!names_ports(r) && !r->syn)
		return true;			/* every packet of the protocol */
	if (!p->ports)
		return false;			/* a later fragment, a header cut short */
	if (names_ports(r) && (p->dport < r->dport_lo || p->dport > r->dport_hi))
		return false;
	return !r->syn || p->syn;
}

/* Of two endpoint rules covering a packet, is a more specific than b? The
 * longer source prefix; the narrower port range; syn; the lower id. */
static bool ep_before(const struct m_rule *a, const struct m_rule *b)
{
	uint32_t wa = names_ports(a) ? a->dport_hi - a->dport_lo : 65536;
	uint32_t wb = names_ports(b) ? b->dport_hi - b->dport_lo : 65536;

	if (a->prefix_len != b->prefix_len)
		return a->prefix_len > b->prefix_len;
	if (wa != wb)
		return wa < wb;
	if (a->syn != b->syn)
		return a->syn;
	return a->id < b->id;
}

int model_classify_endpoint(const struct model *m, const struct m_pkt *p)
{
	int best = -1;

	for (int i = 0; i < m->n_rules; i++)
		if (ep_covers(&m->rules[i], p) &&
		    (best < 0 || ep_before(&m->rules[i], &m->rules[best])))
			best = i;
	return best;
}

/* ---- buckets: one per (rule generation, source masked to the key) ---- */

static struct m_bucket *bucket(struct model *m, const struct m_rule *r,
			       const struct m_pkt *p, bool *fresh)
{
	unsigned klen = r->key_len ? r->key_len : (p->family == 4 ? 32 : 64);
	uint8_t key[16] = {};
	uint64_t h = 1469598103934665603ULL ^ r->gen ^ (uint64_t)p->family << 40;

	memcpy(key, p->src, klen / 8);
	if (klen % 8)
		key[klen / 8] = p->src[klen / 8] & (uint8_t)(0xff << (8 - klen % 8));
	for (int i = 0; i < 16; i++)
		h = (h ^ key[i]) * 1099511628211ULL;
	for (uint64_t i = h & (M_BUCKETS - 1);; i = (i + 1) & (M_BUCKETS - 1)) {
		struct m_bucket *b = &m->b[i];

		if (!b->used) {
			b->used = 1;
			b->gen = r->gen;
			b->family = p->family;
			memcpy(b->key, key, 16);
			m->n_buckets++;
			*fresh = true;
			return b;
		}
		if (b->gen == r->gen && b->family == p->family && !memcmp(b->key, key, 16)) {
			*fresh = false;
			return b;
		}
	}
}

/* A new key whose first packet was refused is not kept: the slot it took
 * last in its probe chain is free again. */
static void bucket_forget(struct model *m, struct m_bucket *b)
{
	memset(b, 0, sizeof(*b));
	m->n_buckets--;
}

/* README, Rules (Aggregate, New keys): both count packets; the aggregate's
 * burst is one second of its rate (at least 1: decided) unless written;
 * the new-key budget's burst is its rate's count, and without new-keys a
 * limit rule gets a sixteenth of the table a second after a burst of half
 * of it. A CPU takes tokens in chunks of 1/100 of the burst shared among
 * the CPUs (at least 1, at most 1024). */
static uint32_t model_chunk(const struct model *m, uint64_t burst)
{
	uint64_t c = burst / (100ULL * m->ncpus);

	return c < 1 ? 1 : c > 1024 ? 1024 : (uint32_t)c;
}

static void model_shared_params(const struct model *m, struct m_rule *r)
{
	uint64_t burst;

	r->agg_interval = r->agg_limit = r->nk_interval = r->nk_limit = 0;
	if (r->action != XRL_ACT_LIMIT)
		return;
	if (r->agg_count) {
		burst = r->agg_burst ? r->agg_burst :
			r->agg_count * XRL_NSEC_PER_SEC / r->agg_period_ns;
		if (burst < 1)
			burst = 1;
		r->agg_interval = xrl_rate_interval(r->agg_count, r->agg_period_ns);
		r->agg_limit = xrl_burst_limit(r->agg_interval, burst);
		r->agg_chunk = model_chunk(m, burst);
	}
	if (r->nk_count) {
		burst = r->nk_count;
		r->nk_interval = xrl_rate_interval(r->nk_count, r->nk_period_ns);
	} else {
		uint64_t rate = m->keys / 16 ? m->keys / 16 : 1;

		burst = m->keys / 2 > rate ? m->keys / 2 : rate;
		r->nk_interval = xrl_rate_interval(rate, XRL_NSEC_PER_SEC);
	}
	r->nk_limit = xrl_burst_limit(r->nk_interval, burst);
	r->nk_chunk = model_chunk(m, burst);
}

void model_set_rules(struct model *m, const struct m_rule *v, int n)
{
	struct m_rule old[M_MAX_RULES];
	int n_old = m->n_rules;

	memcpy(old, m->rules, sizeof(old));
	for (int i = 0; i < n; i++) {
		struct m_rule *r = &m->rules[i];

		*r = v[i];
		memset(&r->st, 0, sizeof(r->st));
		r->agg_used = r->nk_used = false;
		r->agg_tat = r->nk_tat = 0;
		for (int j = 0; j < n_old; j++)
			if (old[j].gen == r->gen) {
				/* unchanged: its counters, aggregate and new-key
				 * budget go on */
				r->st = old[j].st;
				r->agg_used = old[j].agg_used;
				r->agg_tat = old[j].agg_tat;
				r->nk_used = old[j].nk_used;
				r->nk_tat = old[j].nk_tat;
			}
		model_shared_params(m, r);
		/* README, Rules and Algorithms: a bit rate is an eighth of a
		 * byte per bit; a window rule's rate is its limit per window */
		if (r->algo == XRL_ALGO_GCRA) {
			r->interval = xrl_rate_interval(r->rate_count, r->unit == XRL_UNIT_BITS ?
							r->rate_period_ns * 8 : r->rate_period_ns);
			r->limit = xrl_burst_limit(r->interval, r->burst);
		} else {
			r->interval = r->rate_period_ns;
			r->limit = r->unit == XRL_UNIT_BITS ? r->rate_count / 8 : r->rate_count;
		}
	}
	m->n_rules = n;
	/* a commit voids the hot-key cache (and rules[] are renumbered) */
	model_hot_clear(m);
}

/* What one packet costs in the rule's unit: 1, or its frame's length in
 * bytes (Ethernet header and VLAN tags included) for a byte or bit rate. */
static uint64_t model_cost(const struct m_rule *r, const struct m_pkt *p)
{
	return r->unit == XRL_UNIT_PACKETS ? 1 : p->len;
}

/* ---- the hot-key cache, ideal: one entry per source and rule, never
 * evicted, every statement kept ---- */

static struct m_hot *model_hot(struct model *m, const struct m_pkt *p, int rule, bool add)
{
	uint64_t h = 1099511628211ULL * (uint64_t)p->family ^ (uint64_t)rule << 32;

	for (int i = 0; i < 16; i++)
		h = (h ^ p->src[i]) * 1099511628211ULL;
	for (uint64_t i = h & (M_HOT - 1), n = 0; n < M_HOT; i = (i + 1) & (M_HOT - 1), n++) {
		struct m_hot *e = &m->hot[i];

		if (e->used && e->family == p->family && e->rule == rule &&
		    !memcmp(e->src, p->src, 16))
			return e;
		if (!e->used) {
			if (!add)
				return NULL;
			e->used = 1;
			e->family = p->family;
			e->rule = rule;
			memcpy(e->src, p->src, 16);
			return e;
		}
	}
	return NULL;
}

/* README, Limits of the design: the cache answers for an enforcing rule
 * that is not dry-run and not a fleet rule, source or endpoint, of every
 * algorithm, packets or bytes. */
static bool model_cacheable(const struct model *m, const struct m_rule *r)
{
	/* docs/answers.md: a slipping rule's refusals each meet the bucket */
	return m->mode == XRL_MODE_ENFORCE && !r->dry_run && !r->fleet && !r->slip;
}

/* The statement a refusal of this packet by its key's bucket makes
 * (xrl_meter.h): false when there is none. The bucket as it is: a refusal
 * leaves it alone. */
static bool model_refusal(const struct model *m, const struct m_rule *r, const struct m_pkt *p,
			  const struct m_bucket *b, struct m_stmt *st)
{
	uint64_t cost = model_cost(r, p), now = xrl_ns_to_tu(m->now_ns), u;

	switch (r->algo) {
	case XRL_ALGO_FIXED_WINDOW:
		u = xrl_fixed_refused_until(b->tat, m->now_ns, r->interval);
		u = u ? xrl_ns_to_tu(u) : 0;
		break;
	case XRL_ALGO_SLIDING_WINDOW:
		u = xrl_sliding_refused_until(b->tat, b->win1, m->now_ns, r->interval, r->limit, cost);
		u = u ? xrl_ns_to_tu(u) : 0;
		break;
	case XRL_ALGO_GCRA:
	default:
		u = xrl_gcra_refused_until(b->tat, r->interval, r->limit, cost);
		break;
	}
	st->until = u;
	st->min_len = r->unit == XRL_UNIT_PACKETS ? 0 : (uint32_t)cost;
	return u && xrl_before(now, u) && st->min_len <= 0xffff;
}

/* Keep a statement: drop those it covers and those run out. */
static void model_hot_add(struct model *m, struct m_hot *e, const struct m_stmt *st)
{
	uint64_t now = xrl_ns_to_tu(m->now_ns);
	int n = 0;

	for (int i = 0; i < e->n; i++) {
		struct m_stmt *o = &e->st[i];

		if (o->min_len <= st->min_len && !xrl_before(o->until, st->until))
			return;		/* covered already */
		if (!xrl_before(now, o->until) ||
		    (st->min_len <= o->min_len && !xrl_before(st->until, o->until)))
			continue;
		e->st[n++] = *o;
	}
	e->n = n;
	if (e->n == e->cap) {
		int cap = e->cap ? 2 * e->cap : 4;
		struct m_stmt *v = realloc(e->st, cap * sizeof(*v));

		if (!v)
			abort();
		e->st = v;
		e->cap = cap;
	}
	e->st[e->n++] = *st;
}

/* Does a statement cover this packet now? */
static bool model_hot_covers(const struct model *m, const struct m_hot *e, const struct m_pkt *p)
{
	uint64_t now = xrl_ns_to_tu(m->now_ns);

	for (int i = 0; i < e->n; i++)
		if (p->len >= e->st[i].min_len && xrl_before(now, e->st[i].until))
			return true;
	return false;
}

/* A refusal of rule r's bucket: its statement into the ideal cache. */
static void model_hot_refused(struct model *m, const struct m_rule *r, const struct m_pkt *p,
			      const struct m_bucket *b)
{
	struct m_stmt st;
	struct m_hot *e;

	if (model_cacheable(m, r) && model_refusal(m, r, p, b, &st) &&
	    (e = model_hot(m, p, (int)(r - m->rules), true)))
		model_hot_add(m, e, &st);
}

/* Enforcing, the watchdog quiet, a statement covers the packet under rule
 * r: the cache may answer (the drop is the bucket's anyway). Its own
 * statement joins the others: the program's cache, having missed, may
 * have made it. */
static bool model_failing(const struct model *m);

static bool model_hot_answers(struct model *m, struct m_rule *r, const struct m_pkt *p)
{
	struct m_hot *e;
	struct m_bucket *b;
	bool fresh;

	if (m->mode != XRL_MODE_ENFORCE || model_failing(m) ||
	    !(e = model_hot(m, p, (int)(r - m->rules), false)) || !model_hot_covers(m, e, p))
		return false;
	b = bucket(m, r, p, &fresh);	/* there: a statement came from it */
	if (fresh)
		abort();
	model_hot_refused(m, r, p, b);
	return true;
}

/* ---- shared GCRAs: the aggregate and the new-key budget ---- */

/* One token of a shared GCRA on this (the one) CPU: from the tokens the CPU
 * holds, else a chunk from the GCRA, else (near the limit: decided, see
 * the README) the one token left. Refused: *until, the first time it may
 * admit again (TAT only grows). */
static int model_take(__u64 *tat, bool *used, __u64 *tokens, __u64 now,
		      __u64 interval, __u64 limit, __u32 chunk, __u64 *until)
{
	__u64 cur = *used ? *tat : now, next, cost = chunk;

	if (*tokens) {
		(*tokens)--;
		return 1;
	}
	if (!xrl_gcra(cur, now, interval, limit, cost, &next)) {
		cost = 1;
		if (!xrl_gcra(cur, now, interval, limit, cost, &next)) {
			*until = xrl_gcra_refused_until(cur, interval, limit, 1);
			return 0;
		}
	}
	*tat = next;
	*used = true;
	*tokens = cost - 1;
	return 1;
}

/* The rule's aggregate after the key admitted: 1 admit (or none). Refused,
 * the CPU drops the rule's packets until it may admit again. */
static int model_aggregate(struct m_rule *r, __u64 now)
{
	__u64 until = 0;

	if (!r->agg_interval)
		return 1;
	if (model_take(&r->agg_tat, &r->agg_used, &r->st.agg_tokens, now, r->agg_interval,
		       r->agg_limit, r->agg_chunk, &until))
		return 1;
	r->st.agg_dropped++;
	r->st.agg_until = until;
	return 0;
}

/* Refused by the aggregate on this CPU and not yet at the time it may
 * admit again: dropped before the key is looked up. */
static bool model_agg_closed(struct model *m, struct m_rule *r)
{
	if (!r->agg_interval || !r->st.agg_until)
		return false;
	if (!xrl_before(xrl_ns_to_tu(m->now_ns), r->st.agg_until)) {
		r->st.agg_until = 0;
		return false;
	}
	r->st.agg_dropped++;
	return true;
}

/* May a new key of the rule get a bucket? Every limit rule has a budget. */
static int model_new_key(struct model *m, struct m_rule *r)
{
	__u64 until;

	if (model_take(&r->nk_tat, &r->nk_used, &r->st.nk_tokens, xrl_ns_to_tu(m->now_ns),
		       r->nk_interval, r->nk_limit, r->nk_chunk, &until))
		return 1;
	r->st.nk_refused++;
	return 0;
}

/* The rule's algorithm on the key's bucket, then the aggregate: 1 admit,
 * 0 over a limit. A new key needs the new-key budget first (a token spent
 * even when its first packet then does not fit: decided); without one it
 * is metered by the aggregate alone, or dropped. It starts with a full
 * bucket (TAT = now) or empty windows, and is a new key (counted, and in
 * the table) once its first packet is admitted by its bucket. */
static int model_meter(struct model *m, struct m_rule *r, const struct m_pkt *p)
{
	__u64 now = xrl_ns_to_tu(m->now_ns), cost = model_cost(r, p), next;
	bool fresh;
	struct m_bucket *b = bucket(m, r, p, &fresh);
	int ok, k;

	if (fresh && !model_new_key(m, r)) {
		bucket_forget(m, b);
		return r->agg_interval ? model_aggregate(r, now) : 0;
	}
	if (fresh) {
		if (r->algo == XRL_ALGO_GCRA)
			b->tat = now;
		else
			b->tat = b->win1 = xrl_win_empty(m->now_ns, r->interval);
	}
	switch (r->algo) {
	case XRL_ALGO_FIXED_WINDOW:
		ok = xrl_fixed_window(b->tat, m->now_ns, r->interval, r->limit, cost, &next);
		if (ok)
			b->tat = next;
		break;
	case XRL_ALGO_SLIDING_WINDOW:
		k = xrl_sliding_window(b->tat, b->win1, m->now_ns, r->interval, r->limit,
				       cost, &next);
		ok = k >= 0;
		if (k == 0)
			b->tat = next;
		else if (k == 1)
			b->win1 = next;
		break;
	case XRL_ALGO_GCRA:
	default:
		ok = xrl_gcra(b->tat, now, r->interval, r->limit, cost, &next);
		if (ok)
			b->tat = next;
		break;
	}
	if (fresh && ok) {
		r->st.new_keys++;
		m->g.keys_inserted++;
	} else if (fresh) {
		bucket_forget(m, b);
	}
	if (!ok) {
		/* refused: refused until a time the algorithm knows (README,
		 * Limits of the design); the bucket counts the refusal */
		if (!fresh) {
			m->kdrops = ++b->dropped;
			model_hot_refused(m, r, p, b);
		}
		return 0;
	}
	return model_aggregate(r, now);
}

/* The watchdog fired: a heartbeat older than the watchdog time (0: none).
 * A heartbeat stamped after the clock the packet read is fresh, not old. */
static bool model_failing(const struct model *m)
{
	return m->watchdog_ns && m->now_ns > m->heartbeat_ns &&
	       m->now_ns - m->heartbeat_ns > m->watchdog_ns;
}

/* What a rule made of a packet: passed, dropped, or (the rule's or the
 * mode's dry-run) passed as a would-drop; by its on-failure policy or not. */
/* C_SLIP: refused (dropped), its key's slip-th refusal: the answer
 * step's (docs/answers.md) */
enum m_count { C_PASS, C_DROP, C_FAIL_PASS, C_FAIL_DROP, C_WOULD_DROP, C_FAIL_WOULD_DROP, C_SLIP };

static bool dropped(enum m_count c)
{
	return c == C_DROP || c == C_FAIL_DROP || c == C_SLIP;
}

/* README, Modes, Failure policy and Rules (dry-run): the decision of rule r
 * (a source or an endpoint rule) on an IP packet. */
static enum m_count model_decide(struct model *m, struct m_rule *r, const struct m_pkt *p)
{
	enum m_count c;

	m->kdrops = 0;
	if (r->action == XRL_ACT_ALLOW)
		return C_PASS;
	switch (m->mode) {
	case XRL_MODE_FAIL_OPEN:
		return C_PASS;				/* unmetered */
	case XRL_MODE_FAIL_CLOSED:
		return C_DROP;				/* overrides dry-run */
	}
	if (model_failing(m))
		c = r->on_failure == XRL_FAIL_CLOSED ? C_FAIL_DROP : C_FAIL_PASS;
	else if (r->action == XRL_ACT_DENY)
		c = C_DROP;
	else if (model_agg_closed(m, r))
		c = C_DROP;
	else
		c = model_meter(m, r, p) ? C_PASS : C_DROP;
	/* the mode's dry-run, or the rule's while enforcing: a would-drop */
	if (m->mode == XRL_MODE_DRY_RUN || r->dry_run) {
		if (c == C_DROP)
			c = C_WOULD_DROP;
		else if (c == C_FAIL_DROP)
			c = C_FAIL_WOULD_DROP;
	}
	/* docs/answers.md: every slip-th refusal of a key's own bucket,
	 * enforcing */
	if (c == C_DROP && r->slip && m->kdrops && m->mode == XRL_MODE_ENFORCE &&
	    !(m->kdrops % r->slip))
		c = C_SLIP;
	return c;
}

/* An endpoint rule's decision: the ideal cache's answer when it has one
 * (counted as the cache's), else the rule's own. */
static enum m_count model_decide_cached(struct model *m, struct m_rule *r, const struct m_pkt *p)
{
	if (model_hot_answers(m, r, p)) {
		r->st.hot_dropped++;
		return C_DROP;
	}
	return model_decide(m, r, p);
}

/* docs/answers.md, What is never answered: 1 when the frame is one DNS
 * query this host answers, parsed to the end of its question. */
static bool model_dns_query(const uint8_t *f, size_t len)
{
	size_t off = 14, l4, q, at = 0, namelen = 0;
	unsigned et, ulen, l3_left, dlen;

	if (len < 14 || f[6] & 1)
		return false;
	et = be16(f + 12);
	for (int i = 0; i < 2 && (et == 0x8100 || et == 0x88a8); i++) {
		if (off + 4 > len)
			return false;
		et = be16(f + off + 2);
		off += 4;
	}
	if (et == 0x0800) {
		if (off + 20 > len || f[off] != 0x45 || f[off + 9] != 17 ||
		    (be16(f + off + 6) & 0x3fff) || f[off + 12] == 0 || f[off + 12] == 127 ||
		    f[off + 12] >= 224 || be16(f + off + 2) < 20)
			return false;
		l3_left = be16(f + off + 2) - 20;
		l4 = off + 20;
	} else if (et == 0x86dd) {
		static const uint8_t zero[15];

		if (off + 40 > len || f[off] >> 4 != 6 || f[off + 6] != 17 || f[off + 8] == 0xff ||
		    (!memcmp(f + off + 8, zero, 15) && f[off + 23] <= 1))
			return false;
		l3_left = be16(f + off + 4);
		l4 = off + 40;
	} else {
		return false;
	}
	if (l4 + 8 > len || !be16(f + l4))
		return false;
	ulen = be16(f + l4 + 4);
	if (ulen != l3_left || ulen < 8 + 12)
		return false;
	dlen = ulen - 8;
	q = l4 + 8;
	if (q + 12 > len || (f[q + 2] & 0xf8) || be16(f + q + 4) != 1)
		return false;
	for (int i = 0; i <= (XRL_DNS_MAX_NAME - 1) / 2; i++) {
		size_t lp = q + 12 + at;

		if (lp + 1 > len || 12 + at >= dlen)
			return false;
		if (!f[lp]) {
			namelen = at + 1;
			break;
		}
		if (f[lp] > 63)
			return false;
		at += f[lp] + 1;
		if (at >= XRL_DNS_MAX_NAME)
			return false;
	}
	return namelen && 12 + namelen + 4 <= dlen && q + 12 + namelen + 4 <= len;
}

/* The answer step: 1 answered (XDP_TX), 0 dropped; counted. */
static bool model_answer(struct model *m, struct m_rule *r, const uint8_t *f, size_t len)
{
	__u64 until;

	if (!model_dns_query(f, len)) {
		r->st.slip_invalid++;
		return false;
	}
	if (!model_take(&m->slip_tat, &m->slip_used, &m->g.slip_tokens, xrl_ns_to_tu(m->now_ns),
			XRL_SLIP_CAP_INTERVAL, XRL_SLIP_CAP_LIMIT, XRL_SLIP_CAP_CHUNK, &until)) {
		r->st.slip_capped++;
		return false;
	}
	r->st.slipped_packets++;
	return true;
}

/* One rule's counters. An on-failure drop that dry-run passed is counted
 * as failure-dropped (the policy fired) and as a would-drop, not dropped. */
static void model_count(struct m_rule *r, const struct m_pkt *p, enum m_count c)
{
	if (c == C_FAIL_PASS)
		r->st.failure_passed++;
	if (c == C_FAIL_DROP || c == C_FAIL_WOULD_DROP)
		r->st.failure_dropped++;
	if (c == C_WOULD_DROP || c == C_FAIL_WOULD_DROP) {
		r->st.would_drop_packets++;
		r->st.would_drop_bytes += p->len;
	}
	if (dropped(c)) {
		r->st.dropped_packets++;
		r->st.dropped_bytes += p->len;
	} else {
		r->st.passed_packets++;
		r->st.passed_bytes += p->len;
	}
}

/* The verdict, in the global and interface counters (by mode). */
static void model_count_verdict(struct model *m, int verdict)
{
	if (verdict == XDP_PASS) {
		m->g.passed_packets[m->mode]++;
		m->ifs.passed_packets++;
	} else {
		m->g.dropped_packets[m->mode]++;
		m->ifs.dropped_packets++;
	}
}

/* docs/rules.md, Order: a packet its endpoint rule's bucket refuses now
 * costs its limiting source rule nothing. Enforcing, the watchdog quiet, a
 * source rule that limits, an endpoint rule the cache may answer for that
 * limits, its key's bucket there and refusing the packet's cost (a pure
 * check: the bucket as it is): that endpoint rule, else -1. */
static int model_ep_first(struct model *m, int rule, const struct m_pkt *p)
{
	__u64 cost, next;
	struct m_bucket *b;
	struct m_rule *er;
	bool fresh;
	int e, no;

	if (m->mode != XRL_MODE_ENFORCE || model_failing(m) || rule < 0 ||
	    m->rules[rule].action != XRL_ACT_LIMIT || (e = model_classify_endpoint(m, p)) < 0)
		return -1;
	er = &m->rules[e];
	if (er->action != XRL_ACT_LIMIT || !model_cacheable(m, er))
		return -1;
	b = bucket(m, er, p, &fresh);
	if (fresh) {
		bucket_forget(m, b);	/* a new key's first packet passes */
		return -1;
	}
	cost = model_cost(er, p);
	switch (er->algo) {
	case XRL_ALGO_FIXED_WINDOW:
		no = !xrl_fixed_window(b->tat, m->now_ns, er->interval, er->limit, cost, &next);
		break;
	case XRL_ALGO_SLIDING_WINDOW:
		no = xrl_sliding_window(b->tat, b->win1, m->now_ns, er->interval, er->limit, cost,
					&next) < 0;
		break;
	case XRL_ALGO_GCRA:
	default:
		no = !xrl_gcra(b->tat, xrl_ns_to_tu(m->now_ns), er->interval, er->limit, cost, &next);
		break;
	}
	return no ? e : -1;
}

void model_run(struct model *m, const uint8_t *f, size_t len, struct m_result *res)
{
	struct m_pkt *p = &res->pkt;
	bool drop = false;
	bool lenient = m->mode == XRL_MODE_DRY_RUN || m->mode == XRL_MODE_FAIL_OPEN;

	res->rule = res->ep_rule = -1;
	model_parse(f, len, p);
	if (p->kind == M_NON_IP) {
		m->g.non_ip_packets++;		/* passes in every mode */
	} else if (p->kind == M_MALFORMED) {
		m->g.malformed_packets++;
		drop = true;
	} else {
		enum m_count c;
		bool ep_done = false;
		int first;

		res->rule = model_classify(m, p);
		/* docs/rules.md, Order: the endpoint rule first when its bucket
		 * refuses the packet now; the source rule not met */
		if ((first = model_ep_first(m, res->rule, p)) >= 0) {
			struct m_rule *er = &m->rules[first];

			res->ep_rule = first;
			c = model_decide_cached(m, er, p);
			model_count(er, p, c);
			if (dropped(c)) {
				res->verdict = XDP_DROP;
				model_count_verdict(m, res->verdict);
				return;
			}
			ep_done = true;	/* admitted (a refill would): the source rule next */
		}
		/* enforcing, a source the cache knows refused: the verdict
		 * and counters of the whole path, with hot_dropped (ideal) */
		if (res->rule >= 0 && model_hot_answers(m, &m->rules[res->rule], p)) {
			m->rules[res->rule].st.hot_dropped++;
			model_count(&m->rules[res->rule], p, C_DROP);
			res->verdict = XDP_DROP;
			model_count_verdict(m, res->verdict);
			return;
		}
		if (res->rule < 0) {
			m->g.unmatched_packets++;
			drop = m->mode == XRL_MODE_FAIL_CLOSED;
		} else {
			c = model_decide(m, &m->rules[res->rule], p);
			model_count(&m->rules[res->rule], p, c);
			drop = dropped(c);
		}
		/* README, Endpoint rules (Order): the endpoint rule meets what
		 * the source rule passed; in fail-closed the source rules alone
		 * decide */
		if (!drop && !ep_done && m->mode != XRL_MODE_FAIL_CLOSED &&
		    (res->ep_rule = model_classify_endpoint(m, p)) >= 0) {
			struct m_rule *er = &m->rules[res->ep_rule];

			c = model_decide_cached(m, er, p);
			model_count(er, p, c);
			drop = dropped(c);
			if (c == C_SLIP && model_answer(m, er, f, len)) {
				/* an answer: neither passed nor dropped */
				res->verdict = XDP_TX;
				m->g.answered_packets++;
				m->ifs.answered_packets++;
				return;
			}
		}
	}
	/* dry-run and fail-open pass everything, malformed frames too */
	res->verdict = drop && !lenient ? XDP_DROP : XDP_PASS;
	model_count_verdict(m, res->verdict);
}
