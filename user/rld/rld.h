/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * xdp-rld's parts, and the state they share:
 *   main.c       options, the event loop, stopping
 *   reload.c     read the configuration, apply it, watch the file
 *   iface.c      attach, adopt, link events, restore removed pins
 *   heartbeat.c  the heartbeat thread
 *   events.c     the data path's live events: counted, logged at a bounded rate
 *   fleet.c      the fleet client's sync thread and its metrics
 *   crowdsec.c   the CrowdSec follower's thread and its metrics
 *   logq.c       the log queue and its writer thread
 *   thread.c     how each of those threads starts and stops
 *   suggest.c    --suggest: the sampler thread, its records, their metrics
 *   metrics.c    what /metrics serves and where; prom.c writes the
 *                exposition, http.c serves it; linkmon.c rtnetlink
 *   api.c        the read-only API (/api/v1/...) and the status page (/)
 * main() makes one struct rld and hands it to every part: the parts share
 * nothing else. Every map and attach operation goes through libxrl.
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
#include "deciders/crowdsec.h"
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
	bool suggest;		/* --suggest: record for xdp-rlctl suggest from */
};

/*
 * A thread of the daemon and how it is stopped (thread.c): the thread waits
 * on cond under lock, and leaves its loop once stop is set; a wake-up
 * (rld_thread_wake) ends its wait early. cond runs on CLOCK_MONOTONIC.
 */
struct rld_thread {
	const char *name;
	pthread_t tid;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool started, stop;
};

void rld_thread_init(struct rld_thread *t);
/* 0, or a negative errno (logged) */
int rld_thread_start(struct rld_thread *t, const char *name, void *(*fn)(void *), void *arg);
/* In the thread, with t->lock held: wait until `until` (NULL: no limit) or a
 * wake-up; false once a stop was asked. */
bool rld_thread_wait(struct rld_thread *t, const struct timespec *until);
void rld_thread_wake(struct rld_thread *t);
/* Ask it to stop, wake it and join it, waiting at most timeout_ms (0: no
 * limit). 0 once joined (or never started); -ETIMEDOUT: still running. */
int rld_thread_stop(struct rld_thread *t, long timeout_ms);

/* Each served interface, beside its configuration in ifaces.cfg. */
struct iface_state {
	bool attached;		/* at the last look */
	bool failed;		/* it exists, and the last attach failed (said once) */
	bool lost;		/* it was attached, and then no longer */
	bool ours;		/* this run attached it (not adopted) */
	bool mode_mismatch;	/* attached in another mode than configured, and that mode failed */
	bool hook_mismatch;	/* attached at the other hook than configured, and that hook failed */
	bool gro_warned;	/* said that generic mode with GRO on undercounts packet rules */
	bool not_first;		/* at tc, another program runs before it in the tcx chain (said once) */
	bool order_unknown;	/* at tc, the chain cannot be read (said once) */
	__u32 tc_position;	/* at the last look: its place in the tcx chain (0: unknown) */
};

/* the served interfaces and the pins (iface.c) */
struct rld_ifaces {
	struct xrl_iface_cfg *cfg;	/* served interfaces */
	struct iface_state *st;		/* one per served interface */
	size_t n;
	bool pins_broken;		/* the last pin check failed and was logged */
};

/* the configuration applied (reload.c) */
struct rld_applied {
	time_t at;			/* wall clock of the last applied config */
	char sha256[65];		/* of the file applied */
};

/* the heartbeat thread (heartbeat.c); it takes no lock but its thread's:
 * it reads its settings atomically */
struct rld_heartbeat {
	struct rld_thread thread;
	long heartbeat_ms, watchdog_ms;	/* atomic */
	long busy_ms;		/* atomic: when the event loop's current turn began; 0: idle in poll */
};

/* /metrics (metrics.c): the server, where it serves ("": nowhere, "off")
 * and the file's metrics line as last read; the keys tracked, counted
 * outside the daemon's lock (keys_lock: one walk at a time) */
