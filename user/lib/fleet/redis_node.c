// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The fleet's Redis client, its transport: the nodes and their non-blocking
 * connections, the reader's caps, and one exchange (a pipeline to one node,
 * every reply read, by a deadline). redis_cluster.h says what it does.
 */
#include "fleet/redis_int.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* ---- CRC16 (XMODEM, polynomial 0x1021), as Redis Cluster keys its slots ---- */

static unsigned crc16(const char *p, size_t n)
{
	unsigned crc = 0;

	for (size_t i = 0; i < n; i++) {
		crc ^= (unsigned)(unsigned char)p[i] << 8;
		for (int b = 0; b < 8; b++)
			crc = crc & 0x8000 ? (crc << 1) ^ 0x1021 : crc << 1;
		crc &= 0xffff;
	}
	return crc;
}

unsigned xrl_redis_key_slot(const char *key)
{
	size_t n = strlen(key);
	const char *o = strchr(key, '{'), *c;

	/* the hash tag: from the first '{' to the next '}', when not empty */
	if (o && (c = strchr(o + 1, '}')) && c > o + 1)
		return crc16(o + 1, c - o - 1) % XRL_REDIS_SLOTS;
	return crc16(key, n) % XRL_REDIS_SLOTS;
}

/* ---- time ---- */

double xrl__redis_now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* Wait for fd to be ready for ev, until deadline (ms) or a stop: 0 ready,
 * -ETIMEDOUT, -ECANCELED or -errno. */
static int wait_fd(struct xrl_redis *r, int fd, short ev, double deadline)
{
	for (;;) {
		struct pollfd p = { .fd = fd, .events = ev };
		double left = deadline - xrl__redis_now_ms();
		int n;

		if (__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE))
			return -ECANCELED;
		if (left <= 0)
			return -ETIMEDOUT;
		/* slices of 20 ms: a stop is seen within one */
		n = poll(&p, 1, left > 20 ? 20 : (int)left + 1);
		if (n < 0 && errno != EINTR)
			return -errno;
		if (n > 0)
			return 0;
	}
}

/* ---- the reader's caps ---- */

static void *cap_string(const redisReadTask *t, char *s, size_t len)
{
	struct cap *c = t->privdata;

	if (++c->objects > XRL_REDIS_MAX_OBJECTS) {
		c->over = true;
		return NULL;
	}
	return c->fn->createString(t, s, len);
}

static void *cap_array(const redisReadTask *t, int n)
{
	struct cap *c = t->privdata;

	if (n < 0 || n > XRL_REDIS_MAX_ELEMENTS || ++c->objects > XRL_REDIS_MAX_OBJECTS) {
		c->over = true;
		return NULL;
	}
	return c->fn->createArray(t, n);
}

static void *cap_integer(const redisReadTask *t, long long v)
{
	struct cap *c = t->privdata;

	if (++c->objects > XRL_REDIS_MAX_OBJECTS) {
		c->over = true;
		return NULL;
	}
	return c->fn->createInteger(t, v);
}

static void *cap_nil(const redisReadTask *t)
{
	struct cap *c = t->privdata;

	if (++c->objects > XRL_REDIS_MAX_OBJECTS) {
		c->over = true;
		return NULL;
	}
	return c->fn->createNil(t);
}

static void cap_free(void *o)
{
	freeReplyObject(o);
}

static const redisReplyObjectFunctions cap_fns = {
	.createString = cap_string,
	.createArray = cap_array,
	.createInteger = cap_integer,
	.createNil = cap_nil,
	.freeObject = cap_free,
};

/* ---- nodes ---- */

int xrl__redis_node_find(struct xrl_redis *r, const char *host, int port)
{
	for (int i = 0; i < r->nnodes; i++)
		if (r->nodes[i].port == port && !strcmp(r->nodes[i].host, host))
			return i;
	if (r->nnodes == MAX_NODES || strlen(host) >= sizeof(r->nodes[0].host))
		return -1;
	memset(&r->nodes[r->nnodes], 0, sizeof(r->nodes[0]));
	snprintf(r->nodes[r->nnodes].host, sizeof(r->nodes[0].host), "%s", host);
	r->nodes[r->nnodes].port = port;
	return r->nnodes++;
}

