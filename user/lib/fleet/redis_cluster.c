// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The fleet's Redis client: hiredis, and a small cluster layer
 * (redis_cluster.h says what it does).
 */
#include "fleet/redis_cluster.h"
#include "base/hostport.h"

#include <ctype.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

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

static double mono_ms(void)
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
		double left = deadline - mono_ms();
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

static int node_find(struct xrl_redis *r, const char *host, int port)
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

static void node_drop(struct xrl_redis *r, int i)
{
	if (r->nodes[i].c)
		redisFree(r->nodes[i].c);
	r->nodes[i].c = NULL;
}

/* A node that failed: dropped; failed twice in a row, left alone for its
 * back-off (one slow reply on a busy machine is not a dead node). */
static void node_failed(struct xrl_redis *r, int i)
{
	struct node *n = &r->nodes[i];

	node_drop(r, i);
	if (++n->fails < 2)
		return;
	n->backoff_ms = n->backoff_ms ? n->backoff_ms * 2 : BACKOFF_MIN_MS;
	if (n->backoff_ms > BACKOFF_MAX_MS)
		n->backoff_ms = BACKOFF_MAX_MS;
	n->retry_at = mono_ms() + n->backoff_ms;
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

/* ---- one exchange: a pipeline to one node, every reply read ---- */

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
static int exchange(struct xrl_redis *r, int i, struct item *it, size_t nit,
		    const struct xrl_redis_cmd *c, double deadline, char *err, size_t elen)
{
	struct node *n = &r->nodes[i];
	size_t got = 0, bytes = 0;
	int done = 0, w = 0;
	bool fresh = false;

	if (n->c && !conn_clean(r, n))
		node_drop(r, i);	/* not a failure of the node's: a new connection */
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
		node_failed(r, i);
		/* a dead master is replaced by a failover: its slots are
		 * asked for again (slots_at still rate-limits the asking) */
		if (r->cluster)
			r->need_slots = true;
	} else {
		node_drop(r, i);
	}
	return -1;
}

/* node i may be tried now, else err says why not */
static bool node_ready(struct xrl_redis *r, int i, char *err, size_t elen)
{
	struct node *n = &r->nodes[i];

	/* a single Redis: the fleet's breaker backs off already, and a failed
	 * seed hands over to the next one */
	if (!r->cluster || n->c || mono_ms() >= n->retry_at)
		return true;
	snprintf(err, elen, "%s:%d: in back-off after a failure", n->host, n->port);
	return false;
}

/* ---- the slot map ---- */

static bool host_ok(const redisReply *h)
{
	if (h->type != REDIS_REPLY_STRING || h->len >= sizeof(((struct node *)0)->host))
		return false;
	for (size_t i = 0; i < h->len; i++)
		if (!isgraph((unsigned char)h->str[i]))
			return false;
	/* empty: the node that answered; else an address, never a name */
	return !h->len || xrl_redis_host_numeric(h->str);
}

/* A CLUSTER SLOTS reply, every field checked: the map, or -EPROTO and the
 * map as it was. */
static int slots_parse(struct xrl_redis *r, int from, const redisReply *rep)
{
	short *map;

	if (rep->type != REDIS_REPLY_ARRAY)
		return -EPROTO;
	for (size_t k = 0; k < rep->elements; k++) {
		const redisReply *e = rep->element[k], *m;

		if (e->type != REDIS_REPLY_ARRAY || e->elements < 3 ||
		    e->element[0]->type != REDIS_REPLY_INTEGER || e->element[1]->type != REDIS_REPLY_INTEGER ||
		    e->element[0]->integer < 0 || e->element[1]->integer >= XRL_REDIS_SLOTS ||
		    e->element[0]->integer > e->element[1]->integer)
			return -EPROTO;
		m = e->element[2];
		if (m->type != REDIS_REPLY_ARRAY || m->elements < 2 || !host_ok(m->element[0]) ||
		    m->element[1]->type != REDIS_REPLY_INTEGER || m->element[1]->integer < 1 ||
		    m->element[1]->integer > 65535)
			return -EPROTO;
	}
	map = malloc(sizeof(r->slots));
	if (!map)
		return -ENOMEM;
	for (int s = 0; s < XRL_REDIS_SLOTS; s++)
		map[s] = -1;
	for (size_t k = 0; k < rep->elements; k++) {
		const redisReply *e = rep->element[k], *m = e->element[2];
		/* an empty address: the node that answered */
		const char *host = m->element[0]->len ? m->element[0]->str : r->nodes[from].host;
		int ni = node_find(r, host, (int)m->element[1]->integer);

		for (long long s = e->element[0]->integer; ni >= 0 && s <= e->element[1]->integer; s++)
			map[s] = ni;
	}
	memcpy(r->slots, map, sizeof(r->slots));
	free(map);
	return 0;
}

