// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* xdp-rlctl: events, the live view of keys becoming limited and recovering. */
#include "rlctl.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

struct follow {
	struct xrl *x;
	__u32 seen, count;
};

/* "2026-11-29T22:40:01.123Z" */
static void iso_time(__u64 wall_ns, char *buf, size_t len)
{
	time_t s = wall_ns / 1000000000ULL;
	struct tm tm;
	size_t l;

	gmtime_r(&s, &tm);
	l = strftime(buf, len, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf + l, len - l, ".%03lluZ", (unsigned long long)(wall_ns / 1000000 % 1000));
}

static int on_event(const struct xrl_event *e, void *ctx)
{
	struct follow *f = ctx;
	char key[64], when[40];
	const char *mode = xrl_mode_name(e->mode);
	bool dry = e->mode == XRL_MODE_DRY_RUN;

	if (f->count && f->seen >= f->count)
		return 0;	/* the rest of this batch: not asked for */
	xrl_event_key_format(e, key, sizeof(key));
	iso_time(xrl_event_wall_ns(f->x, e->ts_ns), when, sizeof(when));
	if (opt.json) {
		struct jw w;	/* one object per line, whatever -p says */

		jw_init(&w, stdout, false);
		jw_obj_start(&w);
		jw_kstr(&w, "time", when);
		jw_kstr(&w, "event", xrl_event_kind_name(e->kind));
		jw_kstr(&w, "key", key);
		jw_ku64(&w, "family", e->family);
		jw_ku64(&w, "rule", e->rule_id);
		jw_ku64(&w, "dropped", e->dropped);
		jw_kstr(&w, "mode", mode);
		/* its drops were would-drops: the rule's dry-run or the mode's */
		jw_kbool(&w, "dry_run", dry);
		if (xrl_event_is_ban(e)) {	/* a ban's: who set it, its end */
			jw_kstr(&w, "origin", xrl_ban_origin_name(e->origin));
			jw_key(&w, "until");
			if (e->expires_ns) {
				char until[40];

				iso_time(xrl_event_wall_ns(f->x, e->expires_ns), until, sizeof(until));
				jw_str(&w, until);
			} else {
				jw_null(&w);
			}
			/* an end: on the clock, or lifted before it */
			if (e->kind == XRL_EV_UNBANNED)
				jw_kstr(&w, "cause", e->cause == XRL_EV_CAUSE_LIFTED ? "lifted" : "ended");
		}
		jw_obj_end(&w);
		jw_finish(&w);
	} else if (xrl_event_is_ban(e)) {
		char text[160];

		xrl_ban_event_format(e, text, sizeof(text));
		printf("%s %s\n", when, text);
	} else if (e->kind == XRL_EV_LIMITED) {
		printf("%s %s %slimited by rule %u\n", when, key, dry ? "would be " : "", e->rule_id);
	} else {
		printf("%s %s no longer %slimited by rule %u (%llu %s)\n", when, key,
		       dry ? "would be " : "", e->rule_id, (unsigned long long)e->dropped,
		       dry ? "would-drops, passed: dry-run" : "dropped");
	}
	fflush(stdout);
	f->seen++;
	return 0;
}

/* What was left out while following: said once, at the end. */
static void left_out(const struct xrl_event_stats *a, const struct xrl_event_stats *b)
{
	unsigned long long rate = b->dropped_rate - a->dropped_rate;
	unsigned long long full = b->ring_full[1] - a->ring_full[1];

	if (rate || full)
		p_note("events left out while following: %llu over the rate cap, %llu with the ring full",
		       rate, full);
}

int do_events(struct xrl_cmd *c)
{
	struct sigaction sa = { .sa_handler = on_signal };	/* no SA_RESTART: poll returns */
	struct xrl_event_stats s0 = {}, s1 = {};
	struct follow f = { .count = c->events.count };
	struct xrl_events *ev;
	struct timespec t0, t;
	int err = 0, n;

	if (open_reader(&f.x))
		return 1;
	if (xrl_events_open(f.x, XRL_EVENTS_CTL, on_event, &f, &ev)) {
		p_err("%s", xrl_errmsg());
		xrl_close(f.x);
		return 1;
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGPIPE, &sa, NULL);
	xrl_event_stats_get(f.x, &s0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!stop && (!f.count || f.seen < f.count)) {
		int wait = 1000;

		if (c->events.timeout_s) {
			long long left;

			clock_gettime(CLOCK_MONOTONIC, &t);
			left = c->events.timeout_s * 1000LL - ((t.tv_sec - t0.tv_sec) * 1000LL +
							(t.tv_nsec - t0.tv_nsec) / 1000000);
			if (left <= 0)
				break;
			if (left < wait)
				wait = left;
		}
		n = xrl_events_poll(ev, wait);
		if (n == -EBUSY) {	/* another reader took over */
			p_err("%s", xrl_errmsg());
			err = 1;
			break;
		}
		if (n < 0 && n != -EINTR) {
			p_err("cannot read the events: %s", strerror(-n));
			err = 1;
			break;
		}
		if (ferror(stdout))
			break;	/* the reader went away */
	}
	if (!xrl_event_stats_get(f.x, &s1))
		left_out(&s0, &s1);
	xrl_events_close(ev);
	xrl_close(f.x);
	return err;
}
