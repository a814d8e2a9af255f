// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xdp-rlctl: suggest. Watches the traffic for a while and proposes, per
 * rule, the rate, burst, new-key budget and aggregate it saw a need for
 * (the maths: model/suggest.c; the method and its limits: docs/suggest.md).
 *
 * Where the packets per key come from: the bucket tables, walked once a
 * window. A key's packets in a window are what its rule refused (the
 * bucket's drop counter: drops, or would-drops in dry-run) plus what it
 * admitted, read from the GCRA state: each admitted packet moves the
 * bucket's TAT one emission interval on, so TAT's advance over the window,
 * in intervals, is the packets admitted, exactly while the key sends
 * faster than its rule's rate (its TAT stays ahead of the clock). A key
 * slower than its rule reads as up to the rule's rate: the method wants a
 * learning rule whose rate is below the traffic's, in dry-run (every
 * packet metered, none dropped). A key first seen in a window counts from
 * the window's start; a bucket made again (evicted, reset) counts afresh.
 */
#include "rlctl.h"
#include "xrl_meter.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* bounds: at most this many windows (longer samples get longer windows)
 * and keys measured, all rules together (a key past it is not measured,
 * nor in the aggregate: the output says how many) */
#define SG_MAX_WINDOWS	600
#define SG_MIN_WINDOW_MS 100
#define SG_MAX_KEYS	16384

struct sk {
	struct xrl_key k;	/* sorted by it */
	size_t rule;		/* index in the rules measured */
	__u64 tat, dropped;
	__u64 *c;		/* packets per window */
};

struct srule {
	const struct xrl_rule_entry *e;
	size_t keys;		/* measured */
	size_t unmeasured;	/* the most keys of a walk past SG_MAX_KEYS */
	size_t skipped;		/* this walk's */
	__u64 *nk;		/* new keys per window: buckets the rule made */
	__u64 nk_prev;		/* its new-keys counter at the last walk */
	__u64 prev_tu;		/* the rule's clock at the last walk */
};

struct sampler {
	struct srule *rules;
	size_t nrules;
	const struct xrl_rule_entry *all;	/* the rule set, by gen */
	size_t nall;
	struct sk *v, *add;
	size_t n, nadd, capadd;
	size_t nw, w;		/* windows; the window being counted */
	__u64 *now_tu;		/* per rule: its clock at this walk */
	bool baseline;		/* the first walk: no counts, no new keys */
	int err;
};

static __u64 mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static int cmp_sk(const void *a, const void *b)
{
	return memcmp(&((const struct sk *)a)->k, &((const struct sk *)b)->k, sizeof(struct xrl_key));
}

static size_t rule_index(const struct sampler *s, const struct xrl_rule_entry *e)
{
	for (size_t i = 0; i < s->nrules; i++) {
		if (s->rules[i].e == e)
			return i;
	}
	return SIZE_MAX;
}

static int walk_cb(const struct xrl_key *k, const struct xrl_bucket *b, void *ctx)
{
	struct sampler *s = ctx;
	const struct xrl_rule_entry *e = rule_of_gen(s->all, s->nall, k->gen);
	struct sk key = { .k = *k }, *old;
	struct srule *sr;
	size_t ri;

	if (!e || (ri = rule_index(s, e)) == SIZE_MAX)
		return 0;
	sr = &s->rules[ri];
	old = s->n ? bsearch(&key, s->v, s->n, sizeof(*s->v), cmp_sk) : NULL;
	if (old) {
		if (!s->baseline)
			old->c[s->w] += xrl_sg_offered(&e->r, b, true, old->tat, old->dropped, sr->prev_tu,
						       s->now_tu[ri] - sr->prev_tu);
		old->tat = b->tat;
		old->dropped = b->dropped;
		return 0;
	}
	if (s->n + s->nadd >= SG_MAX_KEYS) {
		sr->skipped++;
		return 0;
	}
	if (s->nadd == s->capadd) {
		size_t nc = s->capadd ? s->capadd * 2 : 256;
		void *nv = realloc(s->add, nc * sizeof(*s->add));

		if (!nv)
			return -ENOMEM;
		s->add = nv;
		s->capadd = nc;
	}
	key.rule = ri;
	key.tat = b->tat;
	key.dropped = b->dropped;
	key.c = calloc(s->nw, sizeof(*key.c));
	if (!key.c)
		return -ENOMEM;
	/* a key there before the sample began is measured from the next
	 * window on; one new in this window counts from its start */
	if (!s->baseline)
		key.c[s->w] = xrl_sg_offered(&e->r, b, false, 0, 0, sr->prev_tu, s->now_tu[ri] - sr->prev_tu);
	sr->keys++;
	s->add[s->nadd++] = key;
	return 0;
}

