/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The clock (the coarse one, the precise one, the test clock) and the
 * daemon's watchdog.
 */
#ifndef XRL_BPF_CLOCK_H
#define XRL_BPF_CLOCK_H

#include "context.h"

/* Load-time switch: read the clock from the control block (tests, replay).
 * The verifier removes the branch from production loads. */
const volatile __u8 use_test_clock = 0;

/*
 * The coarse monotonic clock: 30 of the ~100 ns a metered packet cost with
 * bpf_ktime_get_ns() on this machine (tests/bench/microbench). It ticks
 * every jiffy (4 ms at HZ=250), so a bucket refills in steps of one tick:
 * any window W admits at most burst + rate * (W + tick); the benchmark
 * measures the accuracy this costs.
 */
static __always_inline __u64 clock_ns(const struct xrl_control *ctrl)
{
	if (use_test_clock)
		return ctrl->test_now_ns;
	return bpf_ktime_get_coarse_ns();
}

/*
 * A rule's clock: the coarse one, or the precise one for a rule that
 * refills its burst within XRL_PRECISE_TICKS ticks (xrl_rule.precise): on
 * the coarse clock it would admit at most its burst a tick, a fraction of
 * its rate. bpf_ktime_get_ns() is never behind the coarse clock.
 */
static __always_inline __u64 rule_clock_ns(const struct xrl_control *ctrl,
					   const struct xrl_rule *r)
{
	if (use_test_clock)
		return ctrl->test_now_ns;
	return r->precise ? bpf_ktime_get_ns() : bpf_ktime_get_coarse_ns();
}

/* The daemon stopped heartbeating: its watchdog time has passed. */
static __always_inline int watchdog_fired(const struct xrl_control *ctrl, __u64 now_ns)
{
	__u64 wd = ctrl->watchdog_ns;

	/* signed: a heartbeat stamped after this packet read the clock (the
	 * daemon's coarse clock ticked meanwhile) is fresh, not 2^64 ns old */
	return wd && (__s64)(now_ns - ctrl->heartbeat_ns) > 0 &&
	       now_ns - ctrl->heartbeat_ns > wd;
}

#endif
