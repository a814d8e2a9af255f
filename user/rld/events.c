// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xdp-rld: the live events of the data path. The daemon reads the ring
 * that is its own (xdp-rlctl events reads the other one), counts every
 * event for the metrics, and logs them at a bounded rate: at most
 * EVENT_LOG_PER_SEC lines a second after a burst of EVENT_LOG_BURST, the
 * rest counted and said once a second.
 */
#include "rld.h"

#include <string.h>

static int on_event(const struct xrl_event *e, void *ctx)
{
	double now = now_ms(), t = EVENT_LOG_BURST * 1000.0 / EVENT_LOG_PER_SEC;
	struct rld *r = ctx;
	char key[64];

	__atomic_add_fetch(&r->stats.events[e->kind == XRL_EV_LIMITED ? 0 : 1], 1, __ATOMIC_RELAXED);
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
	if (e->kind == XRL_EV_LIMITED)
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

void events_stop(struct rld *r)
{
	xrl_events_close(r->ev.ring);
	r->ev.ring = NULL;
}
