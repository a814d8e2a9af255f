// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Fleet-wide bans: an exchange with Redis of its own, after a sync that
 * went through (never inside the lease batch), at least once a second and,
 * when this host's bans changed, at most every BANS_SOON_MS. Redis holds
 * the fleet's bans in one hash, {xrl}:bans, each field a prefix, its value
 * "END REASON" with END the ban's end in ms of Redis' TIME: one absolute
 * end for every host. A host
 *   - publishes its own fleet bans (ban add ... scope fleet: the decider
 *     "fleet") and the bans its fleet rules set, for their time left, when
 *     the hash lacks them (again after Redis lost the hash);
 *   - withdraws a fleet ban that it held (its own, or one set here from
 *     Redis) and that was lifted here before its end (ban del): nothing
 *     bans the prefix here any more. The hash keeps a tombstone until the
 *     ban's end, and every host lifts its copy (and the publisher its own);
 *   - sets every ban of the hash that it does not publish itself, as the
 *     decider "fleet.in", for the time left until END by Redis' clock (so
 *     within a second of the same instant everywhere: bans are set to the
 *     second). The bans set from Redis are never published again, and a
 *     host reads the hash once before it publishes: a host that was down
 *     while a fleet ban was lifted does not bring it back. A hash lost
 *     (no tombstones) lifts nothing: the publishers publish again.
 * The ban tables are read only when the ban counters of the deciders and
 * rules moved (or every BANS_SCAN_MS), never swept here; the bans are
 * written under a lock only tried (busy: again at the next exchange). The
 * script drops the ended entries first. A failed exchange changes no ban:
 * what is set stays until its own end.
 */
#include "fleet/fleet_int.h"
#include "maps/bans.h"
#include "maps/xrl.h"
#include "model/addr.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BANS_EVERY_MS	1000	/* an exchange at least this often */
#define BANS_SOON_MS	250	/* after a change here, at most this often */
#define BANS_SCAN_MS	10000	/* the tables read at least this often */

/*
 * KEYS[1] the hash; ARGV[1] the most entries to return; ARGV[2] the host's
 * changes, one a line: "+ PREFIX MS REASON" (set for MS from now) or
 * "- PREFIX" (withdrawn: a tombstone "-END" until the ban's end, so that
 * every host lifts it, and a host that was away hears of it). Returns
 * {now_ms, PREFIX, END, REASON, ...}, END "-END" for a tombstone. At most
 * XRL_FLEET_BANS_MAX entries are held: a new one past that is not set.
 */
const char xrl__fleet_bans_script[] =
	"local t = redis.call('TIME')\n"
	"local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)\n"
	"local max = tonumber(ARGV[1])\n"
	"local h = redis.call('HGETALL', KEYS[1])\n"
	"for i = 1, #h, 2 do\n"
	"  local e = tonumber(string.match(h[i + 1], '^%-?(%d+)'))\n"
	"  if not e or e <= now then redis.call('HDEL', KEYS[1], h[i]) end\n"
	"end\n"
	"for line in string.gmatch(ARGV[2], '[^\\n]+') do\n"
	"  local op, p, rest = string.match(line, '^([+-]) (%S+) ?(.*)$')\n"
	"  if op == '-' then\n"
	"    local e = string.match(redis.call('HGET', KEYS[1], p) or '', '^(%d+)')\n"
	"    if e then redis.call('HSET', KEYS[1], p, '-' .. e) end\n"
	"  elseif op == '+' then\n"
	"    local ms, why = string.match(rest, '^(%d+) ?(.*)$')\n"
	"    if ms and (redis.call('HEXISTS', KEYS[1], p) == 1 or redis.call('HLEN', KEYS[1]) < max) then\n"
	"      redis.call('HSET', KEYS[1], p, tostring(now + tonumber(ms)) .. ' ' .. why)\n"
	"    end\n"
	"  end\n"
	"end\n"
	"local out = {now}\n"
	"h = redis.call('HGETALL', KEYS[1])\n"
	"for i = 1, #h, 2 do\n"
	"  local d, e, why = string.match(h[i + 1], '^(%-?)(%d+) ?(.*)$')\n"
	"  if e then out[#out + 1] = h[i]; out[#out + 1] = d .. e; out[#out + 1] = why end\n"
	"end\n"
	"local longest = 0\n"
	"for i = 3, #out, 3 do longest = math.max(longest, math.abs(tonumber(out[i])) - now) end\n"
	"if #out > 1 then redis.call('PEXPIRE', KEYS[1], longest + 1000) end\n"
	"return out\n";

