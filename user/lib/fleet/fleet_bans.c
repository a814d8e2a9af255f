// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Fleet-wide bans, at each sync: one call of the bans script in the sync's
 * batch. Redis holds the fleet's bans in one hash, {xrl}:bans, each field a
 * prefix, its value "END REASON" with END the ban's end in ms of Redis'
 * TIME: one absolute end for every host. A host
 *   - publishes its new fleet bans (ban add ... scope fleet: the decider
 *     "fleet") and the bans its fleet rules set, for their time left;
 *   - withdraws a fleet ban that was lifted here before its end (ban del);
 *   - sets every ban of the hash it lacks, as the decider "fleet", for the
 *     time left until END by Redis' clock (so within a second of the same
 *     instant everywhere: bans are set to the second), and lifts the fleet
 *     bans the hash no longer holds.
 * The script drops the ended entries first. A failed sync changes no ban:
 * what is set stays until its own end.
 */
#include "fleet/fleet_int.h"
#include "maps/bans.h"
#include "model/addr.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * KEYS[1] the hash; ARGV[1] the most entries to return; ARGV[2] the host's
 * changes, one a line: "+ PREFIX MS REASON" (set for MS from now) or
 * "- PREFIX". Returns {now_ms, PREFIX, END, REASON, ...}. At most
 * XRL_FLEET_BANS_MAX entries are held: a new one past that is not set.
 */
const char xrl__fleet_bans_script[] =
	"local t = redis.call('TIME')\n"
	"local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)\n"
	"local max = tonumber(ARGV[1])\n"
	"local h = redis.call('HGETALL', KEYS[1])\n"
	"for i = 1, #h, 2 do\n"
	"  local e = tonumber(string.match(h[i + 1], '^(%d+)'))\n"
	"  if not e or e <= now then redis.call('HDEL', KEYS[1], h[i]) end\n"
	"end\n"
	"for line in string.gmatch(ARGV[2], '[^\\n]+') do\n"
	"  local op, p, rest = string.match(line, '^([+-]) (%S+) ?(.*)$')\n"
	"  if op == '-' then redis.call('HDEL', KEYS[1], p)\n"
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
	"  local e, why = string.match(h[i + 1], '^(%d+) ?(.*)$')\n"
	"  if e then out[#out + 1] = h[i]; out[#out + 1] = e; out[#out + 1] = why end\n"
	"end\n"
	"local longest = 0\n"
	"for i = 3, #out, 3 do longest = math.max(longest, tonumber(out[i]) - now) end\n"
	"if #out > 1 then redis.call('PEXPIRE', KEYS[1], longest + 1000) end\n"
	"return out\n";

static bool same(const struct fban *a, int family, __u8 plen, const __u8 *addr)
{
	return a->family == family && a->prefix_len == plen && !memcmp(a->addr, addr, 16);
}

