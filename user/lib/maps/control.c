// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * libxrl: the control block: mode, clock, heartbeat.
 */
#include "maps/internal.h"

#include <errno.h>
#include <string.h>
#include <time.h>

/* ------------------------------------------------------------------ */
/* Mode and clock                                                      */

const char *xrl_mode_name(enum xrl_mode m)
{
	return xrl_word_name(xrl_mode_words, m);
}

int xrl_mode_set(struct xrl *x, enum xrl_mode mode)
{
	if (mode >= XRL_MODE_MAX)
		return xrl_fail(EINVAL, "unknown mode %d", mode);
	__atomic_store_n(&x->ctrl->mode, mode, __ATOMIC_RELEASE);
	xrl__cache_bump(x);
	return 0;
}

/* After the change it follows is visible to the data path: a packet that
 * reads the new epoch sees the change (the epoch is read before the rules
 * and the buckets). */
void xrl__cache_bump(struct xrl *x)
{
	__atomic_fetch_add(&x->ctrl->cache_epoch, 1, __ATOMIC_SEQ_CST);
}

enum xrl_mode xrl_mode_get(struct xrl *x)
{
	return __atomic_load_n(&x->ctrl->mode, __ATOMIC_ACQUIRE) & (XRL_MODE_MAX - 1);
}

__u32 xrl_features_get(struct xrl *x)
{
	return __atomic_load_n(&x->ctrl->features, __ATOMIC_ACQUIRE);
}

__u64 xrl_now_ns(struct xrl *x)
{
	struct timespec ts;
	__u64 t = __atomic_load_n(&x->ctrl->test_now_ns, __ATOMIC_ACQUIRE);

	if (x->skel ? x->skel->rodata->use_test_clock : false)
		return t;
	/* the program's bpf_ktime_get_coarse_ns() */
	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (__u64)ts.tv_sec * XRL_NSEC_PER_SEC + ts.tv_nsec;
}

__u64 xrl_rule_now_ns(struct xrl *x, const struct xrl_rule *r)
{
	struct timespec ts;

	if (!r->precise || (x->skel ? x->skel->rodata->use_test_clock : false))
		return xrl_now_ns(x);
	/* the program's bpf_ktime_get_ns() */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * XRL_NSEC_PER_SEC + ts.tv_nsec;
}

void xrl_heartbeat(struct xrl *x, __u32 interval_ms, __u64 watchdog_ns)
{
	__atomic_store_n(&x->ctrl->heartbeat_interval_ms, interval_ms, __ATOMIC_RELEASE);
	__atomic_store_n(&x->ctrl->heartbeat_ns, xrl_now_ns(x), __ATOMIC_RELEASE);
	if (__atomic_exchange_n(&x->ctrl->watchdog_ns, watchdog_ns, __ATOMIC_ACQ_REL) != watchdog_ns)
		xrl__cache_bump(x);	/* the hot-key cache checks it once a tick */
}

bool xrl_heartbeating(struct xrl *x)
{
	__u64 iv = __atomic_load_n(&x->ctrl->heartbeat_interval_ms, __ATOMIC_ACQUIRE);
	long long age = xrl_heartbeat_age(x);

	return age >= 0 && iv && (__u64)age <= 3 * iv * 1000000 + XRL_HEARTBEAT_SLACK_NS;
}

long long xrl_heartbeat_age(struct xrl *x)
{
	__u64 hb = __atomic_load_n(&x->ctrl->heartbeat_ns, __ATOMIC_ACQUIRE);
	__u64 now = xrl_now_ns(x);

	if (!hb)
		return -1;
	return now > hb ? (long long)(now - hb) : 0;
}

void xrl_test_clock_set(struct xrl *x, __u64 ns)
{
	__atomic_store_n(&x->ctrl->test_now_ns, ns, __ATOMIC_RELEASE);
}
