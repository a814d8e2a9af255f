/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * libxrl, the map layer: live events (events.c; README, "Live events").
 */
#ifndef XRL_MAPS_EVENTS_H
#define XRL_MAPS_EVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include "xdp_rl_common.h"

struct xrl;

/* Two rings, one per reader: the daemon's and xdp-rlctl events'. */
enum xrl_events_reader { XRL_EVENTS_RLD, XRL_EVENTS_CTL };
typedef int (*xrl_event_cb)(const struct xrl_event *e, void *ctx);
struct xrl_events;
/* Follow one ring: cb for each event, from xrl_events_poll() or
 * xrl_events_consume(). What the ring holds already (written while nobody
 * read it) is discarded first. XRL_EVENTS_CTL is one reader at a time (a
 * claim on DIR/events): -EBUSY naming the other one. */
int xrl_events_open(struct xrl *x, enum xrl_events_reader who, xrl_event_cb cb, void *ctx,
		    struct xrl_events **out);
/* An fd that polls readable when events are there. */
int xrl_events_fd(const struct xrl_events *ev);
/* Events handled (>= 0), or a negative errno (-EINTR on a signal). */
int xrl_events_poll(struct xrl_events *ev, int timeout_ms);
int xrl_events_consume(struct xrl_events *ev);
void xrl_events_close(struct xrl_events *ev);
/* The per-CPU event counters, summed (the cap's state left out). */
int xrl_event_stats_get(struct xrl *x, struct xrl_event_stats *sum);
/* "limited", "unlimited", "banned", "unbanned" */
const char *xrl_event_kind_name(int kind);
/* A ban's event (XRL_EV_BANNED, XRL_EV_UNBANNED), in words: "198.18.5.0/24
 * banned by rule 4 for 10s", "... would be banned ...", "198.18.3.4 no
 * longer banned (ban by operator ended; 2 dropped)". */
bool xrl_event_is_ban(const struct xrl_event *e);
void xrl_ban_event_format(const struct xrl_event *e, char *buf, size_t len);
/* The key: "198.18.0.1" for a whole address, else "198.18.0.0/24". */
void xrl_event_key_format(const struct xrl_event *e, char *buf, size_t len);
/* Load the program that writes the events of bans set and lifted from
 * userspace (once per handle; later calls return at once): for a process
 * that drops its capabilities, before it does (the load needs more than
 * CAP_BPF). false: it cannot be loaded, the bans' events come from the
 * data path alone (at a ban's first drop, at the first packet after it). */
bool xrl_ban_events_prepare(struct xrl *x);
/* The wall clock (ns since the epoch) of a data-path time. */
__u64 xrl_event_wall_ns(struct xrl *x, __u64 ts_ns);

#endif