static struct fban *known_find(struct xrl_fleet *f, int family, __u8 plen, const __u8 *addr)
{
	for (size_t i = 0; i < f->nknown; i++)
		if (same(&f->known[i], family, plen, addr))
			return &f->known[i];
	return NULL;
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

/* a fleet ban of this host: the decider "fleet"'s, or a fleet rule's */
static bool shared(const struct xrl_fleet *f, const struct xrl_ban_entry *e)
{
	if (e->ended)
		return false;
	if (e->b.origin == XRL_BAN_RULE)
		return is_fleet_rule(f, e->b.rule_id);
	return e->b.origin == XRL_BAN_DECIDER && !strncmp(e->b.who, XRL_BAN_FLEET_WHO, sizeof(e->b.who));
}

int xrl__fleet_bans_ops(struct xrl_fleet *f, char **out)
{
	struct xrl_ban_entry *v = NULL;
	size_t n = 0, len = 0, cap = 256;
	char *ops = malloc(cap);
	int err;

	*out = NULL;
	if (!ops)
		return -ENOMEM;
	ops[0] = '\0';
	err = xrl_bans_get(f->x, &v, &n);
	if (err) {
		free(ops);
		return err;
	}
	free(f->local);
	f->local = calloc(n ? n : 1, sizeof(*f->local));
	f->nlocal = 0;
	for (size_t i = 0; f->local && i < n; i++) {
		const struct xrl_ban_entry *e = &v[i];
		char pfx[64], line[200];
		int l;

		if (!shared(f, e))
			continue;
		f->local[f->nlocal++] = (struct fban){ .family = e->family, .prefix_len = e->prefix_len };
		memcpy(f->local[f->nlocal - 1].addr, e->addr, 16);
		if (known_find(f, e->family, e->prefix_len, e->addr) || !e->b.expires_ns)
			continue;	/* the fleet has it; a fleet ban has an end */
		prefix_text(e->family, e->prefix_len, e->addr, pfx, sizeof(pfx));
		if (e->b.origin == XRL_BAN_RULE)
			l = snprintf(line, sizeof(line), "+ %s %llu rule %u on %s\n", pfx,
				     (unsigned long long)(e->left_ns / 1000000), e->b.rule_id, f->cfg.host);
		else
			l = snprintf(line, sizeof(line), "+ %s %llu %s\n", pfx,
				     (unsigned long long)(e->left_ns / 1000000), e->b.reason);
		if (l <= 0 || (size_t)l >= sizeof(line) || strpbrk(line, "\r") || strchr(line, '\n') != line + l - 1)
			continue;
		if (len + l + 1 > cap) {
			char *p = realloc(ops, cap * 2 + l);

			if (!p)
				break;
			ops = p;
			cap = cap * 2 + l;
		}
		memcpy(ops + len, line, l + 1);
		len += l;
		f->st.bans_published++;
	}
	/* known here at the last sync, gone before its end: lifted here */
	for (size_t i = 0; i < f->nknown; i++) {
		const struct fban *k = &f->known[i];
		bool here = false;
		char pfx[64], line[100];
		int l;

		for (size_t j = 0; j < f->nlocal && !here; j++)
			here = same(&f->local[j], k->family, k->prefix_len, k->addr);
		if (here || k->end_ms <= f->redis_now_ms + 1000)
			continue;	/* or ended: the script drops it */
		prefix_text(k->family, k->prefix_len, k->addr, pfx, sizeof(pfx));
		l = snprintf(line, sizeof(line), "- %s\n", pfx);
		if (len + l + 1 > cap) {
			char *p = realloc(ops, cap * 2 + l);

			if (!p)
				break;
			ops = p;
			cap = cap * 2 + l;
		}
		memcpy(ops + len, line, l + 1);
		len += l;
		f->st.bans_withdrawn++;
	}
	free(v);
	*out = ops;
	return 0;
}

/* The script's reply: the fleet's bans, set here and lifted here. A reply
 * of the wrong shape changes nothing (-EIO). */
void xrl_fleet_set_bans_lock(struct xrl_fleet *f, pthread_mutex_t *m)
{
	f->bans_lock = m;
}

static int bans_apply(struct xrl_fleet *f, const redisReply *rep);

/* the daemon's lock, then the pin-directory lock of every writer */
int xrl__fleet_bans_apply(struct xrl_fleet *f, const redisReply *rep)
{
	int err;

	if (f->bans_lock)
		pthread_mutex_lock(f->bans_lock);
	err = xrl_lock(f->x);
	if (!err) {
		xrl_bans_sweep(f->x, NULL, NULL, NULL);	/* once, not per ban */
		err = bans_apply(f, rep);
		xrl_unlock(f->x);
	}
	if (f->bans_lock)
		pthread_mutex_unlock(f->bans_lock);
	return err;
}

static int bans_apply(struct xrl_fleet *f, const redisReply *rep)
{
	struct fban *next;
	size_t nnext = 0;
	long long now;

	if (!rep || rep->type != REDIS_REPLY_ARRAY || rep->elements < 1 || (rep->elements - 1) % 3 ||
	    rep->element[0]->type != REDIS_REPLY_INTEGER) {
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
	for (size_t i = 1; i + 2 < rep->elements; i += 3) {
		struct xrl_rule_entry e;
		struct xrl_ban_entry cur;
		struct xrl_ban_spec s = { .origin = XRL_BAN_DECIDER };
		char *end;
		long long until = strtoll(rep->element[i + 1]->str, &end, 10);
		bool here = false;

		if (*end || until <= now || xrl_prefix_parse(rep->element[i]->str, &e)) {
			f->st.bad_replies++;
			continue;
		}
		next[nnext] = (struct fban){ .family = e.family, .prefix_len = e.prefix_len, .end_ms = until };
		memcpy(next[nnext++].addr, e.addr, 16);
		for (size_t j = 0; j < f->nlocal && !here; j++)
			here = same(&f->local[j], e.family, e.prefix_len, e.addr);
		if (here)
			continue;	/* this host's own, or set at an earlier sync */
		/* a ban of another origin that ends later stays */
		if (!xrl_ban_get(f->x, e.family, e.addr, e.prefix_len, &cur) && !cur.ended &&
		    (!cur.b.expires_ns || cur.left_ns / 1000000 >= (__u64)(until - now)))
			continue;
		s.family = e.family;
		s.prefix_len = e.prefix_len;
		memcpy(s.addr, e.addr, 16);
		/* to the nearest second of the fleet's end */
		s.duration_s = (__u64)(until - now + 500) / 1000;
		if (!s.duration_s)
			s.duration_s = 1;
		if (s.duration_s > XRL_BAN_MAX_S)
			s.duration_s = XRL_BAN_MAX_S;
		snprintf(s.who, sizeof(s.who), "%s", XRL_BAN_FLEET_WHO);
		for (size_t k = 0, o = 0; rep->element[i + 2]->str[k] && o + 1 < sizeof(s.reason); k++) {
			char c = rep->element[i + 2]->str[k];

			s.reason[o++] = c >= ' ' && c <= '~' ? c : '?';
		}
		if (!xrl_ban_add_nosweep(f->x, &s, &(bool){ false }))
			f->st.bans_set++;
	}
	/* the fleet's bans known at the last sync and gone from the hash: lifted
	 * (only the decider "fleet"'s: this host's rule bans end on their own) */
	for (size_t i = 0; i < f->nknown; i++) {
		const struct fban *k = &f->known[i];
		bool still = false;

		for (size_t j = 0; j < nnext && !still; j++)
			still = same(&next[j], k->family, k->prefix_len, k->addr);
		if (!still && !xrl_ban_del_nosweep(f->x, k->family, k->addr, k->prefix_len, XRL_BAN_FLEET_WHO))
			f->st.bans_lifted++;
	}
	free(f->known);
	f->known = next;
	f->nknown = nnext;
	f->redis_now_ms = now;
	return 0;
}