void xrl__redis_node_drop(struct xrl_redis *r, int i)
{
	if (r->nodes[i].c)
		redisFree(r->nodes[i].c);
	r->nodes[i].c = NULL;
}

/* A node that failed: dropped; failed twice in a row, left alone for its
 * back-off (one slow reply on a busy machine is not a dead node). */
void xrl__redis_node_failed(struct xrl_redis *r, int i)
{
	struct node *n = &r->nodes[i];

	xrl__redis_node_drop(r, i);
	if (++n->fails < 2)
		return;
	n->backoff_ms = n->backoff_ms ? n->backoff_ms * 2 : BACKOFF_MIN_MS;
	if (n->backoff_ms > BACKOFF_MAX_MS)
		n->backoff_ms = BACKOFF_MAX_MS;
	n->retry_at = xrl__redis_now_ms() + n->backoff_ms;
}

/* A non-blocking connection to node i by deadline, its reader capped; the
 * AUTH, when needed, goes first into the exchange's pipeline. */
static int node_connect(struct xrl_redis *r, int i, double deadline, char *err, size_t elen)
{
	struct node *n = &r->nodes[i];
	socklen_t sl = sizeof(int);
	int e = 0, w;

	r->st.reconnects++;
	n->c = redisConnectNonBlock(n->host, n->port);
	if (!n->c || n->c->err) {
		snprintf(err, elen, "%s:%d: %s", n->host, n->port,
			 n->c ? n->c->errstr : "cannot allocate a context");
		return -1;
	}
	w = wait_fd(r, n->c->fd, POLLOUT, deadline);
	if (!w && getsockopt(n->c->fd, SOL_SOCKET, SO_ERROR, &e, &sl))
		e = errno;
	if (w || e) {
		if (w == -ETIMEDOUT)
			r->st.deadline++;
		snprintf(err, elen, "%s:%d: connect: %s", n->host, n->port,
			 strerror(w ? -w : e));
		return -1;
	}
	n->cap = (struct cap){ .fn = n->c->reader->fn };
	n->c->reader->fn = (redisReplyObjectFunctions *)&cap_fns;
	n->c->reader->privdata = &n->cap;
	return 0;
}

/* A connection kept from an earlier exchange may be used again: nothing
 * unread in its reader, nothing readable on its socket (a reply nobody
 * asked for would answer the next call; an EOF: the server closed it). */
static bool conn_clean(struct xrl_redis *r, struct node *n)
{
	struct pollfd p = { .fd = n->c->fd, .events = POLLIN };
	char b;

	if (n->c->reader->len > n->c->reader->pos) {
		r->st.bad_replies++;
		return false;
	}
	if (poll(&p, 1, 0) == 0)
		return true;
	if (recv(n->c->fd, &b, 1, MSG_PEEK | MSG_DONTWAIT) > 0)
		r->st.bad_replies++;	/* data: a reply too many */
	return false;
}

static int append(redisContext *c, int argc, const char *const *argv)
{
	size_t lens[XRL_REDIS_MAX_ARGS + 1];

	for (int a = 0; a < argc; a++)
		lens[a] = strlen(argv[a]);
	return redisAppendCommandArgv(c, argc, (const char **)argv, lens);
}

/*
 * Send items[] (built by the caller) to node i and read one reply for each,
 * all by deadline. 0, or -1 with err: then the connection is dropped (its
 * unread replies would answer the next commands) and the node backs off.
 */
