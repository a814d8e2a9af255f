/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * libxrl, the map layer: a capture of the packets the data path handled,
 * with their final verdicts (capture.c; the data path's side is
 * bpf/capture.h). One capture per instance at a time: a claim on the pin
 * directory, refused with the holder's pid. The data path copies packets
 * only while the capture's lease runs: renewed by every poll, it lapses a
 * few seconds after a reader killed, by itself.
 */
#ifndef XRL_MAPS_CAPTURE_H
#define XRL_MAPS_CAPTURE_H

#include <stdbool.h>
#include "xdp_rl_common.h"

struct xrl;
struct xrl_capture_run;

struct xrl_capture_filter {
	__u32 verdicts;		/* XRL_CAPTURE_F_*; 0: both */
	bool has_rule;		/* only packets this rule decided */
	__u32 rule_id;
	int family;		/* 0: any source; 4 or 6: addr/prefix_len */
	__u8 addr[16];
	__u8 prefix_len;
	__u32 snaplen;		/* 0: XRL_CAPTURE_SNAPLEN */
	__u32 rate;		/* records per second, at most XRL_CAPTURE_RATE; 0: that */
	__u32 burst;		/* 0: XRL_CAPTURE_BURST */
};

/* One packet, as the callback sees it. */
struct xrl_capture_pkt {
	__u64 ts_ns;		/* the data path's CLOCK_MONOTONIC (or test clock) */
	__u32 ifindex;
	__u32 len;		/* on the wire */
	__u32 caplen;		/* bytes in data */
	bool has_rule;		/* a rule decided: rule_id */
	__u32 rule_id;
	__u8 verdict;		/* XRL_CAPTURE_F_PASS or _DROP */
	__u8 mode;		/* enum xrl_mode */
	const void *data;
};

/* What a capture did, so far. */
struct xrl_capture_totals {
	__u64 matched;		/* packets the filter matched */
	__u64 captured;		/* written to the ring by the data path */
	__u64 left_out;		/* over the rate cap */
	__u64 lost;		/* dropped by the ring: full, counted by the kernel or the data path */
	__u64 delivered;	/* handed to the callback */
};

/* A callback's non-zero return ends the poll that called it, returned. */
typedef int (*xrl_capture_cb)(const struct xrl_capture_pkt *p, void *ctx);

/* Start: the claim, the filter, the ring, then the lease. -EBUSY when
 * another capture runs (xrl_errmsg() names its pid); -EOPNOTSUPP for a
 * program without capture (an older build); -ENOENT for a rule id that is
 * not in the active set. */
int xrl_capture_start(struct xrl *x, const struct xrl_capture_filter *f, xrl_capture_cb cb,
		      void *ctx, struct xrl_capture_run **out);
/* Wait up to timeout_ms for records and hand them to the callback; renews
 * the lease. Returns what the callback returned, or 0, or a negative
 * errno (EINTR is 0). */
int xrl_capture_poll(struct xrl_capture_run *c, int timeout_ms);
void xrl_capture_totals(struct xrl_capture_run *c, struct xrl_capture_totals *t);
/* The lease off, what is still in the ring handed over (the callback's
 * return ignored), *t (when t) the totals then, the claim gone. */
void xrl_capture_stop(struct xrl_capture_run *c, struct xrl_capture_totals *t);

#endif
