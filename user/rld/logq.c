// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xdp-rld: the log writer. Log lines go into a bounded queue and a thread
 * of their own writes them to stderr, so that a stderr that does not drain
 * (a stalled journald, `xdp-rld 2>&1 | less` left paused) blocks that
 * thread only: never the heartbeat, never the event loop. When the queue is
 * full, lines are dropped and counted, and the count is said when the queue
 * drains again.
 */
#include "rld.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/*
 * The one pointer to the daemon outside main(): libxrl's log sink
 * (xrl_log_set()) takes no context, and every part of the daemon and of
 * libxrl logs through it. Set by logq_init(), before the sink is.
 */
static struct rld_logq *sink_q;

/* One line per event; under journald a <N> prefix carries the level. */
static void format_line(const struct rld_logq *q, char *buf, enum xrl_log_level level, const char *msg)
{
	static const int syslog_level[] = { 3, 4, 6, 7 };

	if (q->journal)
		snprintf(buf, LOGQ_LINE, "<%d>%s: %s\n", syslog_level[level],
			 xrl_log_level_name(level), msg);
	else
		snprintf(buf, LOGQ_LINE, "%s: %s\n", xrl_log_level_name(level), msg);
}

static void logq_sink(enum xrl_log_level level, const char *msg)
{
	struct rld_logq *q = sink_q;
	char line[LOGQ_LINE];

	format_line(q, line, level, msg);
	if (!q->thread.started) {	/* before the thread, and after it stopped */
		fputs(line, stderr);
		return;
	}
	pthread_mutex_lock(&q->thread.lock);
	if (q->count == LOGQ_LINES) {
		q->dropped++;
		__atomic_add_fetch(&q->dropped_total, 1, __ATOMIC_RELAXED);
	} else {
		memcpy(q->lines[(q->head + q->count++) % LOGQ_LINES], line, LOGQ_LINE);
		pthread_cond_signal(&q->thread.cond);
	}
	pthread_mutex_unlock(&q->thread.lock);
}

static void *writer(void *arg)
{
	struct rld *r = arg;
	struct rld_logq *q = &r->log;
	char line[LOGQ_LINE], note[128];

	caps_thread_none();	/* it writes lines to stderr, nothing else */
	pthread_mutex_lock(&q->thread.lock);
	for (;;) {
		unsigned long long dropped;

		while (!q->count && rld_thread_wait(&q->thread, NULL))
			;
		if (!q->count)
			break;
		memcpy(line, q->lines[q->head], LOGQ_LINE);
		q->head = (q->head + 1) % LOGQ_LINES;
		q->count--;
		dropped = q->dropped;
		q->dropped = 0;
		pthread_mutex_unlock(&q->thread.lock);
		/* the only place that may block on stderr */
		fputs(line, stderr);
		if (dropped) {
			format_line(q, note, XRL_LOG_WARN, "log lines dropped: stderr did not drain");
			fprintf(stderr, "%.*s (%llu)\n", (int)strlen(note) - 1, note, dropped);
		}
		fflush(stderr);
		pthread_mutex_lock(&q->thread.lock);
	}
	pthread_mutex_unlock(&q->thread.lock);
	return NULL;
}

/* The sink in place (lines written straight to stderr until the thread
 * runs), at the options' level. */
void logq_init(struct rld *r)
{
	r->log.journal = r->opt.journal;
	rld_thread_init(&r->log.thread);
	sink_q = &r->log;
	xrl_log_set(logq_sink, r->opt.level);
}

int logq_start(struct rld *r)
{
	return rld_thread_start(&r->log.thread, "log writer", writer, r);
}

/* Write what is queued, for at most a second: a stderr that never drains
 * must not keep the daemon from stopping. */
int logq_stop(struct rld *r)
{
	return rld_thread_stop(&r->log.thread, 1000);
}
