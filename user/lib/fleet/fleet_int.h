/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The fleet client's own parts (fleet.c, lease.c, scripts.c): the client,
 * its rules and promoted keys.
 */
#ifndef XRL_FLEET_INT_H
#define XRL_FLEET_INT_H

#include <pthread.h>
#include "fleet/fleet.h"
#include "maps/internal.h"

#define HOSTS_KEY	"{xrl}:hosts"
#define BANS_KEY	"{xrl}:bans"	/* the fleet's bans (fleet_bans.c) */
#define XRL_FLEET_BANS_MAX	4096	/* bans the hash holds, at most */

/* a fleet ban as the sync thread last saw it */
struct fban {
	int family;
	__u8 prefix_len;
	__u8 addr[16];
	long long end_ms;	/* Redis' clock; 0: not read from Redis */
	__u64 expires_ns;	/* this host's own: its end (data-path clock) */
	char reason[XRL_BAN_REASON_LEN];	/* this host's own: as published */
	bool tomb;		/* the hash's: withdrawn, until end_ms */
};

struct frule {
	__u32 id, slot, gen;
	__u8 on_failure, key_len;
	__u64 count, period_ns, burst, interval;
};

struct fkey {
	bool used;
	bool live;		/* the map points the key at this slot */
	int family;
	__u8 addr[16];
	__u32 gen, rule_id, key_len;
	__u64 grant;		/* the credit given at the last swap */
	__u64 ret;		/* the leftover to give back at the next call */
	__u64 want;
	__u64 seen_ns;		/* data-path clock of its last grant; 0: none */
	int idle;
	char rkey[96];		/* {xrl:RULE:ADDR/LEN} */
};

struct xrl_fleet {
	struct xrl *x;
	struct xrl_fleet_settings cfg;
	struct xrl_redis *r;
	char user[128], pass[256];
	pthread_mutex_t lock;		/* pending, st */
	struct frule *rules;		/* the sync thread's own */
	size_t nrules;
	struct frule *pending;		/* a new rule set, taken at the next sync */
	size_t npending;
	bool has_pending;
	struct fkey keys[XRL_FLEET_SLOTS];
	/* the slots of the used keys by (family, gen, address): chains from
	 * a bucket of their hash, so that finding a key's slot is O(1), not a
	 * walk of every slot (a hot set of a thousand keys, each sync); and
	 * the free slots as a stack */
	int hash_head[XRL_FLEET_HASH];
	int hash_next[XRL_FLEET_SLOTS];
	int free_slot[XRL_FLEET_SLOTS];
	unsigned nfree;
	unsigned hosts;			/* 0: never heard */
	bool synced;			/* the last sync went through */
	int fails;			/* failed syncs in a row */
	double open_until_ms;
	long backoff_ms;
	char sha_lease[48], sha_hosts[48], sha_hot[48];
	int policy_due;			/* syncs until the policy is read again */
	__u64 last_ok_ns;		/* data-path clock */
	__u64 last_lat_ns;
	/* fleet-wide bans, the sync thread's own, each sorted: the hash as
	 * last read, this host's own fleet bans and the bans it set from
	 * Redis (the decider "fleet.in") when the tables were last read */
	struct fban *known, *local, *held;
	size_t nknown, nlocal, nheld;
	long long redis_now_ms;		/* Redis' TIME at the last read */
	__u64 bans_gen;			/* the ban counters at the last read */
	double bans_last_ms, bans_scan_ms;	/* the last exchange, read */
	const void *bans_rules;		/* the fleet rules at the last read */
	bool bans_scanned, bans_soon;	/* read once; exchange again soon */
	bool bans_read;			/* the hash read once */
	pthread_mutex_t *bans_lock;	/* held while writing bans; NULL: none */
	struct xrl_fleet_stats st;
};

/* The scripts (scripts.c): their text; load them (their SHA1s into f);
 * read the server's eviction policy into f->st; both within end (ms of
 * CLOCK_MONOTONIC). */
extern const char xrl__fleet_lease_script[];
extern const char xrl__fleet_hosts_script[];
extern const char xrl__fleet_hot_script[];
int xrl__fleet_load_scripts(struct xrl_fleet *f, double end);
void xrl__fleet_check_policy(struct xrl_fleet *f, double end);

/* The promoted keys (lease.c): the index made empty; a key's xrl_key; a
 * slot given back (credit gone, key deleted from the maps); each rule's
 * share and state written (of f->rules, or of the rules given); the rule
 * of a generation; the candidates of a family's map promoted, those of
 * rules gone forgotten; a slot's lease swapped for a grant; a key hot
 * elsewhere promoted here when it had traffic lately; the keys of closed
 * rules held at a lease never granted; idle keys given back. */
void xrl__fleet_index_init(struct xrl_fleet *f);
void xrl__fleet_key_of(const struct fkey *fk, struct xrl_key *k);
void xrl__fleet_key_free(struct xrl_fleet *f, __u32 slot);
void xrl__fleet_write_rules(struct xrl_fleet *f);
void xrl__fleet_write_rules_of(struct xrl_fleet *f, const struct frule *rules, size_t nrules);
const struct frule *xrl__fleet_rule_of_gen(struct xrl_fleet *f, __u32 gen);
void xrl__fleet_scan_family(struct xrl_fleet *f, int family);
void xrl__fleet_swap_lease(struct xrl_fleet *f, __u32 s, __u64 grant, __u64 now_ns);
void xrl__fleet_promote_hot(struct xrl_fleet *f, const struct frule *r, const char *s, __u64 now_ns);
void xrl__fleet_hold_closed(struct xrl_fleet *f);
void xrl__fleet_demote_idle(struct xrl_fleet *f);

/* Fleet-wide bans (fleet_bans.c): the script; this host's changes for the
 * sync's bans call (*ops: malloc()ed lines); the reply applied. */
extern const char xrl__fleet_bans_script[];
void xrl__fleet_bans_exchange(struct xrl_fleet *f);

#endif