/* CLUSTER SLOTS from the first node that answers it well, by deadline. */
static int slots_refresh(struct xrl_redis *r, double deadline)
{
	static const struct xrl_redis_cmd cs = { .argc = 2, .argv = { "CLUSTER", "SLOTS" } };
	bool failed[MAX_NODES];
	char err[128];

	for (int i = 0; i < r->nnodes; i++)
		failed[i] = r->nodes[i].fails > 0;
	r->st.slot_refreshes++;
	/* at most one refresh a SLOTS_RETRY_MS, whether it works or not: a
	 * node that keeps failing asks for it at each of its exchanges */
	r->slots_at = mono_ms() + SLOTS_RETRY_MS;
	/* the nodes without a failure first, then those that failed */
	for (int k = 0; k < 2 * r->nnodes && mono_ms() < deadline; k++) {
		struct item it[2] = { { .kind = I_AUTH }, { .kind = I_CMD } };
		int i = k % r->nnodes;
		double by = mono_ms() + r->o.timeout_ms;

		if ((k < r->nnodes) == failed[i])
			continue;
		if (!node_ready(r, i, err, sizeof(err)))
			continue;
		if (exchange(r, i, it, 2, &cs, by < deadline ? by : deadline, err, sizeof(err)))
			continue;
		if (it[0].rep && it[0].rep->type == REDIS_REPLY_ERROR) {
			node_failed(r, i);	/* AUTH refused */
		} else if (slots_parse(r, i, it[1].rep)) {
			r->st.bad_replies++;
		} else {
			freeReplyObject(it[0].rep);
			freeReplyObject(it[1].rep);
			r->need_slots = false;
			return 0;
		}
		if (it[0].rep)
			freeReplyObject(it[0].rep);
		freeReplyObject(it[1].rep);
	}
	return -EHOSTUNREACH;
}

static int node_of(struct xrl_redis *r, const struct xrl_redis_cmd *c)
{
	int n;

	if (!r->cluster || !c->key)
		return r->cur;
	n = r->slots[xrl_redis_key_slot(c->key)];
	return n >= 0 ? n : r->cur;
}

int xrl_redis_open(const struct xrl_redis_opts *o, struct xrl_redis **out)
{
	struct xrl_redis *r = calloc(1, sizeof(*r));
	char list[256], *save = NULL, *tok;

	if (!r)
		return -ENOMEM;
	r->o = *o;
	if (r->o.batch_ms <= 0)
		r->o.batch_ms = r->o.timeout_ms;
	r->cluster = o->cluster;
	snprintf(r->user, sizeof(r->user), "%s", o->user ? o->user : "");
	snprintf(r->pass, sizeof(r->pass), "%s", o->pass ? o->pass : "");
	r->o.user = r->o.pass = NULL;
	snprintf(list, sizeof(list), "%s", o->addrs);
	r->o.addrs = NULL;
	for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char host[64];
		int port;

		if (xrl_redis_hostport(tok, host, sizeof(host), &port) || node_find(r, host, port) < 0) {
			free(r);
			return -EINVAL;
		}
	}
	if (!r->nnodes) {
		free(r);
		return -EINVAL;
	}
	r->nseeds = r->nnodes;
	for (int s = 0; s < XRL_REDIS_SLOTS; s++)
		r->slots[s] = -1;
	/* the map at the first batch, within its deadline: nothing here waits */
	r->need_slots = r->cluster;
	*out = r;
	return 0;
}

void xrl_redis_close(struct xrl_redis *r)
{
	if (!r)
		return;
	for (int i = 0; i < r->nnodes; i++)
		node_drop(r, i);
	free(r);
}

void xrl_redis_stats_get(struct xrl_redis *r, struct xrl_redis_stats *s)
{
	*s = r->st;
}

void xrl_redis_abort(struct xrl_redis *r, bool stop)
{
	__atomic_store_n(&r->stop, stop, __ATOMIC_RELEASE);
}

/* ---- commands ---- */

static void cmd_fail(struct xrl_redis_cmd *c, const char *fmt, const char *what)
{
	if (c->reply) {
		freeReplyObject(c->reply);
		c->reply = NULL;
	}
	snprintf(c->err, sizeof(c->err), fmt, what);
}