static int walk(struct xrl *x, struct sampler *s)
{
	int err;

	for (size_t i = 0; i < s->nrules; i++) {
		struct srule *sr = &s->rules[i];
		struct xrl_rule_stats rs;

		s->now_tu[i] = xrl_ns_to_tu(xrl_rule_now_ns(x, &sr->e->r));
		/* new keys: the buckets the rule made (evicted keys made
		 * again included: what its new-key budget meters) */
		if (xrl_rule_stats_get(x, sr->e->r.slot, &rs))
			return set_err("%s", xrl_errmsg());
		if (!s->baseline)
			sr->nk[s->w] = rs.new_keys >= sr->nk_prev ? rs.new_keys - sr->nk_prev : 0;
		sr->nk_prev = rs.new_keys;
		sr->skipped = 0;
	}
	s->nadd = 0;
	err = xrl_buckets_walk(x, walk_cb, s);
	if (err) {
		for (size_t i = 0; i < s->nadd; i++)
			free(s->add[i].c);
		s->nadd = 0;
		return err == -ENOMEM ? set_err("out of memory") : set_err("%s", xrl_errmsg());
	}
	if (s->nadd) {
		void *nv = realloc(s->v, (s->n + s->nadd) * sizeof(*s->v));

		if (!nv) {
			for (size_t i = 0; i < s->nadd; i++)
				free(s->add[i].c);
			s->nadd = 0;
			return set_err("out of memory");
		}
		s->v = nv;
		memcpy(s->v + s->n, s->add, s->nadd * sizeof(*s->add));
		s->n += s->nadd;
		xrl_sort(s->v, s->n, sizeof(*s->v), cmp_sk);
	}
	for (size_t i = 0; i < s->nrules; i++) {
		s->rules[i].prev_tu = s->now_tu[i];
		if (s->rules[i].skipped > s->rules[i].unmeasured)
			s->rules[i].unmeasured = s->rules[i].skipped;
	}
	return 0;
}

/* a rule suggest can measure: a token bucket of packets */
static const char *why_not(const struct xrl_rule *r)
{
	if (r->action != XRL_ACT_LIMIT)
		return "not a limit rule";
	if (r->algo != XRL_ALGO_GCRA)
		return "a window algorithm (suggest reads token buckets)";
	if (r->unit != XRL_UNIT_PACKETS)
		return "a byte rate (suggest measures packets)";
	if (r->scope != XRL_SCOPE_HOST)
		return "a fleet rule (its buckets are leases)";
	return NULL;
}

static double rule_rate(const struct xrl_rule *r)
{
	return r->rate_period_ns ? (double)r->rate_count * 1e9 / r->rate_period_ns : 0;
}

