/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The live events' rings and their global cap: one ring per reader
 * (xdp_rl_common.h) and the per-CPU counters with the cap's state. Shared
 * by the data path (maps.h) and by the program userspace runs to say the
 * bans it sets (xrl_emit.bpf.c), which is loaded on the same pinned maps.
 */
#ifndef XRL_BPF_RINGS_H
#define XRL_BPF_RINGS_H

#include "xdp_rl_common.h"
#include "xrl_meter.h"

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, XRL_EVENT_RING_BYTES);
} xrl_events_rld SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, XRL_EVENT_RING_BYTES);
} xrl_events_ctl SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xrl_event_stats);
} xrl_event_stats SEC(".maps");

/* The events' global cap, per CPU (no atomics needed), on the data path's
 * clock: 1 and the cap charged when an event may go out at now_ns, else 0
 * and counted as left out. */
static __always_inline int event_cap(struct xrl_event_stats *es, __u64 now_ns)
{
	__u64 tat;

	if (!xrl_gcra(es->tat, xrl_ns_to_tu(now_ns),
		      xrl_ns_to_tu(XRL_NSEC_PER_SEC) / XRL_EVENT_RATE,
		      xrl_ns_to_tu(XRL_NSEC_PER_SEC) / XRL_EVENT_RATE * XRL_EVENT_BURST, 1, &tat)) {
		es->dropped_rate++;
		return 0;
	}
	es->tat = tat;
	return 1;
}

#endif
