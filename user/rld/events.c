// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xdp-rld: the live events of the data path. The daemon reads the ring
 * that is its own (xdp-rlctl events reads the other one), counts every
 * event for the metrics, and logs them at a bounded rate: at most
 * EVENT_LOG_PER_SEC lines a second after a burst of EVENT_LOG_BURST, the
 * rest counted and said once a second.
 */
#include "rld.h"

#include <stdlib.h>
#include <string.h>

static int on_event(const struct xrl_event *e, void *ctx)
{
	double now = now_ms(), t = EVENT_LOG_BURST * 1000.0 / EVENT_LOG_PER_SEC;
	struct rld *r = ctx;
	char key[64];

	if (!xrl_event_is_ban(e))
		__atomic_add_fetch(&r->stats.events[e->kind == XRL_EV_LIMITED ? 0 : 1], 1,
				   __ATOMIC_RELAXED);
	/* GCRA, in ms: one line costs 1000 / EVENT_LOG_PER_SEC */
	if (r->ev.log_tat < now)
		r->ev.log_tat = now;
	if (r->ev.log_tat + 1000.0 / EVENT_LOG_PER_SEC - now > t) {
		r->ev.unlogged++;
		__atomic_add_fetch(&r->stats.events_unlogged, 1, __ATOMIC_RELAXED);
		return 0;
	}
	r->ev.log_tat += 1000.0 / EVENT_LOG_PER_SEC;
	xrl_event_key_format(e, key, sizeof(key));
	if (xrl_event_is_ban(e)) {
		char text[160];

		xrl_ban_event_format(e, text, sizeof(text));
		xrl_log(XRL_LOG_INFO, "event: %s", text);
	} else if (e->kind == XRL_EV_LIMITED)
		xrl_log(XRL_LOG_INFO, "event: %s %slimited by rule %u", key,
			e->mode == XRL_MODE_DRY_RUN ? "would be " : "", e->rule_id);
	else
		xrl_log(XRL_LOG_INFO, "event: %s no longer %slimited by rule %u (%llu %s)", key,
			e->mode == XRL_MODE_DRY_RUN ? "would be " : "", e->rule_id,
			(unsigned long long)e->dropped,
			e->mode == XRL_MODE_DRY_RUN ? "would-drops, passed: dry-run" : "dropped");
	return 0;
}

int events_start(struct rld *r)
{
	int err = xrl_events_open(r->x, XRL_EVENTS_RLD, on_event, r, &r->ev.ring);

	if (err) {
		xrl_log(XRL_LOG_WARN, "no live events: %s", xrl_errmsg());
		return err;
	}
	xrl_event_stats_get(r->x, &r->stats.events_base);
	return 0;
}

void events_read(struct rld *r)
{
	if (r->ev.ring)
		xrl_events_consume(r->ev.ring);
}

/* Once a second (the housekeeping tick): what the log's rate left out. */
void events_tick(struct rld *r)
{
	events_read(r);
	if (r->ev.unlogged) {
		xrl_log(XRL_LOG_INFO, "events: %llu more not logged (at most %d lines a second; "
			"xdp_rl_events_total counts them all)", r->ev.unlogged, EVENT_LOG_PER_SEC);
		r->ev.unlogged = 0;
	}
}

/* A ban the sweep reclaims: said in the log. */
static void on_ban_ended(const struct xrl_ban_entry *e, void *ctx)
{
	struct xrl_rule_entry p = { .family = e->family, .prefix_len = e->prefix_len };
	char pfx[64], by[40];

	(void)ctx;
	memcpy(p.addr, e->addr, sizeof(p.addr));
	xrl_prefix_format(&p, pfx, sizeof(pfx));
	xrl_ban_by_format(&e->b, by, sizeof(by));
	xrl_log(XRL_LOG_INFO, "unbanned %s: the ban by %s ended (%llu dropped)", pfx, by,
		(unsigned long long)e->b.dropped);
}

/*
 * Once a second: reclaim the bans past their end (they no longer match in
 * the data path already). Only when there is one: the walk takes no lock,
 * the sweep takes the pin-directory lock as every writer does.
 */
void bans_tick(struct rld *r)
{
	struct xrl_ban_entry *v = NULL;
	bool ended = false;
	size_t n = 0;

	if (xrl_bans_get(r->x, &v, &n))
		return;
	for (size_t i = 0; i < n && !ended; i++)
		ended = v[i].ended;
	free(v);
	if (!ended)
		return;
	pthread_mutex_lock(&r->lock);
	if (!xrl_lock(r->x)) {
		xrl_bans_sweep(r->x, NULL, on_ban_ended, r);
		xrl_unlock(r->x);
	}
	pthread_mutex_unlock(&r->lock);
}

void events_stop(struct rld *r)
{
	xrl_events_close(r->ev.ring);
	r->ev.ring = NULL;
}