static void print_rule(const struct sampler *s, size_t ri, const struct xrl_sg_proposal *pr,
		       const struct xrl_cmd *c, __u64 window_ns)
{
	const struct srule *sr = &s->rules[ri];
	struct xrl_rule_entry e = *sr->e;
	char pfx[64], line[512], pct[16];
	bool slow = pr->keys && pr->pct_rate < 2 * rule_rate(&e.r);

	xrl_prefix_format(&e, pfx, sizeof(pfx));
	if (pr->rate) {
		e.r.rate_count = pr->rate;
		e.r.rate_period_ns = 1000000000ULL;
		e.r.burst = pr->burst;
		e.r.agg_rate_count = pr->agg_rate;
		e.r.agg_rate_period_ns = 1000000000ULL;
		e.r.agg_burst = pr->agg_burst;
		e.r.nk_rate_count = pr->new_keys;
		e.r.nk_rate_period_ns = pr->new_keys ? 1000000000ULL : 0;
		e.r.dry_run = 0;	/* the proposal is what to enforce */
		xrl_rule_config_format(&e, line, sizeof(line));
	} else {
		line[0] = '\0';
	}
	snprintf(pct, sizeof(pct), "%u%s", c->suggest.percentile,
		 c->suggest.percentile % 10 == 1 && c->suggest.percentile != 11 ? "st" :
		 c->suggest.percentile % 10 == 2 && c->suggest.percentile != 12 ? "nd" :
		 c->suggest.percentile % 10 == 3 && c->suggest.percentile != 13 ? "rd" : "th");
	if (opt.json) {
		jw_obj_start(&jw);
		jw_ku64(&jw, "rule", sr->e->r.id);
		jw_kstr(&jw, "prefix", pfx);
		jw_ku64(&jw, "seconds", c->suggest.seconds);
		jw_ku64(&jw, "window_ms", window_ns / 1000000);
		jw_ku64(&jw, "percentile", c->suggest.percentile);
		jw_ku64(&jw, "headroom_pct", c->suggest.headroom);
		jw_ku64(&jw, "keys", pr->keys);
		jw_ku64(&jw, "keys_not_measured", sr->unmeasured);
		if (pr->rate) {
			jw_ku64(&jw, "rate", pr->rate);
			jw_ku64(&jw, "burst", pr->burst);
			jw_ku64(&jw, "new_keys", pr->new_keys);
			jw_ku64(&jw, "aggregate", pr->agg_rate);
			jw_ku64(&jw, "aggregate_burst", pr->agg_burst);
			jw_kstr(&jw, "line", line);
		}
		jw_key(&jw, "figures");
		jw_obj_start(&jw);
		jw_ku64(&jw, "percentile_rank", pr->rank);
		jw_ku64(&jw, "percentile_rate", (__u64)pr->pct_rate);
		jw_ku64(&jw, "median_rate", (__u64)pr->median_rate);
		jw_ku64(&jw, "max_rate", (__u64)pr->max_rate);
		jw_ku64(&jw, "admitted_keys", pr->admitted_keys);
		jw_ku64(&jw, "max_burst", pr->max_burst);
		jw_ku64(&jw, "new_keys_seen", pr->new_keys_seen);
		jw_ku64(&jw, "new_keys_peak", (__u64)pr->new_keys_peak);
		jw_ku64(&jw, "aggregate_peak", (__u64)pr->agg_peak);
		jw_ku64(&jw, "aggregate_max_burst", pr->agg_max_burst);
		jw_ku64(&jw, "peak_window_ms", (__u64)(pr->peak_s * 1000 + 0.5));
		jw_ku64(&jw, "rule_rate", (__u64)rule_rate(&sr->e->r));
		jw_obj_end(&jw);
		jw_kbool(&jw, "measured_below_rule_rate", slow);
		jw_obj_end(&jw);
		return;
	}
	printf("# rule %u (%s): %zu keys over %u s, windows of %llu ms, peak window %.1f s\n",
	       sr->e->r.id, pfx, pr->keys, c->suggest.seconds, (unsigned long long)(window_ns / 1000000),
	       pr->peak_s);
	if (!pr->rate) {
		printf("#   no traffic seen: nothing to propose\n");
		return;
	}
	printf("#   rate       %llu/s: the %s percentile of the keys' peak rates, %.0f/s (key %zu of %zu), + %u %%; median %.0f/s, highest %.0f/s\n",
	       (unsigned long long)pr->rate, pct, pr->pct_rate, pr->rank, pr->keys, c->suggest.headroom,
	       pr->median_rate, pr->max_rate);
	printf("#   burst      %llu: the largest burst at that rate of the %zu keys at or below the percentile, %llu, + %u %%\n",
	       (unsigned long long)pr->burst, pr->admitted_keys, (unsigned long long)pr->max_burst,
	       c->suggest.headroom);
	printf("#   new-keys   %llu/s: the most keys first seen in a second, %.0f (%llu new in all), or the %zu keys measured (all new to the applied rule) if more, + %u %%\n",
	       (unsigned long long)pr->new_keys, pr->new_keys_peak, (unsigned long long)pr->new_keys_seen,
	       pr->keys, c->suggest.headroom);
	printf("#   aggregate  %llu/s burst %llu: the most this rate and burst admit of all keys, %.0f/s in a peak window (burst %llu), + %u %%\n",
	       (unsigned long long)pr->agg_rate, (unsigned long long)pr->agg_burst, pr->agg_peak,
	       (unsigned long long)pr->agg_max_burst, c->suggest.headroom);
	if (sr->unmeasured)
		printf("#   up to %zu more keys were not measured (at most %d keys are, all rules together)\n",
		       sr->unmeasured, SG_MAX_KEYS);
	if (slow)
		printf("#   note: keys slower than the rule's own rate (%.0f/s) read as up to that rate: learn under a lower one (docs/suggest.md)\n",
		       rule_rate(&sr->e->r));
	printf("%s\n", line);
}