struct rld_metrics {
	struct xrl_metrics *server;
	char addr[80], file_line[80];
	pthread_mutex_t keys_lock;
	unsigned long long keys[2];
	double keys_at_ms;		/* 0: never counted */
	int runtime_fd;			/* BPF_STATS_RUN_TIME: enabled while open, for the daemon's life */
	/* /api/v1/top: the last walk, its time and the answer made of it
	 * (api.c; top_lock: one walk at a time) */
	pthread_mutex_t top_lock;
	struct xrl_top_snap top_prev;
	double top_at_ms;		/* 0: never walked */
	char *top_body;
	size_t top_len;
};

/* live events: the daemon's ring, read by the event loop (events.c) */
struct rld_events {
	struct xrl_events *ring;
	double log_tat;			/* the log's rate: GCRA state, ms */
	unsigned long long unlogged;	/* since the last "not logged" line */
};

/* fleet-wide rules: the sync thread (fleet.c); client NULL: no 'fleet redis' */
struct rld_fleet {
	struct xrl_fleet *client;
	struct rld_thread thread;
	char lines[600];		/* the fleet lines in force */
	char where[400];		/* their Redis and host name */
};

/* the CrowdSec follower (crowdsec.c); client NULL: no 'crowdsec' line */
struct rld_cs {
	struct xrl_cs *client;
	struct rld_thread thread;
	char line[PATH_MAX + 200];	/* the crowdsec line in force */
};

/* xdp-rld --suggest (suggest.c): the sampler thread; its lock guards the
 * rules' records in st, which the metrics read; st NULL: not recording */
#define XRL_RLD_SG_MAX_KEYS	65536	/* keys of a span, all rules together */
struct sg_state;
struct rld_suggest {
	struct rld_thread thread;
	struct sg_state *st;
};

/* the log queue (logq.c) */
#define LOGQ_LINES	256
#define LOGQ_LINE	1100
struct rld_logq {
	struct rld_thread thread;	/* its lock guards the queue */
	bool journal;			/* lines carry a <N> level prefix */
	char lines[LOGQ_LINES][LOGQ_LINE];
	unsigned head, count;
	unsigned long long dropped;	/* since the last "dropped" line */
	unsigned long long dropped_total;	/* atomic: for the metrics */
};

/*
 * The daemon: made by main() and handed to each part. `lock` serialises map
 * reads by the metrics thread with the event loop's rule changes, and
 * guards `stats` (what the metrics show of the daemon) and fleet.client.
 */
struct rld {
	struct rld_opts opt;
	struct xrl *x;
	pthread_mutex_t lock;
	struct xrl_daemon_stats stats;
	struct rld_ifaces ifs;
	struct rld_applied applied;
	struct rld_heartbeat hb;
	struct rld_metrics metrics;
	struct rld_events ev;
	struct rld_fleet fleet;
	struct rld_cs cs;
	struct rld_logq log;
	struct rld_suggest suggest;
};

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

/* reload.c: read the configuration, apply it, watch the file */
int read_config(struct rld *r, struct xrl_config *c, bool as_log, bool first, bool *builtin);
long pick(long flag, long file, long def);
int apply(struct rld *r, struct xrl_config *c, const char *what);
/* set NAME file PATH lines: the files read whole (nothing applied on an
 * error); freed; the housekeeping tick's sweep of expired elements */
int read_sets(const struct xrl_config *c, struct xrl_set_list **out, bool as_log);
void free_sets(const struct xrl_config *c, struct xrl_set_list *l);
void sweep_sets(struct rld *r);
void reload(struct rld *r, const char *why);
int watch_config(struct rld *r, int ifd);
bool config_event(struct rld *r, int ifd);

/* iface.c */
bool has_link_pin(struct rld *r, const char *ifname);
void count_attached(struct rld *r);
void serve_iface(struct rld *r, size_t i);
void unserve_iface(struct rld *r, const char *name);
/* served interfaces that exist and could not be attached: their count,
 * and " d1 d2" */
