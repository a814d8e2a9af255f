// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xdp-rld: the read-only API beside /metrics, and the status page.
 *   /api/v1/status  the object of `xdp-rlctl -j status` (no run-time sample:
 *                   the server's thread never sleeps)
 *   /api/v1/rules   the object of `xdp-rlctl -j stats`
 *   /api/v1/top     the array of `xdp-rlctl -j top`: the 10 keys dropping
 *                   most, their rates over the time since the walk before
 *   /               one HTML page (page.c) that draws those, refreshing itself
 * The same writers as the CLI's (features/report.h). Served on the metrics
 * server's thread, with its connection limits; nothing here changes state.
 */
#include "rld.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define TOP_COUNT	10
/* A walk of the bucket tables (up to 2 x 1M entries) at most this often:
 * a client asking faster gets the answer of the last one. */
#define TOP_MIN_MS	1000

extern const char xrl_status_page[];

static int api_status(struct rld *r, FILE *f)
{
	struct xrl_status st;
	struct jw w;
	int err;

	pthread_mutex_lock(&r->lock);
	err = xrl_status_read(r->x, 0, &st);
	if (!err) {
		jw_init(&w, f, false);
		xrl_status_json(&w, r->x, &st);
		jw_finish(&w);
	}
	pthread_mutex_unlock(&r->lock);
	xrl_status_free(&st);
	return err;
}

static int api_rules(struct rld *r, FILE *f)
{
	struct xrl_stats_view sv;
	struct jw w;
	int err;

	pthread_mutex_lock(&r->lock);
	err = xrl_stats_read(r->x, &sv);
	if (!err) {
		jw_init(&w, f, false);
		xrl_stats_json(&w, r->x, &sv);
		jw_finish(&w);
	}
	pthread_mutex_unlock(&r->lock);
	xrl_stats_free(&sv);
	return err;
}

/* A new walk, when the last is TOP_MIN_MS old: its rates against the walk
 * before (none for the first), the hottest first; the answer kept. The
 * rules are read under the daemon's lock, the walk outside it, so that a
 * walk of a large table never holds up a reload. */
static int top_refresh(struct rld *r)
{
	struct rld_metrics *m = &r->metrics;
	struct xrl_top_snap cur = {};
	struct xrl_rule_entry *rules = NULL;
	struct xrl_top_item *hot = NULL;
	size_t nrules = 0, n;
	double now = now_ms();
	char *body = NULL;
	size_t len = 0;
	bool dry;
	struct jw w;
	FILE *f;
	int err;

	if (m->top_at_ms && now - m->top_at_ms < TOP_MIN_MS && m->top_body)
		return 0;
	pthread_mutex_lock(&r->lock);
	err = xrl_rules_get(r->x, &rules, &nrules);
	dry = xrl_mode_get(r->x) == XRL_MODE_DRY_RUN;
	pthread_mutex_unlock(&r->lock);
	if (err)
		goto out;
	xrl_rules_by_gen(rules, nrules);
	err = xrl_top_collect(r->x, rules, nrules, &cur);
	if (err)
		goto out;
	xrl_top_rates(&cur, &m->top_prev, m->top_at_ms ? (__u64)((now - m->top_at_ms) * 1e6) : 0);
	/* the hottest from a copy: cur stays sorted by key for the next walk */
	hot = malloc((cur.n + 1) * sizeof(*hot));
	f = open_memstream(&body, &len);
	if (!hot || !f) {
		if (f)
			fclose(f);
		err = -ENOMEM;
		goto out;
	}
	memcpy(hot, cur.v, cur.n * sizeof(*hot));
	xrl_sort(hot, cur.n, sizeof(*hot), xrl_top_cmp_hot);
	n = cur.n < TOP_COUNT ? cur.n : TOP_COUNT;
	jw_init(&w, f, false);
	xrl_top_json(&w, hot, n, dry);
	jw_finish(&w);
	fclose(f);
	free(m->top_body);
	m->top_body = body;
	m->top_len = len;
	body = NULL;
	free(m->top_prev.v);
	m->top_prev = cur;
	m->top_prev.rules = NULL;	/* freed below: only the items are kept */
	m->top_prev.nrules = 0;
	cur.v = NULL;
	m->top_at_ms = now;
out:
	free(body);
	free(hot);
	free(cur.v);
	free(rules);
	return err;
}

static int api_top(struct rld *r, FILE *f)
{
	struct rld_metrics *m = &r->metrics;
	int err;

	pthread_mutex_lock(&m->top_lock);
	err = top_refresh(r);
	if (!err && fwrite(m->top_body, 1, m->top_len, f) != m->top_len)
		err = -EIO;
	pthread_mutex_unlock(&m->top_lock);
	return err;
}

int api_fill(struct rld *r, FILE *f, enum xrl_http_page page)
{
	switch (page) {
	case XRL_PAGE_STATUS:
		return api_status(r, f);
	case XRL_PAGE_RULES:
		return api_rules(r, f);
	case XRL_PAGE_TOP:
		return api_top(r, f);
	case XRL_PAGE_INDEX:
		return fputs(xrl_status_page, f) < 0 ? -EIO : 0;
	default:
		return -ENOENT;
	}
}

void api_free(struct rld *r)
{
	free(r->metrics.top_prev.v);
	free(r->metrics.top_body);
	r->metrics.top_prev.v = NULL;
	r->metrics.top_body = NULL;
}
