// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The events userspace sends: a ban set, lifted or reclaimed by xdp-rlctl
 * or xdp-rld (an operator, the configuration, a decider, the sweep) goes
 * into the same two rings as the data path's events, so that every reader
 * (xdp-rlctl events, the daemon's log and metrics) sees one stream. A ring
 * buffer is written by BPF programs only: this one is run by
 * BPF_PROG_TEST_RUN, its "packet" a struct xrl_event after 14 bytes of
 * Ethernet header (a socket filter's data starts past them). It is loaded
 * on the instance's pinned rings and event counters, and takes the events'
 * global cap as the data path's events do (struct xrl_event_stats).
 *
 * A socket filter: the one program type that needs neither CAP_NET_ADMIN
 * nor CAP_SYS_ADMIN, so that the daemon, which keeps CAP_BPF alone, runs it.
 *
 * retval: 0 written into both rings (or into what was not full), 1 left
 * out by the cap, 2 not an event.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

/* the instance's own rings and cap (rings.h): userspace gives their fds
 * before the load */
#include "rings.h"

SEC("socket")
int xrl_emit(struct __sk_buff *skb)
{
	struct xrl_event_stats *es;
	struct xrl_event ev;
	__u32 zero = 0;

	if (bpf_skb_load_bytes(skb, 0, &ev, sizeof(ev)))
		return 2;
	if (ev.kind != XRL_EV_BANNED && ev.kind != XRL_EV_UNBANNED)
		return 2;	/* a key's events are the data path's alone */
	es = bpf_map_lookup_elem(&xrl_event_stats, &zero);
	if (!es)
		return 2;
	/* the data path's cap, on the event's own time (the data path's clock) */
	if (!event_cap(es, ev.ts_ns))
		return 1;
	if (bpf_ringbuf_output(&xrl_events_rld, &ev, sizeof(ev), 0))
		es->ring_full[0]++;
	if (bpf_ringbuf_output(&xrl_events_ctl, &ev, sizeof(ev), 0))
		es->ring_full[1]++;
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
