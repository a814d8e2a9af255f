/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * A small Redis client for the fleet: hiredis underneath, with a cluster
 * layer of its own (Debian packages no Redis Cluster client). Commands are
 * sent in batches, pipelined per node; every read and write has the same
 * short timeout.
 *
 * Cluster: the key slot is CRC16 of the key's hash tag ({...}) mod 16384;
 * the slot map comes from CLUSTER SLOTS; MOVED refreshes the map and retries
 * once, ASK sends ASKING and retries once at the node named; TRYAGAIN and
 * CLUSTERDOWN are failures. A script called with EVALSHA is loaded on the
 * node that answers NOSCRIPT, and the call retried.
 */
#ifndef XRL_REDIS_CLUSTER_H
#define XRL_REDIS_CLUSTER_H

#include <stdbool.h>
#include <stddef.h>
#include <hiredis/hiredis.h>

#define XRL_REDIS_SLOTS		16384
#define XRL_REDIS_MAX_ARGS	12
#define XRL_REDIS_MAX_ELEMENTS	16384		/* per array */
#define XRL_REDIS_MAX_OBJECTS	262144		/* per exchange */
#define XRL_REDIS_MAX_BYTES	(4u << 20)	/* read per exchange */
#define XRL_REDIS_PASSES	3		/* the first, and two of retries */

struct xrl_redis;

struct xrl_redis_opts {
	const char *addrs;	/* "HOST:PORT[,HOST:PORT...]": the seeds */
	bool cluster;
	int timeout_ms;		/* one exchange with one node, connect included */
	int batch_ms;		/* one batch as a whole (0: timeout_ms) */
	const char *user;	/* NULL or "": AUTH PASSWORD */
	const char *pass;	/* NULL or "": no AUTH */
};

/* One command of a batch. key: the key that picks the node (cluster);
 * script: the body of the script an EVALSHA names, loaded on NOSCRIPT. */
struct xrl_redis_cmd {
	int argc;
	const char *argv[XRL_REDIS_MAX_ARGS];
	const char *key;
	const char *script;
	/* out */
	redisReply *reply;	/* NULL on failure; freed by xrl_redis_batch_free() */
	char err[96];		/* why, when reply is NULL or an error */
};

/* Counters of what the cluster layer did. */
struct xrl_redis_stats {
	unsigned long long calls;	/* commands sent (retries included) */
	unsigned long long moved, ask, tryagain, noscript, reconnects, slot_refreshes;
	unsigned long long deadline;	/* exchanges cut short by a deadline */
	unsigned long long bad_replies;	/* malformed or out of range, refused */
	unsigned long long too_large;	/* replies over a cap, refused */
	unsigned long long backoff;	/* commands failed at once: their node in back-off */
};

int xrl_redis_open(const struct xrl_redis_opts *o, struct xrl_redis **out);
void xrl_redis_close(struct xrl_redis *r);
/* Run the commands: 0 when every one got a reply that is not an error,
 * else the number that failed (each with its err). */
int xrl_redis_batch(struct xrl_redis *r, struct xrl_redis_cmd *c, size_t n);
/* The same, ending by end (ms of CLOCK_MONOTONIC) instead of batch_ms from
 * now: several batches under one deadline. */
int xrl_redis_batch_by(struct xrl_redis *r, struct xrl_redis_cmd *c, size_t n, double end);
void xrl_redis_batch_free(struct xrl_redis_cmd *c, size_t n);
void xrl_redis_stats_get(struct xrl_redis *r, struct xrl_redis_stats *s);
/* From another thread: stop (true) the batch running now, and any later
 * one, at once (its commands fail); false lets batches run again. */
void xrl_redis_abort(struct xrl_redis *r, bool stop);
/* The slot of a key: CRC16 (XMODEM) of its hash tag, or of the whole key. */
unsigned xrl_redis_key_slot(const char *key);

#endif
