// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The fleet's sync thread: one xrl_fleet_sync() every `sync` ms, on a
 * thread of its own, so that Redis' latency never delays the heartbeat,
 * the metrics or a reload (libxrl's fleet.c does the work).
 */
#include "rld.h"
#include "prom.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static void *fleet_main(void *arg)
{
	struct rld *r = arg;
	struct rld_thread *t = &r->fleet.thread;
	/* the client this thread was started for: fleet.client changes only
	 * once the thread is joined (fleet_stop()) */
	struct xrl_fleet *fl = r->fleet.client;
	struct timespec next;
	int last = 0;

	/* Redis, the pinned maps and the rule sets (opened by pin or through
	 * the handle's descriptors) need no capability */
	caps_thread_none();
	pthread_mutex_lock(&t->lock);
	while (!t->stop) {
		int err;

		pthread_mutex_unlock(&t->lock);
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
		pthread_mutex_lock(&t->lock);
		rld_thread_wait(t, &next);
	}
	pthread_mutex_unlock(&t->lock);
	return NULL;
}

/* The rules in force, to the fleet. */
void fleet_rules(struct rld *r)
{
	struct xrl_rule_entry *v;
	size_t n;

	if (!r->fleet.client || xrl_rules_get(r->x, &v, &n))
		return;
	xrl_fleet_rules_set(r->fleet.client, v, n);
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
static void fleet_unshare(struct rld *r)
{
	const struct xrl_fleet_rule none = { 0 };
	struct xrl_rule_entry *v;
	size_t n;

	if (xrl_rules_get(r->x, &v, &n))
		return;
	for (size_t i = 0; i < n; i++)
		if (v[i].r.scope == XRL_SCOPE_FLEET)
			xrl_fleet_rule_put(r->x, v[i].r.slot, &none);
	free(v);
}

/* A client for the config's fleet lines (nothing connects yet). */
static int fleet_open(struct rld *r, const struct xrl_config *c, struct xrl_fleet **out)
{
	if (xrl_fleet_new(r->x, &c->fleet, out)) {
		xrl_log(XRL_LOG_ERR, "fleet: %s", xrl_errmsg());
		return -1;
	}
	/* its ban writes beside the event loop's (sweeps, reloads) */
	xrl_fleet_set_bans_lock(*out, &r->lock);
	return 0;
}

/* fleet.client's sync thread, started. */
static int fleet_run(struct rld *r, const struct xrl_config *c)
{
	int err;

	fleet_rules(r);
	err = rld_thread_start(&r->fleet.thread, "fleet sync", fleet_main, r);
	if (err) {
		xrl_fleet_free(r->fleet.client);
		r->fleet.client = NULL;
		return err;
	}
	xrl_log(XRL_LOG_INFO, "fleet: Redis%s %s, sync %ld ms, lease %ld ms, host %s",
		c->fleet.cluster ? " Cluster" : "", c->fleet.redis, xrl_fleet_sync_ms(r->fleet.client),
		xrl_fleet_lease_ms(xrl_fleet_sync_ms(r->fleet.client)), c->fleet.host[0] ? c->fleet.host : "(hostname)");
	return 0;
}

/*
 * A reload's fleet lines, before its rules are applied (all-or-nothing):
 * unchanged, nothing to do (*next stays NULL, returns 0); changed, a client
 * for the new lines that has answered a PING (AUTH included) in *next, or
 * -1 with the reason logged: the reload is refused and the old client,
 * rules and all, stays. No 'fleet redis' line any more: changed, no client.
 */
int fleet_reload_prepare(struct rld *r, const struct xrl_config *c, struct xrl_fleet **next, bool *changed)
{
	char now[sizeof(r->fleet.lines)];

	*next = NULL;
	fleet_lines(c, now, sizeof(now));
	*changed = strcmp(now, r->fleet.lines) != 0;
	if (!*changed || !c->fleet.redis[0])
		return 0;
	if (fleet_open(r, c, next))
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
void fleet_reload_commit(struct rld *r, const struct xrl_config *c, struct xrl_fleet *next)
{
	char now[sizeof(r->fleet.lines)], where[sizeof(r->fleet.where)];
	bool leave;

	fleet_lines(c, now, sizeof(now));
	fleet_where(c, where, sizeof(where));
	/* the same Redis and host name: staying spares the others a dip in N */
	leave = !next || strcmp(where, r->fleet.where);
	/* the old client stopped and gone before the new one starts (they
	 * share the lease slots), with r->lock held only around the swaps:
	 * the sync thread's join and the leave wait on the network */
	fleet_stop(r, leave);
	pthread_mutex_lock(&r->lock);	/* the metrics read r->fleet.client under it */
	if (!next && c->fleet.redis[0] == '\0')
		fleet_unshare(r);
	r->fleet.client = next;
	snprintf(r->fleet.lines, sizeof(r->fleet.lines), "%s", now);
	snprintf(r->fleet.where, sizeof(r->fleet.where), "%s", where);
	if (next && fleet_run(r, c))
		xrl_log(XRL_LOG_ERR, "reload: fleet: cannot start the sync thread: rules of scope fleet stay at their last state");
	pthread_mutex_unlock(&r->lock);
	xrl_log(XRL_LOG_INFO, "reload: fleet lines applied: %s",
		next ? "a new Redis client" : "no 'fleet redis' line: each host meters its fleet rules alone");
}

int fleet_start(struct rld *r, const struct xrl_config *c)
{
	fleet_lines(c, r->fleet.lines, sizeof(r->fleet.lines));
	fleet_where(c, r->fleet.where, sizeof(r->fleet.where));
	if (!c->fleet.redis[0]) {
		for (size_t i = 0; i < c->nrules; i++) {
			if (c->rules[i].r.scope == XRL_SCOPE_FLEET) {
				xrl_log(XRL_LOG_WARN, "rules of scope fleet but no 'fleet redis' line: each host meters them alone, at the whole rate");
				break;
			}
		}
		return 0;
	}
	if (fleet_open(r, c, &r->fleet.client))
		return -1;
	return fleet_run(r, c);
}

/*
 * The sync thread stopped and the client freed. The batch running is cut
 * short (xrl_fleet_abort()), so the join waits some milliseconds, never a
 * server; the leave is one batch, bounded by its deadline. Called without
 * r->lock: it takes it only to clear r->fleet.client.
 */
void fleet_stop(struct rld *r, bool leave)
{
	struct xrl_fleet *f = r->fleet.client;

	if (!f)
		return;
	if (r->fleet.thread.started) {
		xrl_fleet_abort(f, true);
		rld_thread_stop(&r->fleet.thread, 0);
		xrl_fleet_abort(f, false);
	}
	pthread_mutex_lock(&r->lock);
	r->fleet.client = NULL;
	pthread_mutex_unlock(&r->lock);
	if (leave)
		xrl_fleet_leave(f);
	xrl_fleet_free(f);
}

void fleet_metrics(struct rld *r, struct prom *p)
{
	static const char *const breaker[] = { "closed", "open", "half-open" };
	static const char *const states[] = { "unsynced", "synced", "fallback-open", "closed",
					      "never-synced" };
	struct xrl_rule_entry *v;
	struct xrl_fleet_stats st;
	size_t n;

	if (!r->fleet.client)
		return;
	xrl_fleet_stats_get(r->fleet.client, &st);
	prom_family(p, "xdp_rl_fleet_syncs_total", "counter",
		    "Syncs with Redis, by result (skipped: the breaker was open).");
	prom_sample(p, PROM_LABELS("result", "ok"), "%llu", st.syncs_ok);
	prom_sample(p, PROM_LABELS("result", "failed"), "%llu", st.syncs_failed);
	prom_sample(p, PROM_LABELS("result", "skipped"), "%llu", st.syncs_skipped);
	prom_family(p, "xdp_rl_fleet_sync_duration_seconds", "histogram",
		    "How long each sync (one pipelined batch) took.");
	for (int i = 0; i < XRL_FLEET_LAT_BUCKETS; i++) {
		char le[32];

		snprintf(le, sizeof(le), "%g", xrl_fleet_lat_bounds[i]);
		prom_sample_of(p, "_bucket", PROM_LABELS("le", le), "%llu", st.lat_le[i]);
	}
	prom_sample_of(p, "_bucket", PROM_LABELS("le", "+Inf"), "%llu", st.lat_count);
	prom_sample_of(p, "_sum", NULL, "%.6f", st.lat_sum_s);
	prom_sample_of(p, "_count", NULL, "%llu", st.lat_count);
	prom_family(p, "xdp_rl_fleet_last_sync_duration_seconds", "gauge", "The last sync's duration.");
	prom_sample(p, NULL, "%.6f", st.last_latency_s);
	prom_family(p, "xdp_rl_fleet_last_sync_age_seconds", "gauge",
		    "Seconds since the last good sync (-1: none yet).");
	prom_sample(p, NULL, "%.3f", st.last_ok_ms ? (now_ms() - st.last_ok_ms) / 1e3 : -1.0);
	prom_family(p, "xdp_rl_fleet_breaker_state", "gauge", "The Redis circuit breaker: 1 for its state.");
	for (int i = 0; i < 3; i++)
		prom_sample(p, PROM_LABELS("state", breaker[i]), "%d", st.breaker == i);
	prom_family(p, "xdp_rl_fleet_live_hosts", "gauge", "Live hosts in the fleet, as last read from Redis.");
	prom_sample(p, NULL, "%u", st.hosts);
	prom_family(p, "xdp_rl_fleet_promoted_keys", "gauge", "Keys holding a lease.");
	prom_sample(p, NULL, "%u", st.promoted);
	prom_family(p, "xdp_rl_fleet_tokens_total", "counter",
		    "Lease tokens: granted by Redis, returned unspent, expired unspent.");
	prom_sample(p, PROM_LABELS("kind", "granted"), "%llu", st.granted);
	prom_sample(p, PROM_LABELS("kind", "returned"), "%llu", st.returned);
	prom_sample(p, PROM_LABELS("kind", "expired"), "%llu", st.expired);
	prom_family(p, "xdp_rl_fleet_lease_calls_total", "counter",
		    "Lease script calls sent to Redis (one per promoted key per sync).");
	prom_sample(p, NULL, "%llu", st.lease_calls);
	prom_family(p, "xdp_rl_fleet_buckets_lost_total", "counter",
		    "Lease calls that found a fleet bucket gone that this host had been granted from (FLUSHALL, eviction, a restart): taken as spent.");
	prom_sample(p, NULL, "%llu", st.buckets_lost);
	prom_family(p, "xdp_rl_fleet_hot_keys_ignored_total", "counter",
		    "Hot-set reply elements past the bound a host takes.");
	prom_sample(p, NULL, "%llu", st.hot_ignored);
	if (st.policy[0]) {	/* read once connected */
		prom_family(p, "xdp_rl_fleet_redis_evicts", "gauge",
			    "1 when Redis' maxmemory-policy may evict fleet keys (or could not be read: unknown), 0 under noeviction or no maxmemory.");
		prom_sample(p, PROM_LABELS("policy", st.policy), "%d", st.may_evict);
	}
	prom_family(p, "xdp_rl_fleet_redis_redirects_total", "counter",
		    "Cluster redirections followed, and TRYAGAIN/CLUSTERDOWN failures.");
	prom_sample(p, PROM_LABELS("kind", "moved"), "%llu", st.redis.moved);
	prom_sample(p, PROM_LABELS("kind", "ask"), "%llu", st.redis.ask);
	prom_sample(p, PROM_LABELS("kind", "tryagain"), "%llu", st.redis.tryagain);
	prom_sample(p, PROM_LABELS("kind", "noscript"), "%llu", st.redis.noscript);
	prom_family(p, "xdp_rl_fleet_redis_refused_total", "counter",
		    "What the client refused or cut short: exchanges past a deadline, malformed or out-of-range replies, replies over a cap, calls not sent to a node in back-off, syncs longer than a lease, grants clamped to what was asked.");
	prom_sample(p, PROM_LABELS("kind", "deadline"), "%llu", st.redis.deadline);
	prom_sample(p, PROM_LABELS("kind", "bad_reply"), "%llu", st.redis.bad_replies + st.bad_replies);
	prom_sample(p, PROM_LABELS("kind", "too_large"), "%llu", st.redis.too_large);
	prom_sample(p, PROM_LABELS("kind", "backoff"), "%llu", st.redis.backoff);
	prom_sample(p, PROM_LABELS("kind", "late_sync"), "%llu", st.late);
	prom_sample(p, PROM_LABELS("kind", "grant_clamped"), "%llu", st.clamped);
	prom_family(p, "xdp_rl_fleet_bans_total", "counter",
		    "Fleet-wide bans: published to Redis, withdrawn from it (lifted here before their end), set here from it, lifted here (withdrawn by a host: a tombstone).");
	prom_sample(p, PROM_LABELS("kind", "published"), "%llu", st.bans_published);
	prom_sample(p, PROM_LABELS("kind", "withdrawn"), "%llu", st.bans_withdrawn);
	prom_sample(p, PROM_LABELS("kind", "set"), "%llu", st.bans_set);
	prom_sample(p, PROM_LABELS("kind", "lifted"), "%llu", st.bans_lifted);
	prom_family(p, "xdp_rl_fleet_rule_state", "gauge", "Each fleet rule's state: 1 for the current one.");
	if (xrl_rules_get(r->x, &v, &n))
		return;
	for (size_t i = 0; i < n; i++) {
		struct xrl_fleet_rule fr = { 0 };
		char id[16];

		if (v[i].r.scope != XRL_SCOPE_FLEET)
			continue;
		if (xrl_fleet_rule_get(r->x, v[i].r.slot, &fr) || fr.rule_id != v[i].r.id)
			fr.state = XRL_FLEET_UNSYNCED;
		snprintf(id, sizeof(id), "%u", v[i].r.id);
		for (int s = 0; s < 5; s++)
			prom_sample(p, PROM_LABELS("rule", id, "state", states[s]), "%d",
				    (fr.state & XRL_FLEET_STATE_MASK) == (__u32)s);
	}
	free(v);
}
