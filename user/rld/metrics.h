/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Prometheus text exposition of the data path's counters (metrics.c),
 * served over HTTP by libmicrohttpd (http.c). */
#ifndef XRL_METRICS_H
#define XRL_METRICS_H

#include <stdio.h>
#include <time.h>
#include "libxrl.h"

struct xrl_iface_stat {
	char name[IF_NAMESIZE];
	unsigned attached;		/* 1: the program is attached to it now */
	unsigned mode_mismatch;		/* 1: attached, not in the configured mode */
	int hook;			/* enum xrl_hook: the configured one */
	unsigned hook_mismatch;		/* 1: attached, not at the configured hook */
	unsigned tc_position;		/* at tc: its place in the tcx chain, 1 first; 0 unknown */
};

struct xrl_daemon_stats {
	unsigned long long reloads;
	unsigned long long reload_failures;
	unsigned interfaces_attached;
	struct xrl_iface_stat *ifaces;		/* each served interface */
	size_t nifaces;
	unsigned long long pin_restores;	/* pins re-created after a removal */
	unsigned long long link_repairs;	/* links re-attached after a removal */
	unsigned long long tc_reorders;		/* put first again in a tcx chain (interface ... first) */
	unsigned pins_ok;			/* 1: every pin in place */
	unsigned long long log_dropped;		/* log lines stderr did not take */
	time_t last_reload_success;		/* wall clock of the last applied config; 0: none */
	char config_sha256[65];			/* of the applied file */
	char config_path[256];
	unsigned long long keys[2];		/* keys tracked, IPv4 and IPv6, counted ... */
	double keys_age_s;			/* ... this long ago (-1: never) */
	unsigned long long events[2];		/* live events read: limited, unlimited */
	unsigned long long events_unlogged;	/* read but not logged (the log's rate) */
	struct xrl_event_stats events_base;	/* the data path's event counters at start */
	unsigned runtime_stats;			/* 1: the daemon holds run-time statistics enabled */
};

/* Write every metric of `x` (and the daemon's own) through p (prom.h).
 * Without ds, the keys tracked are counted by walking the bucket tables. */
struct prom;
int xrl_metrics_write(struct prom *p, struct xrl *x, const struct xrl_daemon_stats *ds);

/* The HTTP side: GET of one of these paths calls fill(f, page, ctx) for
 * the body (0, or an error: 500). Any other path is 404, any other method
 * than GET and HEAD 405. */
enum xrl_http_page {
	XRL_PAGE_METRICS,	/* /metrics: the Prometheus text */
	XRL_PAGE_STATUS,	/* /api/v1/status: xdp-rlctl -j status */
	XRL_PAGE_RULES,		/* /api/v1/rules: xdp-rlctl -j stats */
	XRL_PAGE_TOP,		/* /api/v1/top: xdp-rlctl -j top */
	XRL_PAGE_INDEX,		/* /: the status page */
};
typedef int (*xrl_metrics_fill)(FILE *f, enum xrl_http_page page, void *ctx);
struct xrl_metrics;
int xrl_metrics_start(const char *hostport, xrl_metrics_fill fill, void *ctx,
		      struct xrl_metrics **out);
void xrl_metrics_stop(struct xrl_metrics *m);

#endif
