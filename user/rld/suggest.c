// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xdp-rld --suggest: the sampler thread. It keeps, per rule, what
 * xdp-rlctl suggest needs to propose a rule over hours of traffic, with
 * nobody watching, and the metrics export it (xdp_rl_suggest_*; read back
 * by `xdp-rlctl suggest from HOST:PORT`).
 *
 * Once a second it walks the bucket tables and counts each key's packets
 * with the estimator of xdp-rlctl suggest (user/rlctl/suggest.c: the
 * bucket's drop counter's advance plus its TAT's advance in emission
 * intervals). Per key it keeps only its last TAT and drop count and its
 * packets in the current span of five walks; at a span's end each key's
 * span goes into its rule's histograms (model/suggest.c: its rate over the
 * span and its burst at that rate) and the key's counts are dropped. So the
 * memory is bounded: at most SG_MAX_KEYS keys of one span (the others are
 * counted in xdp_rl_suggest_keys_not_sampled_total), and per rule two
 * histograms of fixed size.
 *
 * Threads and locks: the thread takes the daemon's lock only to read the
 * rule set and the rules' counters (a reload waits for that, never for a
 * walk); it walks the tables outside it, under the metrics' keys_lock
 * (one walk of the tables at a time, as keys_refresh does), and it never
 * waits for the event loop's turn. The heartbeat is its own thread and
 * waits on nothing the sampler holds. Its thread lock guards the rules'
 * records, which the metrics read (the daemon's lock, then this one).
 *
 * Reloads: a rule's record is kept by its generation, which changes only
 * when the rule does: an unchanged rule keeps its record across reloads; a
 * changed rule starts a new record (its meter's figures mean something
 * else); a removed rule's record goes with it.
 */
#include "rld.h"
#include "prom.h"
#include "xrl_meter.h"
#include "text/rulefmt.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define SG_PERIOD_MS	1000
#define SG_SPAN		5	/* walks of a span: a rate held for 5 s, as suggest's peak window */

struct sg_key {
	struct xrl_key k;	/* sorted by it */
	__u64 tat, dropped;
	__u32 c[SG_SPAN];	/* packets per walk of the span */
	bool seen;		/* in this span's walks */
};
/* the bound the docs state: 65536 keys of 64 bytes */
_Static_assert(sizeof(struct sg_key) <= 64, "a recorded key is at most 64 bytes");

struct sg_rule {
	__u32 id, gen;
	struct xrl_rule r;
	char line[512];		/* the rule as its config line */
	struct xrl_sg_hist rate, burst;
	__u64 agg[SG_SPAN];	/* all keys' packets per walk of the span */
	double agg_peak, agg_burst_peak, nk_peak;
	__u64 nk_prev, prev_tu, now_tu;
	__u64 spans, not_sampled;
	double since_ms;	/* the record's first walk */
	bool baseline;		/* its first walk: no counts yet */
};

struct sg_state {
	struct sg_rule *rules;	/* by gen; guarded by the thread's lock */
	size_t nrules;
	struct sg_key *v, *add;
	size_t n, nadd, capadd;
	unsigned w;		/* the walk of the span */
	__u64 edges[SG_SPAN + 1];
};

static int cmp_key(const void *a, const void *b)
{
	return memcmp(&((const struct sg_key *)a)->k, &((const struct sg_key *)b)->k, sizeof(struct xrl_key));
}

static int cmp_rule(const void *a, const void *b)
{
	const struct sg_rule *x = a, *y = b;

	return x->gen < y->gen ? -1 : x->gen > y->gen;
}

static struct sg_rule *rule_of(struct sg_state *s, __u32 gen)
{
	struct sg_rule k = { .gen = gen };

	return s->nrules ? bsearch(&k, s->rules, s->nrules, sizeof(k), cmp_rule) : NULL;
}

/* what the daemon records: suggest's kind of rule (rlctl/suggest.c) */
static bool measurable(const struct xrl_rule *r)
{
	return r->action == XRL_ACT_LIMIT && r->algo == XRL_ALGO_GCRA && r->unit == XRL_UNIT_PACKETS &&
	       r->scope == XRL_SCOPE_HOST;
}

/* The rule set, read under the daemon's lock: records kept by generation,
 * new ones begun, the rules' clocks and new-key counters read. */
static int rules_sync(struct rld *r, struct sg_state *s)
{
	struct rld_thread *t = &r->suggest.thread;
	struct xrl_rule_entry *v = NULL;
	struct sg_rule *nr = NULL;
	size_t n = 0, m = 0;
	double now = now_ms();
	int err;

	pthread_mutex_lock(&r->lock);
	err = xrl_rules_get(r->x, &v, &n);
	if (!err && !(nr = calloc(n + 1, sizeof(*nr))))
		err = -ENOMEM;
	for (size_t i = 0; !err && i < n; i++) {
		struct xrl_rule_stats rs;
		struct sg_rule *o;

		if (!measurable(&v[i].r) || xrl_rule_stats_get(r->x, v[i].r.slot, &rs))
			continue;
		pthread_mutex_lock(&t->lock);
		o = rule_of(s, v[i].r.gen);
		if (o) {
			nr[m] = *o;
		} else {
			nr[m] = (struct sg_rule){ .id = v[i].r.id, .gen = v[i].r.gen, .r = v[i].r,
						  .since_ms = now, .baseline = true };
			xrl_rule_config_format(&v[i], nr[m].line, sizeof(nr[m].line));
		}
		pthread_mutex_unlock(&t->lock);
		nr[m].now_tu = xrl_ns_to_tu(xrl_rule_now_ns(r->x, &v[i].r));
		if (!nr[m].baseline) {
			double dt = xrl_tu_to_ns(nr[m].now_tu - nr[m].prev_tu) / 1e9;
			double nk = rs.new_keys >= nr[m].nk_prev ? (double)(rs.new_keys - nr[m].nk_prev) : 0;

			/* per second over a walk's real time; a walk late by
			 * less than a period counts as a second */
			nk /= dt > 1 ? dt : 1;
			if (nk > nr[m].nk_peak)
				nr[m].nk_peak = nk;
		}
		nr[m].nk_prev = rs.new_keys;
		m++;
	}
	pthread_mutex_unlock(&r->lock);
	free(v);
	if (err) {
		free(nr);
		return err;
	}
	xrl_sort(nr, m, sizeof(*nr), cmp_rule);
	pthread_mutex_lock(&t->lock);
	free(s->rules);
	s->rules = nr;
	s->nrules = m;
	pthread_mutex_unlock(&t->lock);
	return 0;
}

static int walk_cb(const struct xrl_key *k, const struct xrl_bucket *b, void *ctx)
{
	struct sg_state *s = ctx;
	struct sg_rule *sr = rule_of(s, k->gen);
	struct sg_key key = { .k = *k }, *old;
	__u64 dt;

	if (!sr)
		return 0;
	dt = sr->now_tu - sr->prev_tu;
	old = s->n ? bsearch(&key, s->v, s->n, sizeof(*s->v), cmp_key) : NULL;
	if (old) {
		__u64 p = xrl_sg_offered(&sr->r, b, true, old->tat, old->dropped, sr->prev_tu, dt);

		if (!sr->baseline) {
			old->c[s->w] += p;
			sr->agg[s->w] += p;
		}
		old->tat = b->tat;
		old->dropped = b->dropped;
		old->seen = true;
		return 0;
	}
	if (s->n + s->nadd >= XRL_RLD_SG_MAX_KEYS) {
		sr->not_sampled++;
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
	key.tat = b->tat;
	key.dropped = b->dropped;
	key.seen = true;
	/* a key there before its rule's record began is measured from the
	 * next walk on; one new since the last walk counts from it */
	if (!sr->baseline) {
		key.c[s->w] = xrl_sg_offered(&sr->r, b, false, 0, 0, sr->prev_tu, dt);
		sr->agg[s->w] += key.c[s->w];
	}
	s->add[s->nadd++] = key;
	return 0;
}

/* A span's end: each key's span into its rule's histograms, the rules'
 * aggregate peaks; keys not seen in the span are forgotten. */
static void span_end(struct rld *r, struct sg_state *s)
{
	struct xrl_sg_time tb = { .window_ns = SG_PERIOD_MS * 1000000ULL, .edges = s->edges };
	__u64 c[SG_SPAN];
	size_t j = 0;

	pthread_mutex_lock(&r->suggest.thread.lock);
	for (size_t i = 0; i < s->n; i++) {
		struct sg_rule *sr = rule_of(s, s->v[i].k.gen);

		if (sr) {
			for (int w = 0; w < SG_SPAN; w++)
				c[w] = s->v[i].c[w];
			xrl_sg_observe_span(&sr->rate, &sr->burst, c, SG_SPAN, &tb);
		}
		if (!sr || !s->v[i].seen)
			continue;
		memset(s->v[i].c, 0, sizeof(s->v[i].c));
		s->v[i].seen = false;
		s->v[j++] = s->v[i];
	}
	s->n = j;	/* still sorted */
	for (size_t i = 0; i < s->nrules; i++) {
		struct sg_rule *sr = &s->rules[i];
		double span_s = (s->edges[SG_SPAN] - s->edges[0]) / 1e9, a;
		__u64 sum = 0;

		for (int w = 0; w < SG_SPAN; w++)
			sum += sr->agg[w];
		if (span_s > 0 && sum) {
			a = sum / span_s;
			if (a > sr->agg_peak)
				sr->agg_peak = a;
			a = (double)xrl_sg_burst(sr->agg, SG_SPAN, a, &tb);
			if (a > sr->agg_burst_peak)
				sr->agg_burst_peak = a;
		}
		if (!sr->baseline)
			sr->spans++;
		memset(sr->agg, 0, sizeof(sr->agg));
	}
	pthread_mutex_unlock(&r->suggest.thread.lock);
}

static int walk(struct rld *r, struct sg_state *s)
{
	struct timespec ts;
	int err;

	err = rules_sync(r, s);
	if (err)
		return err;
	s->nadd = 0;
	pthread_mutex_lock(&r->metrics.keys_lock);
	err = xrl_buckets_walk(r->x, walk_cb, s);
	pthread_mutex_unlock(&r->metrics.keys_lock);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	s->edges[s->w + 1] = ts.tv_sec * 1000000000ULL + ts.tv_nsec;
	if (!err && s->nadd) {
		void *nv = realloc(s->v, (s->n + s->nadd) * sizeof(*s->v));

		if (!nv) {
			err = -ENOMEM;
		} else {
			s->v = nv;
			memcpy(s->v + s->n, s->add, s->nadd * sizeof(*s->add));
			s->n += s->nadd;
			xrl_sort(s->v, s->n, sizeof(*s->v), cmp_key);
		}
	}
	pthread_mutex_lock(&r->suggest.thread.lock);
	for (size_t i = 0; i < s->nrules; i++) {
		s->rules[i].prev_tu = s->rules[i].now_tu;
		s->rules[i].baseline = false;
	}
	pthread_mutex_unlock(&r->suggest.thread.lock);
	if (++s->w == SG_SPAN) {
		span_end(r, s);
		s->w = 0;
		s->edges[0] = s->edges[SG_SPAN];
	}
	return err;
}

static void *suggest_main(void *arg)
{
	struct rld *r = arg;
	struct rld_thread *t = &r->suggest.thread;
	struct sg_state *s = r->suggest.st;
	struct timespec next;
	bool failed = false;

	clock_gettime(CLOCK_MONOTONIC, &next);
	s->edges[0] = next.tv_sec * 1000000000ULL + next.tv_nsec;
	pthread_mutex_lock(&t->lock);
	while (!t->stop) {
		int err;

		pthread_mutex_unlock(&t->lock);
		err = walk(r, s);
		if (err && !failed)
			xrl_log(XRL_LOG_WARN, "suggest: a walk of the bucket tables failed (%s): its span is partial",
				strerror(-err));
		failed = err;
		pthread_mutex_lock(&t->lock);
		/* one period after the last walk's start: a slow walk delays
		 * the next, and the windows' real edges say so */
		next.tv_nsec += SG_PERIOD_MS * 1000000L;
		while (next.tv_nsec >= 1000000000L) {
			next.tv_sec++;
			next.tv_nsec -= 1000000000L;
		}
		{
			struct timespec now;

			clock_gettime(CLOCK_MONOTONIC, &now);
			if (now.tv_sec > next.tv_sec || (now.tv_sec == next.tv_sec && now.tv_nsec > next.tv_nsec))
				next = now;
		}
		rld_thread_wait(t, &next);
	}
	pthread_mutex_unlock(&t->lock);
	return NULL;
}

int suggest_start(struct rld *r)
{
	if (!r->opt.suggest)
		return 0;
	r->suggest.st = calloc(1, sizeof(*r->suggest.st));
	if (!r->suggest.st)
		return -ENOMEM;
	xrl_log(XRL_LOG_INFO, "suggest: recording each token-bucket rule's key rates (at most %d keys a span)",
		XRL_RLD_SG_MAX_KEYS);
	return rld_thread_start(&r->suggest.thread, "suggest", suggest_main, r);
}

void suggest_stop(struct rld *r)
{
	struct sg_state *s = r->suggest.st;

	rld_thread_stop(&r->suggest.thread, 0);
	if (!s)
		return;
	free(s->rules);
	free(s->v);
	free(s->add);
	free(s);
	r->suggest.st = NULL;
}

static void hist_write(struct prom *p, const char *id, const struct xrl_sg_hist *h)
{
	__u64 cum = 0;
	char le[32];

	for (size_t i = 0; i <= XRL_SG_HIST_BOUNDS; i++) {
		cum += h->n[i];
		if (i < XRL_SG_HIST_BOUNDS)
			snprintf(le, sizeof(le), "%g", xrl_sg_hist_le(i));
		else
			snprintf(le, sizeof(le), "+Inf");
		prom_sample_of(p, "_bucket", PROM_LABELS("rule", id, "le", le), "%llu", (unsigned long long)cum);
	}
	prom_sample_of(p, "_sum", PROM_LABELS("rule", id), "%.3f", h->sum);
	prom_sample_of(p, "_count", PROM_LABELS("rule", id), "%llu", (unsigned long long)h->count);
}

/* The xdp_rl_suggest_* families (nothing without --suggest). Called with
 * the daemon's lock held. */
void suggest_metrics(struct rld *r, struct prom *p)
{
	struct sg_state *s = r->suggest.st;
	char id[16];

	if (!s)
		return;
	pthread_mutex_lock(&r->suggest.thread.lock);
	prom_family(p, "xdp_rl_suggest_rule_info", "gauge",
		    "A rule the daemon records for xdp-rlctl suggest, as its config line; always 1.");
	for (size_t i = 0; i < s->nrules; i++) {
		snprintf(id, sizeof(id), "%u", s->rules[i].id);
		prom_sample(p, PROM_LABELS("rule", id, "line", s->rules[i].line), "1");
	}
	prom_family(p, "xdp_rl_suggest_seconds", "gauge", "How long the rule's record has been kept.");
	for (size_t i = 0; i < s->nrules; i++) {
		snprintf(id, sizeof(id), "%u", s->rules[i].id);
		prom_sample(p, PROM_LABELS("rule", id), "%.3f", (now_ms() - s->rules[i].since_ms) / 1e3);
	}
	prom_family(p, "xdp_rl_suggest_spans_total", "counter", "5-s spans recorded into the rule's histograms.");
	for (size_t i = 0; i < s->nrules; i++) {
		snprintf(id, sizeof(id), "%u", s->rules[i].id);
		prom_sample(p, PROM_LABELS("rule", id), "%llu", (unsigned long long)s->rules[i].spans);
	}
	prom_family(p, "xdp_rl_suggest_key_rate", "histogram",
		    "Keys' packet rates, per second, over 5-s spans: one observation per key and span.");
	for (size_t i = 0; i < s->nrules; i++) {
		snprintf(id, sizeof(id), "%u", s->rules[i].id);
		hist_write(p, id, &s->rules[i].rate);
	}
	prom_family(p, "xdp_rl_suggest_key_burst", "histogram",
		    "Keys' bursts over 5-s spans: the bucket a key needs at its own rate of the span, packets.");
	for (size_t i = 0; i < s->nrules; i++) {
		snprintf(id, sizeof(id), "%u", s->rules[i].id);
		hist_write(p, id, &s->rules[i].burst);
	}
	prom_family(p, "xdp_rl_suggest_new_keys_peak", "gauge", "The most new keys in a second (a walk) seen so far.");
	for (size_t i = 0; i < s->nrules; i++) {
		snprintf(id, sizeof(id), "%u", s->rules[i].id);
		prom_sample(p, PROM_LABELS("rule", id), "%.3f", s->rules[i].nk_peak);
	}
	prom_family(p, "xdp_rl_suggest_aggregate_peak", "gauge",
		    "The most packets per second of all the rule's keys together over a 5-s span seen so far.");
	for (size_t i = 0; i < s->nrules; i++) {
		snprintf(id, sizeof(id), "%u", s->rules[i].id);
		prom_sample(p, PROM_LABELS("rule", id), "%.3f", s->rules[i].agg_peak);
	}
	prom_family(p, "xdp_rl_suggest_aggregate_burst_peak", "gauge",
		    "The largest burst of all the rule's keys together at their span's rate seen so far, packets.");
	for (size_t i = 0; i < s->nrules; i++) {
		snprintf(id, sizeof(id), "%u", s->rules[i].id);
		prom_sample(p, PROM_LABELS("rule", id), "%.0f", s->rules[i].agg_burst_peak);
	}
	prom_family(p, "xdp_rl_suggest_keys_not_sampled_total", "counter",
		    "Keys a walk left out: the record holds at most 65536 keys a span, all rules together.");
	for (size_t i = 0; i < s->nrules; i++) {
		snprintf(id, sizeof(id), "%u", s->rules[i].id);
		prom_sample(p, PROM_LABELS("rule", id), "%llu", (unsigned long long)s->rules[i].not_sampled);
	}
	pthread_mutex_unlock(&r->suggest.thread.lock);
}
