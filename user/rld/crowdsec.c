// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xdp-rld: the CrowdSec follower's thread. One xrl_cs_pull() every poll
 * period, on a thread of its own, so that a Local API that is slow, down
 * or lying never delays the heartbeat, the metrics or a reload (libxrl's
 * deciders/crowdsec.c does the work, each pull under its own deadline).
 * The log says each change of the follower's state once.
 */
#include "rld.h"
#include "prom.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static void *cs_main(void *arg)
{
	struct rld *r = arg;
	struct rld_thread *t = &r->cs.thread;
	/* the follower this thread was started for: cs.client changes only
	 * once the thread is joined */
	struct xrl_cs *c = r->cs.client;
	enum xrl_cs_state last = XRL_CS_STARTING;
	unsigned long long invalid = 0;
	struct timespec next;

	/* the Local API and the pinned maps (through the handle's
	 * descriptors) need no capability */
	caps_thread_none();
	pthread_mutex_lock(&t->lock);
	while (!t->stop) {
		struct xrl_cs_stats st;

		long wait;

		pthread_mutex_unlock(&t->lock);
		clock_gettime(CLOCK_MONOTONIC, &next);
		xrl_cs_pull(c);
		/* the period from the pull's start; longer after an answer over
		 * the body cap (xrl_cs_next_ms()) */
		wait = xrl_cs_next_ms(c);
		next.tv_nsec += (wait % 1000) * 1000000L;
		next.tv_sec += wait / 1000 + next.tv_nsec / 1000000000L;
		next.tv_nsec %= 1000000000L;
		xrl_cs_stats_get(c, &st);
		if (st.state != last) {
			if (st.state == XRL_CS_OK)
				xrl_log(XRL_LOG_INFO, "crowdsec: following the Local API: %llu ban(s) applied so far",
					st.applied);
			else if (st.state != XRL_CS_STARTING)
				xrl_log(XRL_LOG_WARN, "crowdsec: pull failed (%s): %s; the bans applied stay",
					xrl_cs_state_names[st.state], st.last_error);
			last = st.state;
		}
		if (st.invalid != invalid) {
			/* once per pull that had some, not per decision */
			xrl_log(XRL_LOG_WARN, "crowdsec: %llu decision(s) skipped: %s", st.invalid - invalid,
				st.last_error);
			invalid = st.invalid;
		}
		pthread_mutex_lock(&t->lock);
		rld_thread_wait(t, &next);
	}
	pthread_mutex_unlock(&t->lock);
	return NULL;
}

static void cs_line(const struct xrl_config *c, char *buf, size_t len)
{
	snprintf(buf, len, "%s|%s|%ld|%ld|%ld", c->crowdsec.url, c->crowdsec.key_file, c->crowdsec.poll_ms,
		 c->crowdsec.timeout_ms, c->crowdsec.max_body_mb);
}

int crowdsec_open(struct rld *r, const struct xrl_config *c, struct xrl_cs **out)
{
	*out = NULL;
	if (!c->crowdsec.url[0])
		return 0;
	if (xrl_cs_new(r->x, &c->crowdsec, out)) {
		xrl_log(XRL_LOG_ERR, "crowdsec: %s", xrl_errmsg());
		return -1;
	}
	/* its ban writes beside the event loop's (sweeps, reloads) */
	xrl_cs_set_lock(*out, &r->lock);
	return 0;
}

void crowdsec_start(struct rld *r, const struct xrl_config *c, struct xrl_cs *next)
{
	cs_line(c, r->cs.line, sizeof(r->cs.line));
	if (!next)
		return;
	pthread_mutex_lock(&r->lock);	/* the metrics read r->cs.client under it */
	r->cs.client = next;
	pthread_mutex_unlock(&r->lock);
	if (rld_thread_start(&r->cs.thread, "crowdsec", cs_main, r)) {
		xrl_log(XRL_LOG_ERR, "crowdsec: cannot start the follower's thread: the bans applied stay, no new ones");
		return;
	}
	xrl_log(XRL_LOG_INFO, "crowdsec: following %s every %ld ms", c->crowdsec.url, xrl_cs_poll_ms(next));
}