size_t ifaces_failed(struct rld *r, char *names, size_t len);
void serves_sync(struct rld *r);
int ifaces_held(struct rld *r, const struct xrl_config *c, bool check);
int set_ifaces(struct rld *r, const struct xrl_config *c, struct xrl_iface_cfg **out, size_t *n);
/* an xrl_linkmon_read() callback: ctx is the struct rld */
void on_link(const struct xrl_link_event *ev, void *ctx);
int check_pins(struct rld *r);

/* logq.c: the log sink; lines are written by a thread of their own */
void logq_init(struct rld *r);
int logq_start(struct rld *r);
/* 0 once the queue is written and its thread gone */
int logq_stop(struct rld *r);

/* caps.c: keep CAP_BPF only (permitted, effective,
 * bounding: the calling thread); drop every capability of the calling
 * thread; empty its effective set, or raise it again from its permitted */
int caps_keep(char *kept, size_t len, bool net_admin);
int caps_thread_none(void);
int caps_effective(bool on);

/* metrics.c: serve metrics where the configuration says (file: its metrics
 * line, "" when it has none); a change is applied or refused, and logged.
 * Called by the event loop only (start, reloads). */
void metrics_set(struct rld *r, const char *file, const char *why);
/* api.c: the body of an /api/v1/ page or of the status page */
int api_fill(struct rld *r, FILE *f, enum xrl_http_page page);
void api_free(struct rld *r);

/* events.c: the daemon's ring of live events */
#define EVENT_LOG_PER_SEC	10	/* event lines a second, at most ... */
#define EVENT_LOG_BURST		20	/* ... after a burst of this many */
int events_start(struct rld *r);
void events_read(struct rld *r);
void events_tick(struct rld *r);
/* Once a second: reclaim the bans past their end, said in the log. */
void bans_tick(struct rld *r);
void events_stop(struct rld *r);

/* fleet.c: the sync thread; fleet_rules() after each commit */
int fleet_start(struct rld *r, const struct xrl_config *c);
void fleet_rules(struct rld *r);
/* a reload's fleet lines, applied with it, all-or-nothing: prepare before
 * the rules (a new client that answers, or the reload is refused), commit
 * once they are applied (the old client stopped, the new one started) */
int fleet_reload_prepare(struct rld *r, const struct xrl_config *c, struct xrl_fleet **next, bool *changed);
void fleet_reload_commit(struct rld *r, const struct xrl_config *c, struct xrl_fleet *next);
void fleet_stop(struct rld *r, bool leave);
/* the xdp_rl_fleet_* metrics (nothing without 'fleet redis') */
struct prom;
void fleet_metrics(struct rld *r, struct prom *p);

/* crowdsec.c: the follower for the config's crowdsec line (*out NULL
 * without one; -1 logged: its key unreadable), started with its thread
 * (the line remembered either way), whether a reload's line differs, the
 * follower stopped and freed (without r->lock), its metrics */
int crowdsec_open(struct rld *r, const struct xrl_config *c, struct xrl_cs **out);
void crowdsec_start(struct rld *r, const struct xrl_config *c, struct xrl_cs *next);
bool crowdsec_changed(struct rld *r, const struct xrl_config *c);
void crowdsec_stop(struct rld *r);
/* a reload's changed line: the old follower stopped, next (NULL: no line
 * any more) started */
void crowdsec_reload_commit(struct rld *r, const struct xrl_config *c, struct xrl_cs *next);
void crowdsec_metrics(struct rld *r, struct prom *p);
/* suggest.c: the sampler thread (nothing without --suggest), and its
 * xdp_rl_suggest_* metrics, written with the daemon's lock held */
int suggest_start(struct rld *r);
void suggest_stop(struct rld *r);
void suggest_metrics(struct rld *r, struct prom *p);

/* heartbeat.c */
void heartbeat(struct rld *r);
int heartbeat_start(struct rld *r);
void heartbeat_stop(struct rld *r);
void heartbeat_kick(struct rld *r);

#endif