static int cmp_fban(const void *a, const void *b)
{
	const struct fban *x = a, *y = b;

	if (x->family != y->family)
		return x->family - y->family;
	if (x->prefix_len != y->prefix_len)
		return x->prefix_len - y->prefix_len;
	return memcmp(x->addr, y->addr, sizeof(x->addr));
}

/* v sorted by cmp_fban */
static struct fban *find(struct fban *v, size_t n, int family, __u8 plen, const __u8 *addr)
{
	struct fban k = { .family = family, .prefix_len = plen };

	if (!n)
		return NULL;
	memcpy(k.addr, addr, sizeof(k.addr));
	return bsearch(&k, v, n, sizeof(*v), cmp_fban);
}

static void sort(struct fban *v, size_t n)
{
	if (n > 1)
		qsort(v, n, sizeof(*v), cmp_fban);
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static bool is_fleet_rule(const struct xrl_fleet *f, __u32 id)
{
	for (size_t i = 0; i < f->nrules; i++)
		if (f->rules[i].id == id)
			return true;
	return false;
}

static void prefix_text(int family, __u8 plen, const __u8 *addr, char *buf, size_t len)
{
	struct xrl_rule_entry e = { .family = (__u8)family, .prefix_len = plen };

	memcpy(e.addr, addr, sizeof(e.addr));
	xrl_prefix_format(&e, buf, len);
}

static bool decider_is(const struct xrl_ban *b, const char *who)
{
	return b->origin == XRL_BAN_DECIDER && !strncmp(b->who, who, sizeof(b->who));
}

/* a fleet ban this host publishes: the decider "fleet"'s, or a fleet rule's */
static bool own(const struct xrl_fleet *f, const struct xrl_ban_entry *e)
{
	if (e->ended)
		return false;
	if (e->b.origin == XRL_BAN_RULE)
		return is_fleet_rule(f, e->b.rule_id);
	return decider_is(&e->b, XRL_BAN_FLEET_WHO);
}

/* what moves when a decider or a rule sets or lifts a ban */
static __u64 bans_gen(struct xrl *x)
{
	struct xrl_ban_totals t;

	if (xrl_ban_totals_get(x, &t))
		return 0;
	return t.set[XRL_BAN_DECIDER] + t.deleted[XRL_BAN_DECIDER] + t.expired[XRL_BAN_DECIDER] +
	       t.set[XRL_BAN_RULE] + t.deleted[XRL_BAN_RULE] + t.expired[XRL_BAN_RULE];
}

struct buf {
	char *s;
	size_t len, cap;
};

static void put(struct buf *b, const char *line)
{
	size_t l = strlen(line);

	if (!b->s || b->len + l + 1 > b->cap) {
		size_t cap = (b->cap ? b->cap * 2 : 256) + l;
		char *p = realloc(b->s, cap);

		if (!p)
			return;
		if (!b->s)
			p[0] = '\0';
		b->s = p;
		b->cap = cap;
	}
	memcpy(b->s + b->len, line, l + 1);
	b->len += l;
}

static struct fban fban_of(const struct xrl_ban_entry *e)
{
	struct fban k = { .family = e->family, .prefix_len = e->prefix_len };

	memcpy(k.addr, e->addr, sizeof(k.addr));
	return k;
}

/*
 * Read the tables: this host's own fleet bans (local) and the bans it set
 * from Redis (held). A prefix it held at the last read, that nothing bans
 * now (ban del) and that the hash still has: withdrawn.
 */
static int scan(struct xrl_fleet *f, struct buf *ops)
{
	struct fban *local, *held;
	struct xrl_ban_entry *v = NULL;
	size_t n = 0, nl = 0, nh = 0;
	int err;

	f->bans_gen = bans_gen(f->x);
	if ((err = xrl_bans_get(f->x, &v, &n)))
		return err;
	local = calloc(n + 1, sizeof(*local));
	held = calloc(n + 1, sizeof(*held));
	if (!local || !held) {
		free(local);
		free(held);
		free(v);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		const struct xrl_ban_entry *e = &v[i];

		if (own(f, e)) {
			struct fban *k = &local[nl++];

			*k = fban_of(e);
			k->expires_ns = e->b.expires_ns;
			if (e->b.origin == XRL_BAN_RULE)
				snprintf(k->reason, sizeof(k->reason), "rule %u on %s", e->b.rule_id, f->cfg.host);
			else
				snprintf(k->reason, sizeof(k->reason), "%s", e->b.reason);
		} else if (!e->ended && decider_is(&e->b, XRL_BAN_FLEET_IN_WHO)) {
			struct fban *old = find(f->held, f->nheld, e->family, e->prefix_len, e->addr);

			held[nh] = fban_of(e);
			held[nh++].end_ms = old ? old->end_ms : 0;
		}
	}
	free(v);
	sort(local, nl);
	sort(held, nh);
	for (int pass = 0; pass < 2; pass++) {
		const struct fban *w = pass ? f->held : f->local;
		size_t nw = pass ? f->nheld : f->nlocal;

		for (size_t i = 0; i < nw; i++) {
			const struct fban *k = &w[i], *in = find(f->known, f->nknown, k->family,
								  k->prefix_len, k->addr);
			struct xrl_ban_entry cur;
			char pfx[64], line[100];

			if (find(local, nl, k->family, k->prefix_len, k->addr) ||
			    find(held, nh, k->family, k->prefix_len, k->addr) ||
			    !in || in->tomb || in->end_ms <= f->redis_now_ms + 1000 ||
			    xrl_ban_get(f->x, k->family, k->addr, k->prefix_len, &cur) != -ENOENT)
				continue;	/* still held, not the fleet's, ending, or banned here still */
			prefix_text(k->family, k->prefix_len, k->addr, pfx, sizeof(pfx));
			snprintf(line, sizeof(line), "- %s\n", pfx);
			put(ops, line);
			f->st.bans_withdrawn++;
		}
	}
	free(f->local);
	free(f->held);
	f->local = local;
	f->nlocal = nl;
	f->held = held;
	f->nheld = nh;
	f->bans_rules = f->rules;
	f->bans_scan_ms = now_ms();
	return 0;
}

/* this host's own fleet bans the hash lacks: published for their time left */
static void publish(struct xrl_fleet *f, struct buf *ops)
{
	__u64 now = xrl_now_ns(f->x);

	if (!f->bans_read)	/* first hear what the fleet withdrew meanwhile */
		return;
	for (size_t i = 0; i < f->nlocal; i++) {
		const struct fban *k = &f->local[i];
		char pfx[64], line[200];
		int l;

		const struct fban *in = find(f->known, f->nknown, k->family, k->prefix_len, k->addr);

		if (!k->expires_ns || (__s64)(k->expires_ns - now) <= 0 || (in && !in->tomb))
			continue;	/* a fleet ban has an end; ended; the fleet has it */
		prefix_text(k->family, k->prefix_len, k->addr, pfx, sizeof(pfx));
		l = snprintf(line, sizeof(line), "+ %s %llu %s\n", pfx,
			     (unsigned long long)((k->expires_ns - now) / 1000000), k->reason);
		if (l <= 0 || (size_t)l >= sizeof(line) || strpbrk(line, "\r") ||
		    strchr(line, '\n') != line + l - 1)
			continue;
		put(ops, line);
		f->st.bans_published++;
	}
}

void xrl_fleet_set_bans_lock(struct xrl_fleet *f, pthread_mutex_t *m)
{
	f->bans_lock = m;
}

static int bans_apply(struct xrl_fleet *f, const redisReply *rep);

/* The reply applied under the daemon's lock, then the pin-directory lock of
 * every writer, both only tried: busy, the next exchange comes soon. */
static int apply_locked(struct xrl_fleet *f, const redisReply *rep)
{
	__u64 before;
	int err;

	if (f->bans_lock && pthread_mutex_trylock(f->bans_lock))
		return -EBUSY;
	err = xrl_trylock(f->x);
	if (!err) {
		before = bans_gen(f->x);
		err = bans_apply(f, rep);
		/* this exchange's own writes are no change to read back */
		if (before == f->bans_gen)
			f->bans_gen = bans_gen(f->x);
		xrl_unlock(f->x);
	}
	if (f->bans_lock)
		pthread_mutex_unlock(f->bans_lock);
	return err;
}

void xrl__fleet_bans_exchange(struct xrl_fleet *f)
{
	double t = now_ms(), since = t - f->bans_last_ms;
	bool changed = !f->bans_scanned || bans_gen(f->x) != f->bans_gen || f->bans_rules != f->rules ||
		       t - f->bans_scan_ms >= BANS_SCAN_MS;
	struct buf ops = {};
	char max[16];
	struct xrl_redis_cmd c;
	int err;

	if (since < BANS_SOON_MS || (since < BANS_EVERY_MS && !changed && !f->bans_soon))
		return;
	f->bans_last_ms = t;
	f->bans_soon = false;
	put(&ops, "");
	if (changed) {
		if (scan(f, &ops)) {
			f->bans_soon = true;
			free(ops.s);
			return;
		}
		f->bans_scanned = true;
	}
	publish(f, &ops);
	if (!ops.s) {
		f->bans_soon = true;
		return;
	}
	snprintf(max, sizeof(max), "%d", XRL_FLEET_BANS_MAX);
	c = (struct xrl_redis_cmd){
		.argc = 6, .argv = { "EVAL", xrl__fleet_bans_script, "1", BANS_KEY, max, ops.s },
		.key = BANS_KEY,
	};
	xrl_redis_batch_by(f->r, &c, 1, now_ms() + xrl_fleet_batch_ms(f->cfg.sync_ms));
	if (c.reply && c.reply->type != REDIS_REPLY_ERROR) {
		err = apply_locked(f, c.reply);
		if (err == -EBUSY)
			f->bans_soon = true;
	} else {
		f->bans_soon = true;
	}
	xrl_redis_batch_free(&c, 1);
	free(ops.s);
}

static int bans_apply(struct xrl_fleet *f, const redisReply *rep)
{
	struct fban *next;
	size_t nnext = 0, nheld = f->nheld;
	long long now;

	if (!rep || rep->type != REDIS_REPLY_ARRAY || rep->elements < 1 || (rep->elements - 1) % 3 ||
	    rep->elements > 3 * XRL_FLEET_BANS_MAX + 1 || rep->element[0]->type != REDIS_REPLY_INTEGER) {
		f->st.bad_replies++;
		return -EIO;
	}
	for (size_t i = 1; i < rep->elements; i++)
		if (rep->element[i]->type != REDIS_REPLY_STRING) {
			f->st.bad_replies++;
			return -EIO;
		}
	now = rep->element[0]->integer;
	next = calloc((rep->elements - 1) / 3 + 1, sizeof(*next));
	if (!next)
		return -ENOMEM;
	/* room for every entry of the reply added to what is held */
	{
		struct fban *h = realloc(f->held, (f->nheld + (rep->elements - 1) / 3 + 1) * sizeof(*h));

		if (!h) {
			free(next);
			return -ENOMEM;
		}
		f->held = h;
	}
	for (size_t i = 1; i + 2 < rep->elements; i += 3) {
		struct xrl_rule_entry e;
		struct xrl_ban_spec s = { .origin = XRL_BAN_DECIDER };
		struct fban *h;
		const char *v = rep->element[i + 1]->str;
		bool tomb = v[0] == '-';
		char *end;
		long long until;

		v += tomb;
		until = v[0] >= '0' && v[0] <= '9' ? strtoll(v, &end, 10) : 0;
		if (!until || *end || until <= now || xrl_prefix_parse(rep->element[i]->str, &e)) {
			f->st.bad_replies++;
			continue;
		}
		/* no end past the longest ban (nor an overflow below) */
		if (until - now > (long long)XRL_BAN_MAX_S * 1000)
			until = now + (long long)XRL_BAN_MAX_S * 1000;
		next[nnext] = (struct fban){ .family = e.family, .prefix_len = e.prefix_len, .end_ms = until,
					     .tomb = tomb };
		memcpy(next[nnext++].addr, e.addr, 16);
		h = find(f->held, f->nheld, e.family, e.prefix_len, e.addr);
		if (tomb) {	/* withdrawn by a host: lifted here, whoever published it */
			struct fban *l = find(f->local, f->nlocal, e.family, e.prefix_len, e.addr);

			if (h && h->end_ms >= 0) {
				if (!xrl_ban_del_nosweep(f->x, e.family, e.addr, e.prefix_len,
							 XRL_BAN_FLEET_IN_WHO))
					f->st.bans_lifted++;
				h->end_ms = -1;
			}
			/* this host's "fleet" ban (a fleet rule's ends on its own) */
			if (l && l->expires_ns) {
				if (!xrl_ban_del_nosweep(f->x, e.family, e.addr, e.prefix_len, XRL_BAN_FLEET_WHO))
					f->st.bans_lifted++;
				l->expires_ns = 0;
			}
			continue;
		}
		if (find(f->local, f->nlocal, e.family, e.prefix_len, e.addr))
			continue;	/* this host's own */
		if (h && h->end_ms == until)
			continue;	/* set at an earlier exchange */
		s.family = e.family;
		s.prefix_len = e.prefix_len;
		memcpy(s.addr, e.addr, 16);
		/* to the nearest second of the fleet's end */
		s.duration_s = (__u64)(until - now + 500) / 1000;
		if (!s.duration_s)
			s.duration_s = 1;
		snprintf(s.who, sizeof(s.who), "%s", XRL_BAN_FLEET_IN_WHO);
		for (size_t k = 0, o = 0; rep->element[i + 2]->str[k] && o + 1 < sizeof(s.reason); k++) {
			char c = rep->element[i + 2]->str[k];

			s.reason[o++] = c >= ' ' && c <= '~' ? c : '?';
		}
		/* 1: another origin's ban ending later stays (not held) */
		if (xrl_ban_add_nosweep(f->x, &s, &(bool){ false })) {
			if (h)
				h->end_ms = -1;	/* no longer ours */
			continue;
		}
		f->st.bans_set++;
		if (h) {
			h->end_ms = until;
		} else {
			f->held[nheld] = next[nnext - 1];
			f->held[nheld++].end_ms = until;
		}
	}
	sort(next, nnext);
	/* what is held without a tombstone stays until its end, in the hash or
	 * not: a hash lost (a Redis restart, a failover, a flush) lifts no ban */
	{
		size_t o = 0;

		for (size_t i = 0; i < nheld; i++)
			if (f->held[i].end_ms >= 0)
				f->held[o++] = f->held[i];
		f->nheld = o;
		sort(f->held, f->nheld);
	}
	/* this host's own fleet bans the hash lost (a Redis restart, a
	 * failover, a flush): published again at the next exchange */
	for (size_t i = 0; i < f->nlocal; i++) {
		const struct fban *k = &f->local[i];

		if (f->bans_read && k->expires_ns && (__s64)(k->expires_ns - xrl_now_ns(f->x)) > 1000000000LL &&
		    !find(next, nnext, k->family, k->prefix_len, k->addr))
			f->bans_soon = true;
	}
	free(f->known);
	f->known = next;
	f->nknown = nnext;
	f->redis_now_ms = now;
	f->bans_read = true;
	return 0;
}