static bool err_is(const redisReply *rep, const char *word)
{
	size_t l = strlen(word);

	return rep && rep->type == REDIS_REPLY_ERROR && !strncmp(rep->str, word, l) &&
	       (rep->str[l] == ' ' || !rep->str[l]);
}

/* "MOVED 3999 127.0.0.1:6381": the slot and the node named (added when
 * new), each checked; -1 when either is not right. */
static int redirect_node(struct xrl_redis *r, const redisReply *rep, int *slot)
{
	char word[8], addr[80], host[64], tail;
	int port, s;

	if (rep->len > 100 || sscanf(rep->str, "%7s %d %79s %c", word, &s, addr, &tail) != 3 ||
	    s < 0 || s >= XRL_REDIS_SLOTS || xrl_redis_hostport(addr, host, sizeof(host), &port))
		return -1;
	for (const char *p = host; *p; p++)
		if (!isgraph((unsigned char)*p))
			return -1;
	*slot = s;
	return node_find(r, host, port);
}

/* A reply the layer follows: MOVED, ASK, NOSCRIPT, into a later pass.
 * true: the command goes again (s says where and how). */
static bool follow(struct xrl_redis *r, struct xrl_redis_cmd *c, struct cstate *s)
{
	redisReply *rep = c->reply;
	int ni, slot;

	if (!rep || rep->type != REDIS_REPLY_ERROR)
		return false;
	if ((err_is(rep, "MOVED") || err_is(rep, "ASK")) && r->cluster) {
		bool moved = err_is(rep, "MOVED");

		*(moved ? &r->st.moved : &r->st.ask) += 1;
		ni = redirect_node(r, rep, &slot);
		if (ni < 0 || !c->key || (unsigned)slot != xrl_redis_key_slot(c->key)) {
			r->st.bad_replies++;
			cmd_fail(c, "%s", moved ? "a MOVED that is not right" : "an ASK that is not right");
			return false;
		}
		if (moved) {
			r->slots[slot] = ni;
			r->need_slots = true;
		}
		s->at = ni;
		s->asking = !moved;
		s->load = false;
	} else if (err_is(rep, "NOSCRIPT") && c->script) {
		r->st.noscript++;
		s->load = true;
	} else {
		if (err_is(rep, "TRYAGAIN") || err_is(rep, "CLUSTERDOWN"))
			r->st.tryagain++;
		return false;
	}
	freeReplyObject(c->reply);
	c->reply = NULL;
	if (++s->tries >= XRL_REDIS_PASSES) {
		cmd_fail(c, "%s", "redirected too often");
		return false;
	}
	return true;
}

/* script is loaded by one of it[0 .. nit) already */
static bool loaded(const struct item *it, size_t nit, const struct xrl_redis_cmd *c, const char *script)
{
	for (size_t j = 0; j < nit; j++)
		if (it[j].kind == I_LOAD && !strcmp(c[it[j].k].script, script))
			return true;
	return false;
}

/* One pass at node i: its commands of this pass pipelined, their replies
 * read; the ones to go again are left with s[k].at set. */
static void run_node(struct xrl_redis *r, int i, struct xrl_redis_cmd *c, size_t n,
		     struct cstate *s, int pass, double batch_end)
{
	double deadline = mono_ms() + r->o.timeout_ms;
	struct item *it;
	size_t nit = 1, cnt = 0;
	char err[96];

