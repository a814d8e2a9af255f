/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * xdp-rld's parts, and the state they share:
 *   main.c       options, the event loop, stopping
 *   reload.c     read the configuration, apply it, watch the file
 *   iface.c      attach, adopt, link events, restore removed pins
 *   heartbeat.c  the heartbeat thread
 *   events.c     the data path's live events: counted, logged at a bounded rate
 *   metrics.c    the Prometheus exposition; linkmon.c rtnetlink
 * Every map and attach operation goes through libxrl.
 */
#ifndef XRL_RLD_H
#define XRL_RLD_H

#define _GNU_SOURCE
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <time.h>

#include "text/config.h"
#include "fleet/fleet.h"
#include "libxrl.h"
#include "linkmon.h"
#include "metrics.h"

#define DEFAULT_METRICS		"127.0.0.1:9437"
#define DEFAULT_HEARTBEAT_MS	1000
#define DEFAULT_WATCHDOG_MS	5000
#define RELOAD_SETTLE_MS	100	/* editors write, rename, chmod: one reload */
#define KEYS_REFRESH_MS		10000	/* keys tracked: counted at most this often */

/* the command line */
struct rld_opts {
	const char *config;
	bool config_given;
	char *ifaces[64];
	int nifaces;
	const char *metrics;
	long heartbeat_ms, watchdog_ms;
	const char *pin_dir;
	bool keep_attached, check;
	bool no_run_stats;	/* leave the kernel's run-time statistics off */
	enum xrl_log_level level;
	bool journal;
};
extern struct rld_opts opt;

/* Each served interface, beside its configuration in d.ifaces. */
struct iface_state {
	bool attached;		/* at the last look */
	bool failed;		/* it exists, and the last attach failed (said once) */
	bool lost;		/* it was attached, and then no longer */
	bool ours;		/* this run attached it (not adopted) */
	bool mode_mismatch;	/* attached in another mode than configured, and that mode failed */
	bool gro_warned;	/* said that generic mode with GRO on undercounts packet rules */
};

/* The running state. `lock` serialises map reads by the metrics thread with
 * the event loop's rule changes. The heartbeat thread takes no lock: it reads
 * its settings atomically and writes two words of the mmap'ed control block. */
struct rld_state {
	struct xrl *x;
	pthread_mutex_t lock;
	struct xrl_daemon_stats stats;
	struct xrl_iface_cfg *ifaces;	/* served interfaces */
	struct iface_state *ifst;	/* one per served interface */
	size_t nifaces;
	long heartbeat_ms, watchdog_ms;	/* atomic: the heartbeat thread reads them */
	int timer_fd;
	/* the heartbeat thread */
	pthread_t hb_thread;
	bool hb_started, hb_stop;
	pthread_mutex_t hb_lock;
	pthread_cond_t hb_cond;
	long busy_ms;		/* atomic: when the event loop's current turn began; 0: idle in poll */
	bool pins_broken;	/* the last pin check failed and was logged */
	/* metrics: the server, where it serves ("": nowhere, "off") and the
	 * file's metrics line as last read */
	struct xrl_metrics *metrics;
	char metrics_addr[80], file_metrics[80];
	time_t last_applied;		/* wall clock of the last applied config */
	char config_sha256[65];		/* of the file applied */
	/* keys tracked, counted outside `lock` (keys_lock: one walk at a time) */
	pthread_mutex_t keys_lock;
	unsigned long long keys[2];
	double keys_at_ms;		/* 0: never counted */
	/* live events: the daemon's ring, read by the event loop */
	struct xrl_events *events;
	int stats_fd;			/* BPF_STATS_RUN_TIME: enabled while open, for the daemon's life */
	double ev_log_tat;		/* the log's rate: GCRA state, ms */
	unsigned long long ev_unlogged;	/* since the last "not logged" line */
	/* fleet-wide rules: the sync thread (fleet.c); NULL: no 'fleet redis' */
	struct xrl_fleet *fleet;
	pthread_t fleet_thread;
	bool fleet_started, fleet_stop;
	pthread_mutex_t fleet_lock;
	pthread_cond_t fleet_cond;
	char fleet_lines[600];		/* the fleet lines in force */
	char fleet_where[400];		/* their Redis and host name */
};
extern struct rld_state d;

static inline long get_long(long *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static inline double now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* reload.c */
int read_config(struct xrl_config *c, bool as_log, bool first, bool *builtin);
long pick(long flag, long file, long def);
int apply(struct xrl_config *c, const char *what);
void reload(const char *why);
int watch_config(int ifd);
bool config_event(int ifd);

/* iface.c */
bool has_link_pin(const char *ifname);
void count_attached(void);
void serve_iface(size_t i);
void unserve_iface(const char *name);
/* served interfaces that exist and could not be attached: their count,
 * and " d1 d2" */
size_t ifaces_failed(char *names, size_t len);
void serves_sync(void);
int ifaces_held(const struct xrl_config *c, bool check);
int set_ifaces(const struct xrl_config *c, struct xrl_iface_cfg **out, size_t *n);
void on_link(const struct xrl_link_event *ev, void *ctx);
int check_pins(void);

/* logq.c: the log sink; lines are written by a thread of their own */
void logq_sink(enum xrl_log_level level, const char *msg);
int logq_start(void);
void logq_stop(void);
extern unsigned long long logq_dropped_total;

/* caps.c: keep CAP_BPF and CAP_SYS_ADMIN only (permitted, effective,
 * bounding: the calling thread); drop every capability of the calling
 * thread; empty its effective set, or raise it again from its permitted */
int caps_keep(char *kept, size_t len);
int caps_thread_none(void);
int caps_effective(bool on);

/* main.c: serve metrics where the configuration says (file: its metrics
 * line, "" when it has none); a change is applied or refused, and logged */
void metrics_set(const char *file, const char *why);

/* events.c: the daemon's ring of live events */
#define EVENT_LOG_PER_SEC	10	/* event lines a second, at most ... */
#define EVENT_LOG_BURST		20	/* ... after a burst of this many */
int events_start(void);
void events_read(void);
void events_tick(void);
void events_stop(void);

/* fleet.c: the sync thread; fleet_rules() after each commit */
int fleet_start(const struct xrl_config *c);
void fleet_rules(void);
/* a reload's fleet lines, applied with it, all-or-nothing: prepare before
 * the rules (a new client that answers, or the reload is refused), commit
 * once they are applied (the old client stopped, the new one started) */
int fleet_reload_prepare(const struct xrl_config *c, struct xrl_fleet **next, bool *changed);
void fleet_reload_commit(const struct xrl_config *c, struct xrl_fleet *next);
void fleet_stop(bool leave);
/* the xdp_rl_fleet_* metrics (nothing without 'fleet redis') */
void fleet_metrics(FILE *f);

/* heartbeat.c */
void heartbeat(void);
int heartbeat_start(void);
void heartbeat_stop(void);
void heartbeat_kick(void);
int arm_timer(void);

#endif
