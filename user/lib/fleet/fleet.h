/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Fleet-wide limits (README, "Fleet-wide limits"): the daemon's side.
 *
 * One sync (xrl_fleet_sync(), every `sync` ms, from a thread of its own):
 *   1. register this host in the set of live hosts (a sorted set whose
 *      scores are each host's expiry, by Redis' clock) and read N;
 *   2. promote the candidates the data path inserted (keys its share
 *      dropped) to a lease slot;
 *   3. for each promoted key, one call of the lease script (EVALSHA, hash-
 *      tagged key {xrl:RULE:KEY}): give back the leftover of the lease
 *      before last, take a new grant from the fleet GCRA, by Redis' TIME;
 *   4. swap each lease: the new expiry, then the new credit by an atomic
 *      exchange whose old value is the leftover to give back next time
 *      (an expired one is gone, not given back: it was never spendable);
 *   5. write each fleet rule's share (rate / N, burst / N) and state.
 * All calls of one sync are one pipelined batch per node. One exchange
 * with a node ends within `timeout` ms, the sync's batches within
 * xrl_fleet_batch_ms(); a sync longer than a lease fails. Three failed
 * syncs in a row open the breaker: no calls until a back-off (100 ms,
 * doubling to 800 ms) has passed, then one probe.
 */
#ifndef XRL_FLEET_H
#define XRL_FLEET_H

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include "xdp_rl_common.h"
#include "fleet/redis_cluster.h"
#include "fleet/view.h"

struct xrl;
struct xrl_key;
struct xrl_rule_entry;

#define XRL_FLEET_SYNC_MS	100	/* default sync interval */
#define XRL_FLEET_TIMEOUT_MS	5	/* default per-call timeout */
#define XRL_FLEET_HOSTS		2	/* default 'hosts': a fleet is at least two */
#define XRL_FLEET_HOST_TTL_MS	2000	/* at least: xrl_fleet_host_ttl_ms() */
#define XRL_FLEET_BREAKER_FAILS	3
#define XRL_FLEET_BACKOFF_MIN_MS 100
#define XRL_FLEET_BACKOFF_MAX_MS 800	/* Redis back: leases resume within a second */
#define XRL_FLEET_IDLE_SYNCS	20	/* a promoted key spending nothing this long goes back */
#define XRL_FLEET_LAT_BUCKETS	10
#define XRL_FLEET_POLICY_SYNCS	100	/* the server's eviction policy is read again this often */
#define XRL_FLEET_HOT_MAX	1024	/* keys a rule's hot set keeps, and a host takes of it */
#define XRL_FLEET_HASH		4096	/* buckets of the index of promoted keys (a power of 2) */

/* The client's settings: struct xrl_fleet_settings, declared once for
 * the configuration's lines and the client. */
#include "model/fleet_settings.h"

/* The lease: what a grant may be spent for. Worst-case overshoot (README):
 * B + R * (W + lease) + B + R * promote, promote <= 2 sync. */
static inline long xrl_fleet_lease_ms(long sync_ms)
{
	return 2 * sync_ms + 50;
}

/* One sync's batches as a whole: half a lease. Syncs start every sync_ms
 * from the last one's start (at once when it took longer), so a lease
 * granted at a sync's start is renewed before it runs out: by the next
 * start + its batch, sync + lease / 2 <= lease, or two slow syncs in a row,
 * lease / 2 + lease / 2. A sync that takes longer than a lease is failed,
 * and grants nothing spendable. */
static inline long xrl_fleet_batch_ms(long sync_ms)
{
	return xrl_fleet_lease_ms(sync_ms) / 2;
}

/* A host not heard of for this long is gone, and every call keeps a key
 * this long: 2 s, or two leases and a batch at a long sync (a host or key
 * must outlive the gap between its own syncs, late ones included, or N is
 * undercounted between them). */
static inline long xrl_fleet_host_ttl_ms(long sync_ms)
{
	long t = 2 * xrl_fleet_lease_ms(sync_ms) + xrl_fleet_batch_ms(sync_ms);

	return t > XRL_FLEET_HOST_TTL_MS ? t : XRL_FLEET_HOST_TTL_MS;
}

/* A key granted this recently must still be in Redis: longer than a sync
 * (the last grant is this old at the next one), shorter than the TTL each
 * call gives it. 1 s at the default sync. */
static inline long xrl_fleet_known_ms(long sync_ms)
{
	return xrl_fleet_host_ttl_ms(sync_ms) / 2;
}

