/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * A small Redis client for the fleet: hiredis underneath, with a cluster
 * layer of its own (Debian packages no Redis Cluster client). Commands are
 * sent in batches, pipelined per node, on non-blocking sockets driven by
 * poll() against deadlines of the client's own (hiredis' own timeout bounds
 * each read, not a call):
 *   - a batch as a whole ends by its deadline (batch_ms): whatever has not
 *     been answered by then fails, and a connection left with unread
 *     replies is dropped, never reused;
 *   - one exchange with one node (connect, AUTH, the pipelined commands and
 *     all their replies) ends within timeout_ms, and within the batch's;
 *   - a reply is bounded: an array of more than XRL_REDIS_MAX_ELEMENTS, more
 *     than XRL_REDIS_MAX_OBJECTS objects or XRL_REDIS_MAX_BYTES read in one
 *     exchange fail it and drop the connection;
 *   - only nodes that have commands in a batch are connected to; in a
 *     cluster, a node that failed twice in a row is not tried again before its back-off
 *     (50 ms, doubling to 400 ms) has passed (a single Redis: the fleet's
 *     breaker backs off, and a failed seed hands over to the next).
 *
 * Cluster: the key slot is CRC16 of the key's hash tag ({...}) mod 16384;
 * the slot map comes from CLUSTER SLOTS, each field checked (slots in
 * 0..16383, low <= high, a host and a port in range), a reply with one bad
 * field refused as a whole. MOVED and ASK (slot and address checked) and
 * NOSCRIPT are retried in a later pipelined pass of the same batch (ASKING,
 * SCRIPT LOAD pipelined before the call), at most XRL_REDIS_PASSES passes:
 * no command is ever sent on a connection whose earlier replies are unread.
 * MOVED also refreshes the slot map at the start of the next batch.
 * TRYAGAIN and CLUSTERDOWN are failures.
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
