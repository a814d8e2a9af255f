// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xdp-rld: how its threads (the heartbeat, the fleet's sync, the log
 * writer) start and stop. Each loops under its own lock, waits on its
 * condition variable, and leaves once a stop is asked; the stop wakes it
 * and joins it.
 */
#include "rld.h"

#include <errno.h>
#include <string.h>

void rld_thread_init(struct rld_thread *t)
{
	pthread_condattr_t ca;

	pthread_mutex_init(&t->lock, NULL);
	/* timed waits run on the monotonic clock: a change of the wall clock
	 * neither stretches nor cuts a period */
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&t->cond, &ca);
	pthread_condattr_destroy(&ca);
}

int rld_thread_start(struct rld_thread *t, const char *name, void *(*fn)(void *), void *arg)
{
	int err;

	t->name = name;
	t->stop = false;
	err = pthread_create(&t->tid, NULL, fn, arg);
	t->started = !err;
	if (err)
		xrl_log(XRL_LOG_DEBUG, "cannot start the %s thread: %s", name, strerror(err));
	return -err;
}

bool rld_thread_wait(struct rld_thread *t, const struct timespec *until)
{
	if (t->stop)
		return false;
	if (until)
		pthread_cond_timedwait(&t->cond, &t->lock, until);
	else
		pthread_cond_wait(&t->cond, &t->lock);
	return !t->stop;
}

void rld_thread_wake(struct rld_thread *t)
{
	if (!t->started)
		return;
	pthread_mutex_lock(&t->lock);
	pthread_cond_signal(&t->cond);
	pthread_mutex_unlock(&t->lock);
}

int rld_thread_stop(struct rld_thread *t, long timeout_ms)
{
	struct timespec until;

	if (!t->started)
		return 0;
	pthread_mutex_lock(&t->lock);
	t->stop = true;
	pthread_cond_signal(&t->cond);
	pthread_mutex_unlock(&t->lock);
	if (timeout_ms) {
		/* pthread_timedjoin_np() takes the wall clock */
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += timeout_ms / 1000;
		until.tv_nsec += (timeout_ms % 1000) * 1000000L;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		if (pthread_timedjoin_np(t->tid, NULL, &until))
			return -ETIMEDOUT;
	} else {
		pthread_join(t->tid, NULL);
	}
	t->started = false;
	return 0;
}