bool crowdsec_changed(struct rld *r, const struct xrl_config *c)
{
	char now[sizeof(r->cs.line)];

	cs_line(c, now, sizeof(now));
	if (strcmp(now, r->cs.line))
		return true;
	/* the same line, a key rotated in place (cscli bouncers delete/add
	 * writing the same file): the key, not only the line; unreadable now,
	 * a change too (the new follower's read refuses the reload) */
	return r->cs.client && c->crowdsec.url[0] && xrl_cs_key_same(r->cs.client, c->crowdsec.key_file) != 1;
}

/* The pull running is cut short (xrl_cs_abort()): the join waits one poll
 * slice, never the Local API. Called without r->lock. */
void crowdsec_stop(struct rld *r)
{
	struct xrl_cs *c = r->cs.client;

	if (!c)
		return;
	if (r->cs.thread.started) {
		xrl_cs_abort(c, true);
		rld_thread_stop(&r->cs.thread, 0);
	}
	pthread_mutex_lock(&r->lock);
	r->cs.client = NULL;
	pthread_mutex_unlock(&r->lock);
	xrl_cs_free(c);
}

void crowdsec_reload_commit(struct rld *r, const struct xrl_config *c, struct xrl_cs *next)
{
	crowdsec_stop(r);
	crowdsec_start(r, c, next);
	xrl_log(XRL_LOG_INFO, "reload: crowdsec line applied: %s",
		next ? "a new follower, starting with a full pull" : "no 'crowdsec' line: its bans stay until they end");
}

void crowdsec_metrics(struct rld *r, struct prom *p)
{
	struct xrl_cs_stats st;

	if (!r->cs.client)
		return;
	xrl_cs_stats_get(r->cs.client, &st);
	prom_family(p, "xdp_rl_crowdsec_state", "gauge",
		    "The CrowdSec follower's state after its last pull: 1 for the current one.");
	for (int i = 0; i < XRL_CS_NSTATES; i++)
		prom_sample(p, PROM_LABELS("state", xrl_cs_state_names[i]), "%d", st.state == (enum xrl_cs_state)i);
	prom_family(p, "xdp_rl_crowdsec_pulls_total", "counter",
		    "Pulls of the Local API's decision stream, by result (failed: by the state it led to).");
	prom_sample(p, PROM_LABELS("result", "ok"), "%llu", st.pulls_ok);
	prom_sample(p, PROM_LABELS("result", "unreachable"), "%llu", st.errors[XRL_CS_UNREACHABLE]);
	prom_sample(p, PROM_LABELS("result", "refused"), "%llu", st.errors[XRL_CS_REFUSED]);
	prom_sample(p, PROM_LABELS("result", "bad-answer"), "%llu", st.errors[XRL_CS_BAD_ANSWER]);
	prom_family(p, "xdp_rl_crowdsec_last_pull_age_seconds", "gauge",
		    "Seconds since the last pull applied (-1: none yet).");
	prom_sample(p, NULL, "%.3f", st.last_ok_ms ? (now_ms() - st.last_ok_ms) / 1e3 : -1.0);
	prom_family(p, "xdp_rl_crowdsec_decisions_total", "counter",
		    "Decisions of the stream, by what became of them: applied (a ban set), removed (a ban lifted), kept (another origin's ban there), refused (the ban table said no), past (already over), ignored (not a ban, or not an Ip or Range), invalid (no address or duration).");
	prom_sample(p, PROM_LABELS("action", "applied"), "%llu", st.applied);
	prom_sample(p, PROM_LABELS("action", "removed"), "%llu", st.removed);
	prom_sample(p, PROM_LABELS("action", "kept"), "%llu", st.kept);
	prom_sample(p, PROM_LABELS("action", "refused"), "%llu", st.refused);
	prom_sample(p, PROM_LABELS("action", "past"), "%llu", st.expired_skipped);
	prom_sample(p, PROM_LABELS("action", "ignored"), "%llu", st.ignored_type + st.ignored_scope);
	prom_sample(p, PROM_LABELS("action", "invalid"), "%llu", st.invalid);
}
