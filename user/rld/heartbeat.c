// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xdp-rld: the heartbeat, from a thread of its own.
 */
#include "rld.h"

#include <pthread.h>
#include <systemd/sd-daemon.h>
#include <time.h>

void heartbeat(struct rld *r)
{
	xrl_heartbeat(r->x, get_long(&r->hb.heartbeat_ms), (__u64)get_long(&r->hb.watchdog_ms) * 1000000);
}

static void timespec_add_ms(struct timespec *t, long ms)
{
	t->tv_sec += ms / 1000;
	t->tv_nsec += (ms % 1000) * 1000000;
	if (t->tv_nsec >= 1000000000) {
		t->tv_sec++;
		t->tv_nsec -= 1000000000;
	}
}

/*
 * The heartbeat proves that the daemon is alive, nothing more: it waits for
 * no reload, no file, no lock but its own condition variable. A stalled
 * event loop is reported (log) but does not stop the heartbeat, since that
 * would lift every limit (the watchdog's on-failure policies).
 */
static void *heartbeat_main(void *arg)
{
	struct rld *r = arg;
	struct rld_thread *t = &r->hb.thread;
	struct timespec next;
	bool stall_logged = false, sd_withheld = false;
	uint64_t sd_usec = 0;
	/* systemd's watchdog (WatchdogSec=): WATCHDOG=1 at least twice per
	 * period, from here, while the event loop is not stuck */
	bool sd_wd = sd_watchdog_enabled(0, &sd_usec) > 0 && sd_usec >= 2000;

	caps_thread_none();	/* the control block is mmapped: no syscall needs one */
	if (sd_wd)
		xrl_log(XRL_LOG_INFO, "systemd watchdog: %llu ms", (unsigned long long)sd_usec / 1000);
	pthread_mutex_lock(&t->lock);
	while (!t->stop) {
		long hb = get_long(&r->hb.heartbeat_ms);
		long busy = get_long(&r->hb.busy_ms);
		double stall = busy ? now_ms() - busy : 0;
		long wd = get_long(&r->hb.watchdog_ms);

		heartbeat(r);
		if (sd_wd) {
			/* An event loop stuck for a whole systemd watchdog period
			 * (no reload takes that long) is a daemon to restart: say
			 * nothing, and let systemd do it. */
			if (stall < sd_usec / 1000.0) {
				sd_notify(0, "WATCHDOG=1");
				sd_withheld = false;
			} else if (!sd_withheld) {
				xrl_log(XRL_LOG_ERR, "the event loop has been stuck for %.0f s: no more WATCHDOG=1 to systemd",
					stall / 1e3);
				sd_withheld = true;
			}
			if (hb > (long)(sd_usec / 2000))
				hb = sd_usec / 2000;
		}
		/* a turn of the event loop takes milliseconds; a reload of a
		 * large file, a second or so */
		if (stall > 2.0 * (wd > 10000 ? wd : 10000) && !stall_logged) {
			xrl_log(XRL_LOG_WARN, "the event loop has been busy for %.0f s (heartbeat goes on)", stall / 1e3);
			stall_logged = true;
		} else if (stall < hb) {
			stall_logged = false;
		}
		/* the next beat one period from now, whatever the last period
		 * was: a reload that shortens it (heartbeat_kick) takes effect
		 * at once, and a suspended machine needs no catching up */
		clock_gettime(CLOCK_MONOTONIC, &next);
		timespec_add_ms(&next, hb);
		rld_thread_wait(t, &next);
	}
	pthread_mutex_unlock(&t->lock);
	return NULL;
}

int heartbeat_start(struct rld *r)
{
	return rld_thread_start(&r->hb.thread, "heartbeat", heartbeat_main, r);
}

void heartbeat_stop(struct rld *r)
{
	rld_thread_stop(&r->hb.thread, 0);
}

/* A new heartbeat period takes effect at once. */
void heartbeat_kick(struct rld *r)
{
	rld_thread_wake(&r->hb.thread);
}