#define XRL_FLEET_MAX_HOSTS	65536	/* a larger live-host count is a bad reply */

enum xrl_breaker { XRL_BREAKER_CLOSED, XRL_BREAKER_OPEN, XRL_BREAKER_HALF_OPEN };

struct xrl_fleet_stats {
	unsigned long long syncs_ok, syncs_failed, syncs_skipped;
	unsigned long long lat_le[XRL_FLEET_LAT_BUCKETS];	/* cumulative, le xrl_fleet_lat_bounds */
	unsigned long long lat_count;
	double lat_sum_s;
	double last_latency_s;
	double last_ok_ms;		/* CLOCK_MONOTONIC ms of the last good sync; 0: never */
	int breaker;			/* enum xrl_breaker */
	unsigned hosts;
	unsigned promoted, candidates_full;
	unsigned long long hot_ignored;
	unsigned long long buckets_lost;	/* lease calls that found a known key gone */
	char policy[32];		/* the server's maxmemory-policy; "": not read yet,
					 * "unknown": CONFIG and INFO refused */
	long long maxmemory;		/* its maxmemory, bytes (0: no limit) */
	bool may_evict;			/* a policy that evicts, under a memory limit (or unknown) */	/* hot-set reply elements past XRL_FLEET_HOT_MAX */
	unsigned long long lease_calls;	/* lease script calls sent */
	unsigned long long granted, returned, expired;
	unsigned long long bad_replies;	/* script replies of the wrong type or out of range */
	unsigned long long clamped;	/* grants outside [0, asked], clamped */
	unsigned long long late;	/* syncs that took longer than a lease: failed */
	/* fleet-wide bans: published to Redis, withdrawn (lifted here before
	 * their end), set here from Redis, lifted here (gone from Redis) */
	unsigned long long bans_published, bans_withdrawn, bans_set, bans_lifted;
	struct xrl_redis_stats redis;
	char last_error[96];
};

extern const double xrl_fleet_lat_bounds[XRL_FLEET_LAT_BUCKETS];	/* seconds */

struct xrl_fleet;

/* Read the credentials and open the client (no connection yet). */
/* A lock the sync thread holds while it writes bans (never across the
 * network): the daemon's, which its other writers of maps take. */
void xrl_fleet_set_bans_lock(struct xrl_fleet *f, pthread_mutex_t *m);
int xrl_fleet_new(struct xrl *x, const struct xrl_fleet_settings *cfg, struct xrl_fleet **out);
/* The 'fleet auth' file as xrl_fleet_new() reads it (a regular file, not
 * readable by everyone, a password): 0, or an error with xrl_errmsg()
 * saying why. Nothing is kept. */
int xrl_fleet_auth_check(const char *path);
void xrl_fleet_free(struct xrl_fleet *f);
/* The active rule set (after a commit): its fleet rules are synced, their
 * shares written at once. */
int xrl_fleet_rules_set(struct xrl_fleet *f, const struct xrl_rule_entry *v, size_t n);
/* One sync: 0, or a negative errno when Redis failed it (or the breaker
 * skipped it). */
int xrl_fleet_sync(struct xrl_fleet *f);
/* From another thread: cut the sync running now short (true), and fail
 * every later one at once, until called with false. */
void xrl_fleet_abort(struct xrl_fleet *f, bool stop);
/* Leave the set of live hosts (a clean stop). */
void xrl_fleet_leave(struct xrl_fleet *f);
/* One PING through the client (AUTH included): 0 when Redis answers, else
 * a negative errno with xrl_errmsg() saying why. */
int xrl_fleet_probe(struct xrl_fleet *f);
void xrl_fleet_stats_get(struct xrl_fleet *f, struct xrl_fleet_stats *s);
long xrl_fleet_sync_ms(const struct xrl_fleet *f);

/* The maps of the fleet (fleet_map.c): the promoted and candidate keys
 * (lease_slot XRL_FLEET_PENDING: a candidate), each rule slot's share and
 * state, and the leases' mmap (NULL on failure). */
int xrl_fleet_key_put(struct xrl *x, const struct xrl_key *k, __u32 lease_slot);
int xrl_fleet_key_get(struct xrl *x, const struct xrl_key *k, __u32 *lease_slot);
int xrl_fleet_key_del(struct xrl *x, const struct xrl_key *k);
int xrl_fleet_rule_put(struct xrl *x, __u32 slot, const struct xrl_fleet_rule *fr);
struct xrl_lease *xrl_fleet_leases(struct xrl *x);

#endif