int do_suggest(struct xrl_cmd *c)
{
	struct xrl_rule_entry *rules = NULL;
	struct sampler s = { 0 };
	struct xrl_sg_series *ser = NULL;
	__u64 window_ns, t0, *edges = NULL;
	struct xrl *x = NULL;
	int rc = 1;

	if (c->suggest.from[0])
		return do_suggest_from(c);
	window_ns = (__u64)c->suggest.seconds * 1000000000ULL / SG_MAX_WINDOWS;
	if (window_ns < SG_MIN_WINDOW_MS * 1000000ULL)
		window_ns = SG_MIN_WINDOW_MS * 1000000ULL;
	window_ns = (window_ns + 999999) / 1000000 * 1000000;	/* whole ms */
	s.nw = ((__u64)c->suggest.seconds * 1000000000ULL + window_ns - 1) / window_ns;
	if (open_reader(&x))
		return 1;
	if (xrl_rules_get(x, &rules, &s.nall)) {
		p_err("%s", xrl_errmsg());
		goto out;
	}
	rules_by_gen(rules, s.nall);
	s.all = rules;
	s.rules = calloc(s.nall + 1, sizeof(*s.rules));
	s.now_tu = calloc(s.nall + 1, sizeof(*s.now_tu));
	/* the walks' real times: a busy machine makes some windows longer */
	edges = calloc(s.nw + 1, sizeof(*edges));
	if (!s.rules || !s.now_tu || !edges) {
		p_err("out of memory");
		goto out;
	}
	for (size_t i = 0; i < s.nall; i++) {
		const char *why = why_not(&rules[i].r);

		if (c->suggest.rule && rules[i].r.id != c->suggest.rule)
			continue;
		if (why && c->suggest.rule) {
			p_err("rule %u is %s: suggest proposes token-bucket rules of packets", rules[i].r.id, why);
			goto out;
		}
		if (why)
			continue;
		s.rules[s.nrules].e = &rules[i];
		s.rules[s.nrules].nk = calloc(s.nw, sizeof(__u64));
		if (!s.rules[s.nrules++].nk) {
			p_err("out of memory");
			goto out;
		}
	}
	if (!s.nrules) {
		if (c->suggest.rule)
			p_err("no rule %u", c->suggest.rule);
		else
			p_err("no token-bucket rule of packets to measure: add one first (docs/suggest.md)");
		goto out;
	}
	s.baseline = true;
	t0 = mono_ns();
	if (walk(x, &s)) {
		p_err("%s", emsg);
		goto out;
	}
	/* said once the first walk is done: a key that comes after this
	 * line is a new key of the sample */
	if (opt.json)
		p_note("watching %zu rule%s for %u s", s.nrules, s.nrules == 1 ? "" : "s", c->suggest.seconds);
	else
		fprintf(stderr, "watching %zu rule%s for %u s ...\n", s.nrules, s.nrules == 1 ? "" : "s",
			c->suggest.seconds);
	s.baseline = false;
	for (s.w = 0; s.w < s.nw; s.w++) {
		__u64 at = t0 + (s.w + 1) * window_ns, now = mono_ns();

		if (at > now) {
			struct timespec ts = { (at - now) / 1000000000ULL, (at - now) % 1000000000ULL };

			while (nanosleep(&ts, &ts) && errno == EINTR)
				;
		}
		edges[s.w + 1] = mono_ns() - t0;
		if (walk(x, &s)) {
			p_err("%s", emsg);
			goto out;
		}
	}

	ser = calloc(s.n + 1, sizeof(*ser));
	if (!ser) {
		p_err("out of memory");
		goto out;
	}
	if (opt.json)
		jw_arr_start(&jw);
	for (size_t ri = 0; ri < s.nrules; ri++) {
		struct xrl_sg_params p = { .window_ns = window_ns, .edges = edges,
					   .percentile = c->suggest.percentile,
					   .headroom_pct = c->suggest.headroom };
		struct xrl_sg_proposal pr;
		size_t nk = 0;

		for (size_t i = 0; i < s.n; i++) {
			if (s.v[i].rule == ri)
				ser[nk++] = (struct xrl_sg_series){ s.v[i].c, s.nw };
		}
		if (xrl_sg_propose(ser, nk, s.rules[ri].nk, s.nw, &p, &pr)) {
			p_err("out of memory");
			goto out;
		}
		print_rule(&s, ri, &pr, c, window_ns);
	}
	if (opt.json) {
		jw_arr_end(&jw);
		jw_finish(&jw);
	}
	rc = 0;
out:
	for (size_t i = 0; i < s.n; i++)
		free(s.v[i].c);
	for (size_t i = 0; s.rules && i < s.nrules; i++)
		free(s.rules[i].nk);
	free(s.v);
	free(s.add);
	free(s.rules);
	free(s.now_tu);
	free(ser);
	free(edges);
	free(rules);
	if (x)
		xrl_close(x);
	return rc;
}
