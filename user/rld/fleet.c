// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The fleet's sync thread: one xrl_fleet_sync() every `sync` ms, on a
 * thread of its own, so that Redis' latency never delays the heartbeat,
 * the metrics or a reload (libxrl's fleet.c does the work).
 */
#include "rld.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static void *fleet_main(void *arg)
{
	struct xrl_fleet *fl = arg;	/* never d.fleet: a reload swaps it */
	struct timespec next;
	int last = 0;

	/* Redis, the pinned maps and the rule sets (opened by pin or through
	 * the handle's descriptors) need no capability */
	caps_thread_none();
	pthread_mutex_lock(&d.fleet_lock);
	while (!d.fleet_stop) {
		int err;

		pthread_mutex_unlock(&d.fleet_lock);
		/* the next one sync_ms after this one's start (xrl_fleet_batch_ms()
		 * says why) */
		clock_gettime(CLOCK_MONOTONIC, &next);
		next.tv_nsec += xrl_fleet_sync_ms(fl) * 1000000L;
		next.tv_sec += next.tv_nsec / 1000000000L;
		next.tv_nsec %= 1000000000L;
		err = xrl_fleet_sync(fl);
		if (err != last && err != -EAGAIN) {
			struct xrl_fleet_stats st;

			xrl_fleet_stats_get(fl, &st);
			if (err)
				xrl_log(XRL_LOG_WARN, "fleet: sync failed (%s): rules follow on-failure as their leases run out",
					st.last_error[0] ? st.last_error : strerror(-err));
			else
				xrl_log(XRL_LOG_INFO, "fleet: synced with Redis, %u live host(s)", st.hosts);
			last = err;
		}
		pthread_mutex_lock(&d.fleet_lock);
		if (!d.fleet_stop)
			pthread_cond_timedwait(&d.fleet_cond, &d.fleet_lock, &next);
	}
	pthread_mutex_unlock(&d.fleet_lock);
	return NULL;
}

/* The rules in force, to the fleet. */
void fleet_rules(void)
{
	struct xrl_rule_entry *v;
	size_t n;

	if (!d.fleet || xrl_rules_get(d.x, &v, &n))
		return;
	xrl_fleet_rules_set(d.fleet, v, n);
	free(v);
}

static void fleet_lines(const struct xrl_config *c, char *buf, size_t len)
{
	snprintf(buf, len, "%s|%d|%ld|%ld|%ld|%s|%s", c->fleet.redis, c->fleet.cluster, c->fleet.sync_ms,
		 c->fleet.timeout_ms, c->fleet.hosts, c->fleet.host, c->fleet.auth_file);
}

/* Which Redis, which host: a change means leaving the old set of hosts. */
static void fleet_where(const struct xrl_config *c, char *buf, size_t len)
{
	snprintf(buf, len, "%s|%d|%s", c->fleet.redis, c->fleet.cluster, c->fleet.host);
}

/* No fleet any more: every rule of scope fleet back to the rule as it is
 * (no share written), as at a start without 'fleet redis'. */
static void fleet_unshare(void)
{
	const struct xrl_fleet_rule none = { 0 };
	struct xrl_rule_entry *v;
	size_t n;

	if (xrl_rules_get(d.x, &v, &n))
		return;
	for (size_t i = 0; i < n; i++)
		if (v[i].r.scope == XRL_SCOPE_FLEET)
			xrl_fleet_rule_put(d.x, v[i].r.slot, &none);
	free(v);
}

/* A client for the config's fleet lines (nothing connects yet). */
static int fleet_open(const struct xrl_config *c, struct xrl_fleet **out)
{
	if (xrl_fleet_new(d.x, &c->fleet, out)) {
		xrl_log(XRL_LOG_ERR, "fleet: %s", xrl_errmsg());
		return -1;
	}
	return 0;
}

/* d.fleet's sync thread, started. */
static int fleet_run(const struct xrl_config *c)
{
	static bool once;
	pthread_condattr_t ca;
	int err;

	fleet_rules();
	if (!once) {
		pthread_mutex_init(&d.fleet_lock, NULL);
		pthread_condattr_init(&ca);
		pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
		pthread_cond_init(&d.fleet_cond, &ca);
		pthread_condattr_destroy(&ca);
		once = true;
	}
	d.fleet_stop = false;
	err = pthread_create(&d.fleet_thread, NULL, fleet_main, d.fleet);
	if (err) {
		xrl_fleet_free(d.fleet);
		d.fleet = NULL;
		return -err;
	}
	d.fleet_started = true;
	xrl_log(XRL_LOG_INFO, "fleet: Redis%s %s, sync %ld ms, lease %ld ms, host %s",
		c->fleet.cluster ? " Cluster" : "", c->fleet.redis, xrl_fleet_sync_ms(d.fleet),
		xrl_fleet_lease_ms(xrl_fleet_sync_ms(d.fleet)), c->fleet.host[0] ? c->fleet.host : "(hostname)");
	return 0;
}

/*
 * A reload's fleet lines, before its rules are applied (all-or-nothing):
 * unchanged, nothing to do (*next stays NULL, returns 0); changed, a client
 * for the new lines that has answered a PING (AUTH included) in *next, or
 * -1 with the reason logged: the reload is refused and the old client,
 * rules and all, stays. No 'fleet redis' line any more: changed, no client.
 */
int fleet_reload_prepare(const struct xrl_config *c, struct xrl_fleet **next, bool *changed)
{
	char now[sizeof(d.fleet_lines)];

	*next = NULL;
	fleet_lines(c, now, sizeof(now));
	*changed = strcmp(now, d.fleet_lines) != 0;
	if (!*changed || !c->fleet.redis[0])
		return 0;
	if (fleet_open(c, next))
		return -1;
	if (xrl_fleet_probe(*next)) {
		xrl_log(XRL_LOG_ERR, "reload: fleet: %s; the fleet client in force stays", xrl_errmsg());
		xrl_fleet_free(*next);
		*next = NULL;
		return -1;
	}
	return 0;
}

/* The reload applied: the new client in place of the old one. The old
 * one leaves the live hosts when the new one is another host or Redis. */
void fleet_reload_commit(const struct xrl_config *c, struct xrl_fleet *next)
{
	char now[sizeof(d.fleet_lines)], where[sizeof(d.fleet_where)];
	bool leave;

	fleet_lines(c, now, sizeof(now));
	fleet_where(c, where, sizeof(where));
	/* the same Redis and host name: staying spares the others a dip in N */
	leave = !next || strcmp(where, d.fleet_where);
	/* the old client stopped and gone before the new one starts (they
	 * share the lease slots), with d.lock held only around the swaps:
	 * the sync thread's join and the leave wait on the network */
	fleet_stop(leave);
	pthread_mutex_lock(&d.lock);	/* the metrics read d.fleet under it */
	if (!next && c->fleet.redis[0] == '\0')
		fleet_unshare();
	d.fleet = next;
	snprintf(d.fleet_lines, sizeof(d.fleet_lines), "%s", now);
	snprintf(d.fleet_where, sizeof(d.fleet_where), "%s", where);
	if (next && fleet_run(c))
		xrl_log(XRL_LOG_ERR, "reload: fleet: cannot start the sync thread: rules of scope fleet stay at their last state");
	pthread_mutex_unlock(&d.lock);
	xrl_log(XRL_LOG_INFO, "reload: fleet lines applied: %s",
		next ? "a new Redis client" : "no 'fleet redis' line: each host meters its fleet rules alone");
}

int fleet_start(const struct xrl_config *c)
{
	fleet_lines(c, d.fleet_lines, sizeof(d.fleet_lines));
	fleet_where(c, d.fleet_where, sizeof(d.fleet_where));
	if (!c->fleet.redis[0]) {
		for (size_t i = 0; i < c->nrules; i++) {
			if (c->rules[i].r.scope == XRL_SCOPE_FLEET) {
				xrl_log(XRL_LOG_WARN, "rules of scope fleet but no 'fleet redis' line: each host meters them alone, at the whole rate");
				break;
			}
		}
		return 0;
	}
	if (fleet_open(c, &d.fleet))
		return -1;
	return fleet_run(c);
}

/*
 * The sync thread stopped and the client freed. The batch running is cut
 * short (xrl_fleet_abort()), so the join waits some milliseconds, never a
 * server; the leave is one batch, bounded by its deadline. Called without
 * d.lock: it takes it only to clear d.fleet.
 */
void fleet_stop(bool leave)
{
	struct xrl_fleet *f = d.fleet;

	if (!f)
		return;
	if (d.fleet_started) {
		xrl_fleet_abort(f, true);
		pthread_mutex_lock(&d.fleet_lock);
		d.fleet_stop = true;
		pthread_cond_signal(&d.fleet_cond);
		pthread_mutex_unlock(&d.fleet_lock);
		pthread_join(d.fleet_thread, NULL);
		d.fleet_started = false;
		xrl_fleet_abort(f, false);
	}
	pthread_mutex_lock(&d.lock);
	d.fleet = NULL;
	pthread_mutex_unlock(&d.lock);
	if (leave)
		xrl_fleet_leave(f);
	xrl_fleet_free(f);
}

void fleet_metrics(FILE *f)
{
	static const char *const breaker[] = { "closed", "open", "half-open" };
	static const char *const states[] = { "unsynced", "synced", "fallback-open", "closed",
					      "never-synced" };
	struct xrl_rule_entry *v;
	struct xrl_fleet_stats st;
	size_t n;

	if (!d.fleet)
		return;
	xrl_fleet_stats_get(d.fleet, &st);
	fprintf(f, "# HELP xdp_rl_fleet_syncs_total Syncs with Redis, by result (skipped: the breaker was open).\n"
		   "# TYPE xdp_rl_fleet_syncs_total counter\n");
	fprintf(f, "xdp_rl_fleet_syncs_total{result=\"ok\"} %llu\n", st.syncs_ok);
	fprintf(f, "xdp_rl_fleet_syncs_total{result=\"failed\"} %llu\n", st.syncs_failed);
	fprintf(f, "xdp_rl_fleet_syncs_total{result=\"skipped\"} %llu\n", st.syncs_skipped);
	fprintf(f, "# HELP xdp_rl_fleet_sync_duration_seconds How long each sync (one pipelined batch) took.\n"
		   "# TYPE xdp_rl_fleet_sync_duration_seconds histogram\n");
	for (int i = 0; i < XRL_FLEET_LAT_BUCKETS; i++)
		fprintf(f, "xdp_rl_fleet_sync_duration_seconds_bucket{le=\"%g\"} %llu\n",
			xrl_fleet_lat_bounds[i], st.lat_le[i]);
	fprintf(f, "xdp_rl_fleet_sync_duration_seconds_bucket{le=\"+Inf\"} %llu\n", st.lat_count);
	fprintf(f, "xdp_rl_fleet_sync_duration_seconds_sum %.6f\n", st.lat_sum_s);
	fprintf(f, "xdp_rl_fleet_sync_duration_seconds_count %llu\n", st.lat_count);
	fprintf(f, "# HELP xdp_rl_fleet_last_sync_duration_seconds The last sync's duration.\n"
		   "# TYPE xdp_rl_fleet_last_sync_duration_seconds gauge\n"
		   "xdp_rl_fleet_last_sync_duration_seconds %.6f\n", st.last_latency_s);
	fprintf(f, "# HELP xdp_rl_fleet_last_sync_age_seconds Seconds since the last good sync (-1: none yet).\n"
		   "# TYPE xdp_rl_fleet_last_sync_age_seconds gauge\n"
		   "xdp_rl_fleet_last_sync_age_seconds %.3f\n",
		st.last_ok_ms ? (now_ms() - st.last_ok_ms) / 1e3 : -1.0);
	fprintf(f, "# HELP xdp_rl_fleet_breaker_state The Redis circuit breaker: 1 for its state.\n"
		   "# TYPE xdp_rl_fleet_breaker_state gauge\n");
	for (int i = 0; i < 3; i++)
		fprintf(f, "xdp_rl_fleet_breaker_state{state=\"%s\"} %d\n", breaker[i], st.breaker == i);
	fprintf(f, "# HELP xdp_rl_fleet_live_hosts Live hosts in the fleet, as last read from Redis.\n"
		   "# TYPE xdp_rl_fleet_live_hosts gauge\n"
		   "xdp_rl_fleet_live_hosts %u\n", st.hosts);
	fprintf(f, "# HELP xdp_rl_fleet_promoted_keys Keys holding a lease.\n"
		   "# TYPE xdp_rl_fleet_promoted_keys gauge\n"
		   "xdp_rl_fleet_promoted_keys %u\n", st.promoted);
	fprintf(f, "# HELP xdp_rl_fleet_tokens_total Lease tokens: granted by Redis, returned unspent, expired unspent.\n"
		   "# TYPE xdp_rl_fleet_tokens_total counter\n");
	fprintf(f, "xdp_rl_fleet_tokens_total{kind=\"granted\"} %llu\n", st.granted);
	fprintf(f, "xdp_rl_fleet_tokens_total{kind=\"returned\"} %llu\n", st.returned);
	fprintf(f, "xdp_rl_fleet_tokens_total{kind=\"expired\"} %llu\n", st.expired);
	fprintf(f, "# HELP xdp_rl_fleet_lease_calls_total Lease script calls sent to Redis (one per promoted key per sync).\n"
		   "# TYPE xdp_rl_fleet_lease_calls_total counter\n"
		   "xdp_rl_fleet_lease_calls_total %llu\n", st.lease_calls);
	fprintf(f, "# HELP xdp_rl_fleet_buckets_lost_total Lease calls that found a fleet bucket gone that this host had been granted from (FLUSHALL, eviction, a restart): taken as spent.\n"
		   "# TYPE xdp_rl_fleet_buckets_lost_total counter\n"
		   "xdp_rl_fleet_buckets_lost_total %llu\n", st.buckets_lost);
	fprintf(f, "# HELP xdp_rl_fleet_hot_keys_ignored_total Hot-set reply elements past the bound a host takes.\n"
		   "# TYPE xdp_rl_fleet_hot_keys_ignored_total counter\n"
		   "xdp_rl_fleet_hot_keys_ignored_total %llu\n", st.hot_ignored);
	if (st.policy[0])	/* read once connected */
		fprintf(f, "# HELP xdp_rl_fleet_redis_evicts 1 when Redis' maxmemory-policy may evict fleet keys (or could not be read: unknown), 0 under noeviction or no maxmemory.\n"
			   "# TYPE xdp_rl_fleet_redis_evicts gauge\n"
			   "xdp_rl_fleet_redis_evicts{policy=\"%s\"} %d\n", st.policy, st.may_evict);
	fprintf(f, "# HELP xdp_rl_fleet_redis_redirects_total Cluster redirections followed, and TRYAGAIN/CLUSTERDOWN failures.\n"
		   "# TYPE xdp_rl_fleet_redis_redirects_total counter\n");
	fprintf(f, "xdp_rl_fleet_redis_redirects_total{kind=\"moved\"} %llu\n", st.redis.moved);
	fprintf(f, "xdp_rl_fleet_redis_redirects_total{kind=\"ask\"} %llu\n", st.redis.ask);
	fprintf(f, "xdp_rl_fleet_redis_redirects_total{kind=\"tryagain\"} %llu\n", st.redis.tryagain);
	fprintf(f, "xdp_rl_fleet_redis_redirects_total{kind=\"noscript\"} %llu\n", st.redis.noscript);
	fprintf(f, "# HELP xdp_rl_fleet_redis_refused_total What the client refused or cut short: exchanges past a deadline, malformed or out-of-range replies, replies over a cap, calls not sent to a node in back-off, syncs longer than a lease, grants clamped to what was asked.\n"
		   "# TYPE xdp_rl_fleet_redis_refused_total counter\n");
	fprintf(f, "xdp_rl_fleet_redis_refused_total{kind=\"deadline\"} %llu\n", st.redis.deadline);
	fprintf(f, "xdp_rl_fleet_redis_refused_total{kind=\"bad_reply\"} %llu\n",
		st.redis.bad_replies + st.bad_replies);
	fprintf(f, "xdp_rl_fleet_redis_refused_total{kind=\"too_large\"} %llu\n", st.redis.too_large);
	fprintf(f, "xdp_rl_fleet_redis_refused_total{kind=\"backoff\"} %llu\n", st.redis.backoff);
	fprintf(f, "xdp_rl_fleet_redis_refused_total{kind=\"late_sync\"} %llu\n", st.late);
	fprintf(f, "xdp_rl_fleet_redis_refused_total{kind=\"grant_clamped\"} %llu\n", st.clamped);
	fprintf(f, "# HELP xdp_rl_fleet_rule_state Each fleet rule's state: 1 for the current one.\n"
		   "# TYPE xdp_rl_fleet_rule_state gauge\n");
	if (xrl_rules_get(d.x, &v, &n))
		return;
	for (size_t i = 0; i < n; i++) {
		struct xrl_fleet_rule fr = { 0 };

		if (v[i].r.scope != XRL_SCOPE_FLEET)
			continue;
		if (xrl_fleet_rule_get(d.x, v[i].r.slot, &fr) || fr.rule_id != v[i].r.id)
			fr.state = XRL_FLEET_UNSYNCED;
		for (int s = 0; s < 5; s++)
			fprintf(f, "xdp_rl_fleet_rule_state{rule=\"%u\",state=\"%s\"} %d\n", v[i].r.id,
				states[s], (fr.state & XRL_FLEET_STATE_MASK) == (__u32)s);
	}
	free(v);
}