int xrl__redis_exchange(struct xrl_redis *r, int i, struct item *it, size_t nit,
			const struct xrl_redis_cmd *c, double deadline, char *err, size_t elen)
{
	struct node *n = &r->nodes[i];
	size_t got = 0, bytes = 0;
	int done = 0, w = 0;
	bool fresh = false;

	if (n->c && !conn_clean(r, n))
		xrl__redis_node_drop(r, i);	/* not a failure of the node's: a new connection */
	if (!n->c) {
		if (node_connect(r, i, deadline, err, elen))
			goto fail;
		fresh = true;
	}
	if (fresh && r->pass[0]) {
		const char *au[3] = { "AUTH", r->user[0] ? r->user : r->pass, r->pass };

		/* AUTH first: the caller's items[0] is its slot */
		if (append(n->c, r->user[0] ? 3 : 2, au) != REDIS_OK)
			goto broken;
	}
	for (size_t j = 0; j < nit; j++) {
		const struct xrl_redis_cmd *cm = &c[it[j].k];
		const char *asking[1] = { "ASKING" };
		const char *load[3] = { "SCRIPT", "LOAD", cm->script };

		if (it[j].kind == I_AUTH)
			continue;
		r->st.calls++;
		if (append(n->c, it[j].kind == I_ASKING ? 1 : it[j].kind == I_LOAD ? 3 : cm->argc,
			   it[j].kind == I_ASKING ? asking : it[j].kind == I_LOAD ? load : cm->argv) != REDIS_OK)
			goto broken;
	}
	while (!done) {
		if (redisBufferWrite(n->c, &done) != REDIS_OK)
			goto broken;
		if (!done && (w = wait_fd(r, n->c->fd, POLLOUT, deadline)))
			goto cut;
	}
	n->cap.objects = 0;
	while (got < nit) {
		void *rep = NULL;
		char buf[16384];
		ssize_t m;

		if (it[got].kind == I_AUTH && !(fresh && r->pass[0])) {
			got++;
			continue;
		}
		if (redisGetReplyFromReader(n->c, &rep) != REDIS_OK) {
			if (n->cap.over)
				goto large;
			goto broken;
		}
		if (rep) {
			it[got++].rep = rep;
			continue;
		}
		if ((w = wait_fd(r, n->c->fd, POLLIN, deadline)))
			goto cut;
		m = read(n->c->fd, buf, sizeof(buf));
		if (m < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (m <= 0) {
			snprintf(err, elen, "%s:%d: %s", n->host, n->port,
				 m ? strerror(errno) : "connection closed");
			goto fail;
		}
		bytes += m;
		if (bytes > XRL_REDIS_MAX_BYTES)
			goto large;
		if (redisReaderFeed(n->c->reader, buf, m) != REDIS_OK)
			goto broken;
	}
	if (n->c->reader->len > n->c->reader->pos) {
		/* more than was asked for: which reply answers which call is
		 * not known any more */
		r->st.bad_replies++;
		snprintf(err, elen, "%s:%d: bytes after the last reply", n->host, n->port);
		goto fail;
	}
	n->backoff_ms = 0;
	n->fails = 0;
	return 0;
large:
	r->st.too_large++;
	snprintf(err, elen, "%s:%d: a reply over the client's caps", n->host, n->port);
	goto fail;
cut:
	if (w == -ETIMEDOUT)
		r->st.deadline++;
	snprintf(err, elen, "%s:%d: %s", n->host, n->port,
		 w == -ETIMEDOUT ? "no reply by the deadline" : w == -ECANCELED ? "stopped" : strerror(-w));
	goto fail;
broken:
	snprintf(err, elen, "%s:%d: %s", n->host, n->port,
		 n->c && n->c->err ? n->c->errstr : n->c && n->c->reader->err ? n->c->reader->errstr :
		 "protocol error");
fail:
	for (size_t j = 0; j < nit; j++) {
		if (it[j].rep)
			freeReplyObject(it[j].rep);
		it[j].rep = NULL;
	}
	if (w != -ECANCELED) {
		xrl__redis_node_failed(r, i);
		/* a dead master is replaced by a failover: its slots are
		 * asked for again (slots_at still rate-limits the asking) */
		if (r->cluster)
			r->need_slots = true;
	} else {
		xrl__redis_node_drop(r, i);
	}
	return -1;
}

/* node i may be tried now, else err says why not */
bool xrl__redis_node_ready(struct xrl_redis *r, int i, char *err, size_t elen)
{
	struct node *n = &r->nodes[i];

	/* a single Redis: the fleet's breaker backs off already, and a failed
	 * seed hands over to the next one */
	if (!r->cluster || n->c || xrl__redis_now_ms() >= n->retry_at)
		return true;
	snprintf(err, elen, "%s:%d: in back-off after a failure", n->host, n->port);
	return false;
}
