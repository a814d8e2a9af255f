/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The Redis client's own parts (redis_node.c, redis_cluster.c): the client,
 * its nodes and their connections, one exchange with one node.
 */
#ifndef XRL_FLEET_REDIS_INT_H
#define XRL_FLEET_REDIS_INT_H

#include "fleet/redis_cluster.h"

#define MAX_NODES	64
#define BACKOFF_MIN_MS	50
#define BACKOFF_MAX_MS	400
#define SLOTS_RETRY_MS	1000	/* a refused slot map: asked again after this */

/* The reader's caps, per connection: hiredis calls these for each object. */
struct cap {
	const redisReplyObjectFunctions *fn;	/* hiredis' own */
	size_t objects;
	bool over;
};

struct node {
	char host[64];
	int port;
	redisContext *c;
	struct cap cap;
	double retry_at;	/* back-off: not tried before (ms, CLOCK_MONOTONIC) */
	long backoff_ms;
	int fails;		/* in a row */
};

struct xrl_redis {
	struct xrl_redis_opts o;
	char user[128], pass[256];
	bool cluster;
	struct node nodes[MAX_NODES];
	int nnodes, nseeds;
	int cur;			/* single Redis: the seed in use */
	short slots[XRL_REDIS_SLOTS];	/* node index, -1: unknown */
	bool need_slots;		/* refresh the map at the next batch */
	double slots_at;		/* not before (ms) */
	int stop;			/* xrl_redis_abort() */
	struct xrl_redis_stats st;
};

/* One exchange: a pipeline to one node, every reply read. */
enum { I_AUTH, I_ASKING, I_LOAD, I_CMD };

struct item {
	int kind;
	size_t k;		/* I_LOAD, I_CMD: the command */
	redisReply *rep;
};

/* The per-batch state of each command. */
struct cstate {
	int at;			/* its node; -1: done */
	bool asking, load;
	int tries;
};

/* CLOCK_MONOTONIC in ms; the node of HOST:PORT (added when new; -1: no
 * room, or a name too long); drop its connection; one that failed (backs
 * off when it fails again). */
double xrl__redis_now_ms(void);
int xrl__redis_node_find(struct xrl_redis *r, const char *host, int port);
void xrl__redis_node_drop(struct xrl_redis *r, int i);
void xrl__redis_node_failed(struct xrl_redis *r, int i);
/* Send it[] to node i and read one reply for each, all by deadline: 0, or
 * -1 with err (the connection dropped, the node backing off). May node i be
 * tried now (its back-off passed)? */
int xrl__redis_exchange(struct xrl_redis *r, int i, struct item *it, size_t nit,
			const struct xrl_redis_cmd *c, double deadline, char *err, size_t elen);
bool xrl__redis_node_ready(struct xrl_redis *r, int i, char *err, size_t elen);

#endif
