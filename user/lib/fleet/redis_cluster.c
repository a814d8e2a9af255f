// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The fleet's Redis client, its cluster layer: the slot map, the batches
 * (each node's commands pipelined, MOVED, ASK and NOSCRIPT followed in later
 * passes), the replies checked. redis_cluster.h says what it does.
 */
#include "fleet/redis_int.h"
#include "base/hostport.h"

#include <ctype.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

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
		int ni = xrl__redis_node_find(r, host, (int)m->element[1]->integer);

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
	r->slots_at = xrl__redis_now_ms() + SLOTS_RETRY_MS;
	/* the nodes without a failure first, then those that failed */
	for (int k = 0; k < 2 * r->nnodes && xrl__redis_now_ms() < deadline; k++) {
		struct item it[2] = { { .kind = I_AUTH }, { .kind = I_CMD } };
		int i = k % r->nnodes;
		double by = xrl__redis_now_ms() + r->o.timeout_ms;

		if ((k < r->nnodes) == failed[i])
			continue;
		if (!xrl__redis_node_ready(r, i, err, sizeof(err)))
			continue;
		if (xrl__redis_exchange(r, i, it, 2, &cs, by < deadline ? by : deadline, err, sizeof(err)))
			continue;
		if (it[0].rep && it[0].rep->type == REDIS_REPLY_ERROR) {
			xrl__redis_node_failed(r, i);	/* AUTH refused */
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

		if (xrl_redis_hostport(tok, host, sizeof(host), &port) || xrl__redis_node_find(r, host, port) < 0) {
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
		xrl__redis_node_drop(r, i);
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
	return xrl__redis_node_find(r, host, port);
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
	double deadline = xrl__redis_now_ms() + r->o.timeout_ms;
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
	if (xrl__redis_now_ms() >= batch_end) {
		/* not this node's fault: no back-off for it */
		r->st.deadline++;
		snprintf(err, sizeof(err), "%s:%d: the batch's deadline passed", r->nodes[i].host,
			 r->nodes[i].port);
		it = NULL;
	} else if (!xrl__redis_node_ready(r, i, err, sizeof(err))) {
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
	if (xrl__redis_exchange(r, i, it, nit, c, deadline, err, sizeof(err))) {
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
		xrl__redis_node_failed(r, i);
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
	return xrl_redis_batch_by(r, c, n, xrl__redis_now_ms() + r->o.batch_ms);
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
	if (r->cluster && r->need_slots && xrl__redis_now_ms() >= r->slots_at)
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
