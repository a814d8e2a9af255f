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

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define LOGQ_LINES	256
#define LOGQ_LINE	1100

static struct {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	pthread_t thread;
	bool started, stop;
	char lines[LOGQ_LINES][LOGQ_LINE];
	unsigned head, count;
	unsigned long long dropped;	/* since the last "dropped" line */
} q = { .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER };

unsigned long long logq_dropped_total;	/* atomic: for the metrics */

/* One line per event; under journald a <N> prefix carries the level. */
static void format_line(char *buf, enum xrl_log_level level, const char *msg)
{
	static const int syslog_level[] = { 3, 4, 6, 7 };

	if (opt.journal)
		snprintf(buf, LOGQ_LINE, "<%d>%s: %s\n", syslog_level[level],
			 xrl_log_level_name(level), msg);
	else
		snprintf(buf, LOGQ_LINE, "%s: %s\n", xrl_log_level_name(level), msg);
}

void logq_sink(enum xrl_log_level level, const char *msg)
{
	char line[LOGQ_LINE];

	format_line(line, level, msg);
	if (!q.started) {	/* before the thread, and after it stopped */
		fputs(line, stderr);
		return;
	}
	pthread_mutex_lock(&q.lock);
	if (q.count == LOGQ_LINES) {
		q.dropped++;
		__atomic_add_fetch(&logq_dropped_total, 1, __ATOMIC_RELAXED);
	} else {
		memcpy(q.lines[(q.head + q.count++) % LOGQ_LINES], line, LOGQ_LINE);
		pthread_cond_signal(&q.cond);
	}
	pthread_mutex_unlock(&q.lock);
}

static void *writer(void *arg)
{
	char line[LOGQ_LINE], note[128];

	(void)arg;
	caps_thread_none();	/* it writes lines to stderr, nothing else */
	pthread_mutex_lock(&q.lock);
	for (;;) {
		unsigned long long dropped;

		while (!q.count && !q.stop)
			pthread_cond_wait(&q.cond, &q.lock);
		if (!q.count)
			break;
		memcpy(line, q.lines[q.head], LOGQ_LINE);
		q.head = (q.head + 1) % LOGQ_LINES;
		q.count--;
		dropped = q.dropped;
		q.dropped = 0;
		pthread_mutex_unlock(&q.lock);
		/* the only place that may block on stderr */
		fputs(line, stderr);
		if (dropped) {
			format_line(note, XRL_LOG_WARN, "log lines dropped: stderr did not drain");
			fprintf(stderr, "%.*s (%llu)\n", (int)strlen(note) - 1, note, dropped);
		}
		fflush(stderr);
		pthread_mutex_lock(&q.lock);
	}
	pthread_mutex_unlock(&q.lock);
	return NULL;
}

int logq_start(void)
{
	int err = pthread_create(&q.thread, NULL, writer, NULL);

	q.started = !err;
	return -err;
}

/* Write what is queued, for at most a second: a stderr that never drains
 * must not keep the daemon from stopping. */
void logq_stop(void)
{
	struct timespec t;

	if (!q.started)
		return;
	pthread_mutex_lock(&q.lock);
	q.stop = true;
	pthread_cond_signal(&q.cond);
	pthread_mutex_unlock(&q.lock);
	clock_gettime(CLOCK_REALTIME, &t);
	t.tv_sec += 1;
	if (pthread_timedjoin_np(q.thread, NULL, &t) == 0)
		q.started = false;
}
