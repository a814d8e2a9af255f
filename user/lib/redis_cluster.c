// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The fleet's Redis client: hiredis, and a small cluster layer
 * (redis_cluster.h says what it does).
 */
#include "redis_cluster.h"
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#define MAX_NODES	64

struct node {
	char host[64];
	int port;
	redisContext *c;
};

struct xrl_redis {
	struct xrl_redis_opts o;
	char user[128], pass[256];
	bool cluster;
	struct node nodes[MAX_NODES];
	int nnodes, nseeds;
	int cur;			/* single Redis: the seed in use */
	short slots[XRL_REDIS_SLOTS];	/* node index, -1: unknown */
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

/* ---- nodes ---- */

static int node_find(struct xrl_redis *r, const char *host, int port)
{
	for (int i = 0; i < r->nnodes; i++)
		if (r->nodes[i].port == port && !strcmp(r->nodes[i].host, host))
			return i;
	if (r->nnodes == MAX_NODES || strlen(host) >= sizeof(r->nodes[0].host))
		return -1;
	snprintf(r->nodes[r->nnodes].host, sizeof(r->nodes[0].host), "%s", host);
	r->nodes[r->nnodes].port = port;
	r->nodes[r->nnodes].c = NULL;
	return r->nnodes++;
}

static void node_drop(struct xrl_redis *r, int i)
{
	if (r->nodes[i].c)
		redisFree(r->nodes[i].c);
	r->nodes[i].c = NULL;
}

static struct timeval tv_of(int ms)
{
	struct timeval tv = { ms / 1000, (ms % 1000) * 1000 };