	for (size_t k = 0; k < n; k++)
		if (s[k].at == i)
			cnt++;
	if (!cnt)
		return;
	if (deadline > batch_end)
		deadline = batch_end;
	if (mono_ms() >= batch_end) {
		/* not this node's fault: no back-off for it */
		r->st.deadline++;
		snprintf(err, sizeof(err), "%s:%d: the batch's deadline passed", r->nodes[i].host,
			 r->nodes[i].port);
		it = NULL;
	} else if (!node_ready(r, i, err, sizeof(err))) {
		r->st.backoff += cnt;
		r->need_slots = true;	/* as for the failure that set the back-off */
		it = NULL;
	} else if (!(it = calloc(1 + 3 * cnt, sizeof(*it)))) {
		snprintf(err, sizeof(err), "out of memory");
	}
	if (!it) {
		for (size_t k = 0; k < n; k++) {
			if (s[k].at == i) {
				cmd_fail(&c[k], "%s", err);
				s[k].at = -1;
			}
		}
		return;
	}
	it[0].kind = I_AUTH;
	for (size_t k = 0; k < n; k++) {
		if (s[k].at != i)
			continue;
		/* a script loaded once per node and pass, before the first
		 * call that needs it */
		if (s[k].load && !loaded(it, nit, c, c[k].script))
			it[nit++] = (struct item){ .kind = I_LOAD, .k = k };
		/* ASKING is for the next command only: right before it */
		if (s[k].asking)
			it[nit++] = (struct item){ .kind = I_ASKING, .k = k };
		it[nit++] = (struct item){ .kind = I_CMD, .k = k };
	}
	if (exchange(r, i, it, nit, c, deadline, err, sizeof(err))) {
		for (size_t k = 0; k < n; k++) {
			if (s[k].at == i) {
				cmd_fail(&c[k], "%s", err);
				s[k].at = -1;
			}
		}
		/* a single Redis: the next seed, next time */
		if (!r->cluster && i == r->cur)
			r->cur = (r->cur + 1) % r->nseeds;
		free(it);
		return;
	}
	if (it[0].rep && it[0].rep->type == REDIS_REPLY_ERROR) {
		snprintf(err, sizeof(err), "%s:%d: AUTH refused: %.60s", r->nodes[i].host, r->nodes[i].port,
			 it[0].rep->str);
		for (size_t j = 0; j < nit; j++)
			if (it[j].rep)
				freeReplyObject(it[j].rep);
		for (size_t k = 0; k < n; k++) {
			if (s[k].at == i) {
				cmd_fail(&c[k], "%s", err);
				s[k].at = -1;
			}
		}
		node_failed(r, i);
		free(it);
		return;
	}
	if (it[0].rep)
		freeReplyObject(it[0].rep);
	for (size_t j = 1; j < nit; j++) {
		size_t k = it[j].k;

		if (it[j].kind == I_ASKING) {
			freeReplyObject(it[j].rep);
			continue;
		}
		if (it[j].kind == I_LOAD) {
			redisReply *l = it[j].rep;

			/* its call follows and says NOSCRIPT again if this failed */
			if (l->type == REDIS_REPLY_ERROR)
				snprintf(c[k].err, sizeof(c[k].err), "SCRIPT LOAD: %.80s", l->str);
			freeReplyObject(l);
			continue;
		}
		c[k].reply = it[j].rep;
		if (!follow(r, &c[k], &s[k]) || pass + 1 >= XRL_REDIS_PASSES) {
			if (!c[k].reply && !c[k].err[0])
				cmd_fail(&c[k], "%s", "redirected too often");
			s[k].at = -1;
		}
	}
	free(it);
}

int xrl_redis_batch(struct xrl_redis *r, struct xrl_redis_cmd *c, size_t n)
{
	return xrl_redis_batch_by(r, c, n, mono_ms() + r->o.batch_ms);
}

int xrl_redis_batch_by(struct xrl_redis *r, struct xrl_redis_cmd *c, size_t n, double end)
{
	struct cstate *s = calloc(n ? n : 1, sizeof(*s));
	int failed = 0;

	if (!s) {
		for (size_t k = 0; k < n; k++)
			cmd_fail(&c[k], "%s", "out of memory");
		return n;
	}
	for (size_t k = 0; k < n; k++) {
		c[k].reply = NULL;
		c[k].err[0] = '\0';
	}
	if (r->cluster && r->need_slots && mono_ms() >= r->slots_at)
		slots_refresh(r, end);
	for (size_t k = 0; k < n; k++)
		s[k].at = node_of(r, &c[k]);
	for (int pass = 0; pass < XRL_REDIS_PASSES; pass++) {
		bool any = false;

		/* only the nodes that have commands: the others are not touched */
		for (int i = 0; i < r->nnodes; i++)
			run_node(r, i, c, n, s, pass, end);
		for (size_t k = 0; k < n; k++)
			any |= s[k].at >= 0;
		if (!any)
			break;
	}
	for (size_t k = 0; k < n; k++) {
		if (!c[k].reply) {
			if (!c[k].err[0])
				snprintf(c[k].err, sizeof(c[k].err), "%s", "no reply");
			failed++;
		} else if (c[k].reply->type == REDIS_REPLY_ERROR) {
			snprintf(c[k].err, sizeof(c[k].err), "%.95s", c[k].reply->str);
			failed++;
		}
	}
	free(s);
	return failed;
}

void xrl_redis_batch_free(struct xrl_redis_cmd *c, size_t n)
{
	for (size_t k = 0; k < n; k++) {
		if (c[k].reply)
			freeReplyObject(c[k].reply);
		c[k].reply = NULL;
	}
}
