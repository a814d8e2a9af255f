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
	return m->b ? 0 : -1;
}

void model_free(struct model *m)
{
	free(m->b);
	m->b = NULL;
}

/* ---- parse: README, "Packets it does not meter" ---- */

static bool is_ext6(unsigned nh)
{
	/* hop-by-hop, routing, fragment, AH, destination options, mobility */
	return nh == 0 || nh == 43 || nh == 44 || nh == 51 || nh == 60 || nh == 135;
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
		return;
	}
	if (proto == ETH_IP6) {
		const uint8_t *ip = f + off;
		size_t at = off + 40;
		unsigned nh, i;

		if (at > len || ip[0] >> 4 != 6 || at + be16(ip + 4) > len)
			return;
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
			/* after a non-first fragment come data, not headers */
			if (nh == 44 && (be16(f + at + 2) & 0xfff8)) {
				at += hl;
				break;
			}
			nh = f[at];
			at += hl;
		}
		p->family = 6;
		memcpy(p->src, ip + 8, 16);
		p->kind = M_IP;
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

		if (r->family != p->family || !prefix_has(r->addr, r->prefix_len, p->src))
			continue;
		if (best < 0 || r->prefix_len > m->rules[best].prefix_len)
			best = i;
	}
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

void model_set_rules(struct model *m, const struct m_rule *v, int n)
{
	struct m_rule old[M_MAX_RULES];
	int n_old = m->n_rules;

	memcpy(old, m->rules, sizeof(old));
	for (int i = 0; i < n; i++) {
		struct m_rule *r = &m->rules[i];

		*r = v[i];
		memset(&r->st, 0, sizeof(r->st));
		for (int j = 0; j < n_old; j++)
			if (old[j].gen == r->gen)
				r->st = old[j].st;	/* unchanged: its counters go on */
		r->interval = xrl_rate_interval(r->rate_count, r->rate_period_ns);
		r->limit = xrl_burst_limit(r->interval, r->burst);
	}
	m->n_rules = n;
}

/* What one packet costs in the rule's unit: packets, today. */
static uint64_t model_cost(const struct m_rule *r, const struct m_pkt *p)
{
	return 1;
}

/* The rule's algorithm on the key's bucket: 1 admit, 0 over the limit.
 * A new key starts with a full bucket (TAT = now). */
static int model_meter(struct model *m, struct m_rule *r, const struct m_pkt *p)
{
	__u64 now = xrl_ns_to_tu(m->now_ns), tat;
	bool fresh;
	struct m_bucket *b = bucket(m, r, p, &fresh);

	if (fresh) {
		b->tat = now;
		r->st.new_keys++;
	}
	switch (r->algo) {
	case XRL_ALGO_GCRA:
	default:
		if (!xrl_gcra(b->tat, now, r->interval, r->limit, model_cost(r, p), &tat))
			return 0;
		b->tat = tat;
		return 1;
	}
}

/* The watchdog fired: a heartbeat older than the watchdog time (0: none).
 * A heartbeat stamped after the clock the packet read is fresh, not old. */
static bool model_failing(const struct model *m)
{
	return m->watchdog_ns && m->now_ns > m->heartbeat_ns &&
	       m->now_ns - m->heartbeat_ns > m->watchdog_ns;
}

enum m_count { C_PASS, C_DROP, C_FAIL_PASS, C_FAIL_DROP };

/* README, Modes and Failure policy: the verdict of an IP packet under rule r. */
static enum m_count model_decide(struct model *m, struct m_rule *r, const struct m_pkt *p)
{
	switch (m->mode) {
	case XRL_MODE_FAIL_OPEN:
		return C_PASS;				/* unmetered */
	case XRL_MODE_FAIL_CLOSED:
		return r->action == XRL_ACT_ALLOW ? C_PASS : C_DROP;
	}
	if (r->action == XRL_ACT_ALLOW)
		return C_PASS;
	if (model_failing(m))
		return r->on_failure == XRL_FAIL_CLOSED ? C_FAIL_DROP : C_FAIL_PASS;
	if (r->action == XRL_ACT_DENY)
		return C_DROP;
	return model_meter(m, r, p) ? C_PASS : C_DROP;
}

static void model_count(struct model *m, struct m_rule *r, const struct m_pkt *p,
			enum m_count c, int verdict)
{
	if (r) {
		switch (c) {
		case C_PASS:
			r->st.passed_packets++;
			r->st.passed_bytes += p->len;
			break;
		case C_DROP:
			r->st.dropped_packets++;
			r->st.dropped_bytes += p->len;
			break;
		case C_FAIL_PASS:	/* a subset of passed */
			r->st.failure_passed++;
			r->st.passed_packets++;
			r->st.passed_bytes += p->len;
			break;
		case C_FAIL_DROP:	/* a subset of dropped */
			r->st.failure_dropped++;
			r->st.dropped_packets++;
			r->st.dropped_bytes += p->len;
			break;
		}
	}
	if (verdict == XDP_PASS) {
		m->g.passed_packets[m->mode]++;
		m->ifs.passed_packets++;
	} else {
		m->g.dropped_packets[m->mode]++;
		m->ifs.dropped_packets++;
	}
}

void model_run(struct model *m, const uint8_t *f, size_t len, struct m_result *res)
{
	struct m_pkt *p = &res->pkt;
	struct m_rule *r = NULL;
	enum m_count c = C_PASS;
	bool lenient = m->mode == XRL_MODE_DRY_RUN || m->mode == XRL_MODE_FAIL_OPEN;

	res->rule = -1;
	model_parse(f, len, p);
	if (p->kind == M_NON_IP) {
		m->g.non_ip_packets++;		/* passes in every mode */
	} else if (p->kind == M_MALFORMED) {
		m->g.malformed_packets++;
		c = lenient ? C_PASS : C_DROP;
	} else if ((res->rule = model_classify(m, p)) < 0) {
		m->g.unmatched_packets++;
		c = m->mode == XRL_MODE_FAIL_CLOSED ? C_DROP : C_PASS;
	} else {
		r = &m->rules[res->rule];
		c = model_decide(m, r, p);
	}
	/* dry-run counts what would be dropped and passes it */
	res->verdict = (c == C_DROP || c == C_FAIL_DROP) && m->mode != XRL_MODE_DRY_RUN ?
		       XDP_DROP : XDP_PASS;
	model_count(m, r, p, c, res->verdict);
}