	return tv;
}

/* Connected (and authenticated), or NULL with err filled. */
static redisContext *node_ctx(struct xrl_redis *r, int i, char *err, size_t elen)
{
	struct node *n = &r->nodes[i];
	redisReply *rep;

	if (n->c)
		return n->c;
	r->st.reconnects++;
	n->c = redisConnectWithTimeout(n->host, n->port, tv_of(r->o.timeout_ms));
	if (!n->c || n->c->err) {
		snprintf(err, elen, "%s:%d: %s", n->host, n->port,
			 n->c ? n->c->errstr : "cannot allocate a context");
		node_drop(r, i);
		return NULL;
	}
	redisSetTimeout(n->c, tv_of(r->o.timeout_ms));
	if (r->pass[0]) {
		if (r->user[0])
			rep = redisCommand(n->c, "AUTH %s %s", r->user, r->pass);
		else
			rep = redisCommand(n->c, "AUTH %s", r->pass);
		if (!rep || rep->type == REDIS_REPLY_ERROR) {
			snprintf(err, elen, "%s:%d: AUTH refused: %s", n->host, n->port,
				 rep ? rep->str : n->c->errstr);
			if (rep)
				freeReplyObject(rep);
			node_drop(r, i);
			return NULL;
		}
		freeReplyObject(rep);
	}
	return n->c;
}

/* ---- the slot map ---- */

/* Read CLUSTER SLOTS from the first node that answers. */
static int slots_refresh(struct xrl_redis *r)
{
	char err[128];

	r->st.slot_refreshes++;
	for (int i = 0; i < r->nnodes; i++) {
		redisContext *c = node_ctx(r, i, err, sizeof(err));
		redisReply *rep;

		if (!c)
			continue;
		rep = redisCommand(c, "CLUSTER SLOTS");
		if (!rep) {
			node_drop(r, i);
			continue;
		}
		if (rep->type != REDIS_REPLY_ARRAY) {
			freeReplyObject(rep);
			continue;
		}
		for (int s = 0; s < XRL_REDIS_SLOTS; s++)
			r->slots[s] = -1;
		for (size_t k = 0; k < rep->elements; k++) {
			redisReply *e = rep->element[k], *m;
			const char *host;
			int ni;

			if (e->type != REDIS_REPLY_ARRAY || e->elements < 3)
				continue;
			m = e->element[2];
			if (m->type != REDIS_REPLY_ARRAY || m->elements < 2 ||
			    m->element[0]->type != REDIS_REPLY_STRING)
				continue;
			/* an empty address: the node that answered */
			host = m->element[0]->len ? m->element[0]->str : r->nodes[i].host;
			ni = node_find(r, host, (int)m->element[1]->integer);
			if (ni < 0)
				continue;
			for (long long s = e->element[0]->integer;
			     s <= e->element[1]->integer && s < XRL_REDIS_SLOTS; s++)
				r->slots[s] = ni;
		}
		freeReplyObject(rep);
		return 0;
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
	if (r->cluster)
		slots_refresh(r);	/* again at the first MOVED, if it failed */
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

/* ---- commands ---- */

static void cmd_fail(struct xrl_redis_cmd *c, const char *fmt, const char *what)
{
	if (c->reply) {
		freeReplyObject(c->reply);
		c->reply = NULL;
	}
	snprintf(c->err, sizeof(c->err), fmt, what);
}

/* One command, not pipelined, at node i (ASK, NOSCRIPT); asking: ASKING first. */
static redisReply *call_one(struct xrl_redis *r, int i, const struct xrl_redis_cmd *c,
			    bool asking, char *err, size_t elen)
{
	redisContext *ctx = node_ctx(r, i, err, elen);
	redisReply *rep;
	size_t lens[XRL_REDIS_MAX_ARGS];

	if (!ctx)
		return NULL;
	for (int k = 0; k < c->argc; k++)
		lens[k] = strlen(c->argv[k]);
	if (asking) {
		rep = redisCommand(ctx, "ASKING");
		r->st.calls++;
		if (!rep) {
			snprintf(err, elen, "%s", ctx->errstr);
			node_drop(r, i);
			return NULL;
		}
		freeReplyObject(rep);
	}
	r->st.calls++;
	rep = redisCommandArgv(ctx, c->argc, (const char **)c->argv, lens);
	if (!rep) {
		snprintf(err, elen, "%s", ctx->errstr);
		node_drop(r, i);
	}
	return rep;
}

static bool err_is(const redisReply *rep, const char *word)
{
	size_t l = strlen(word);

	return rep && rep->type == REDIS_REPLY_ERROR && !strncmp(rep->str, word, l) &&
	       (rep->str[l] == ' ' || !rep->str[l]);
}

/* "MOVED 3999 127.0.0.1:6381": the node named, added when new. */
static int redirect_node(struct xrl_redis *r, const redisReply *rep)
{
	const char *sp = strchr(rep->str, ' ');
	char host[64];
	int port;

	sp = sp ? strchr(sp + 1, ' ') : NULL;
	if (!sp || xrl_redis_hostport(sp + 1, host, sizeof(host), &port))
		return -1;
	return node_find(r, host, port);
}

/* NOSCRIPT: load the script at node i and call again. */
static void reload_script(struct xrl_redis *r, int i, struct xrl_redis_cmd *c, bool asking)
{
	struct xrl_redis_cmd load = { .argc = 3, .argv = { "SCRIPT", "LOAD", c->script } };
	redisReply *rep;
	char err[96];

	r->st.noscript++;
	rep = call_one(r, i, &load, asking, err, sizeof(err));
	if (!rep || rep->type == REDIS_REPLY_ERROR) {
		cmd_fail(c, "SCRIPT LOAD: %s", rep ? rep->str : err);
		if (rep)
			freeReplyObject(rep);
		return;
	}
	freeReplyObject(rep);
	freeReplyObject(c->reply);
	c->reply = call_one(r, i, c, asking, err, sizeof(err));
	if (!c->reply)
		cmd_fail(c, "%s", err);
}

/* A reply that is an error the layer follows: ASK, NOSCRIPT. Returns true
 * when the command is to be sent again (MOVED, after the map's refresh). */
static bool follow(struct xrl_redis *r, int i, struct xrl_redis_cmd *c, bool last)
{
	redisReply *rep = c->reply;
	char err[96];
	int ni;

	if (!rep || rep->type != REDIS_REPLY_ERROR)
		return false;
	if (err_is(rep, "MOVED") && r->cluster) {
		r->st.moved++;
		ni = redirect_node(r, rep);
		slots_refresh(r);
		if (ni >= 0)
			r->slots[xrl_redis_key_slot(c->key)] = ni;
		if (last) {
			cmd_fail(c, "%s", "MOVED twice");
			return false;
		}
		freeReplyObject(c->reply);
		c->reply = NULL;
		return true;
	}
	if (err_is(rep, "ASK") && r->cluster) {
		r->st.ask++;
		ni = redirect_node(r, rep);
		if (ni < 0) {
			cmd_fail(c, "%s", "ASK to an unknown node");
			return false;
		}
		freeReplyObject(c->reply);
		c->reply = call_one(r, ni, c, true, err, sizeof(err));
		if (!c->reply) {
			cmd_fail(c, "%s", err);
			return false;
		}
		if (err_is(c->reply, "NOSCRIPT") && c->script)
			reload_script(r, ni, c, true);
		return false;
	}
	if (err_is(rep, "NOSCRIPT") && c->script) {
		reload_script(r, i, c, false);
		return false;
	}
	if (err_is(rep, "TRYAGAIN") || err_is(rep, "CLUSTERDOWN"))
		r->st.tryagain++;
	return false;
}

/* Send the pending commands of node i pipelined, read their replies. */
static void run_node(struct xrl_redis *r, int i, struct xrl_redis_cmd *c, size_t n,
		     const int *at, bool *again, bool last)
{
	char err[96];
	redisContext *ctx = node_ctx(r, i, err, sizeof(err));
	size_t lens[XRL_REDIS_MAX_ARGS];
	bool broken = false;

	for (size_t k = 0; k < n; k++) {
		if (at[k] != i)
			continue;
		if (!ctx) {
			cmd_fail(&c[k], "%s", err);
			continue;
		}
		for (int a = 0; a < c[k].argc; a++)
			lens[a] = strlen(c[k].argv[a]);
		redisAppendCommandArgv(ctx, c[k].argc, c[k].argv, lens);
		r->st.calls++;
	}
	if (!ctx)
		return;
	for (size_t k = 0; k < n; k++) {
		void *rep = NULL;

		if (at[k] != i)
			continue;
		if (broken || redisGetReply(ctx, &rep) != REDIS_OK || !rep) {
			if (!broken)
				snprintf(err, sizeof(err), "%s:%d: %s", r->nodes[i].host,
					 r->nodes[i].port, ctx->errstr[0] ? ctx->errstr : "no reply");
			broken = true;
			cmd_fail(&c[k], "%s", err);
			continue;
		}
		c[k].reply = rep;
		again[k] = follow(r, i, &c[k], last);
	}
	if (broken) {
		node_drop(r, i);
		ctx = NULL;
		/* a single Redis: the next seed, next time */
		if (!r->cluster)
			r->cur = (r->cur + 1) % r->nseeds;
	}
}

int xrl_redis_batch(struct xrl_redis *r, struct xrl_redis_cmd *c, size_t n)
{
	int *at = calloc(n ? n : 1, sizeof(*at));
	bool *again = calloc(n ? n : 1, sizeof(*again));
	int failed = 0;

	if (!at || !again) {
		free(at);
		free(again);
		for (size_t k = 0; k < n; k++)
			cmd_fail(&c[k], "%s", "out of memory");
		return n;
	}
	for (size_t k = 0; k < n; k++) {
		c[k].reply = NULL;
		c[k].err[0] = '\0';
		at[k] = node_of(r, &c[k]);
		again[k] = false;
	}
	for (int pass = 0; pass < 2; pass++) {
		bool any = false;

		for (int i = 0; i < r->nnodes; i++)
			run_node(r, i, c, n, at, again, pass == 1);
		for (size_t k = 0; k < n; k++) {
			if (pass == 0 && again[k]) {
				at[k] = node_of(r, &c[k]);
				any = true;
			} else {
				at[k] = -1;	/* done */
			}
			again[k] = false;
		}
		if (!any)
			break;
	}
	for (size_t k = 0; k < n; k++) {
		if (!c[k].reply) {
			failed++;
		} else if (c[k].reply->type == REDIS_REPLY_ERROR) {
			snprintf(c[k].err, sizeof(c[k].err), "%s", c[k].reply->str);
			failed++;
		}
	}
	free(at);
	free(again);
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
