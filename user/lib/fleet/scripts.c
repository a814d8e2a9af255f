// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Fleet-wide limits, the server's side: the Lua scripts (the fleet GCRA,
 * the live hosts, the hot keys), loaded by SHA1, and the server's eviction
 * policy read.
 */
#include "fleet/fleet_int.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * The fleet GCRA of one key. KEYS[1] {xrl:RULE:KEY} (a hash: tat, and each
 * host's last ask); ARGV: emission interval (us), burst, tokens given back,
 * tokens wanted, host, the key's expiry beyond its TAT (ms), and 1 when this
 * host knows the key exists (it had a reply for it less than
 * xrl_fleet_known_ms() ago, and every call keeps the key at least `ttl`
 * longer). Redis' TIME is the only clock. A key that is missing although a
 * host knows it exists was lost (FLUSHALL, eviction, a restart without
 * persistence): it starts spent, TAT at now + burst, not full, so that a
 * loss never hands out a burst again. The leftover goes back first; the
 * grant is what is available, split in proportion to what the hosts asked
 * lately when they ask for more together. Returns {grant, available, lost}.
 */
const char xrl__fleet_lease_script[] =
	"local t = redis.call('TIME')\n"
	"local now = tonumber(t[1]) * 1000000 + tonumber(t[2])\n"
	"local T = tonumber(ARGV[1])\n"
	"local L = tonumber(ARGV[2]) * T\n"
	"local ret, want, host = tonumber(ARGV[3]), tonumber(ARGV[4]), ARGV[5]\n"
	"local ttl = tonumber(ARGV[6])\n"
	"local lost = 0\n"
	"local tat = tonumber(redis.call('HGET', KEYS[1], 'tat'))\n"
	"if not tat then\n"
	"  if ARGV[7] == '1' then tat = now + L; lost = 1 else tat = now end\n"
	"end\n"
	"if tat < now then tat = now end\n"
	"if ret > 0 then tat = math.max(now, tat - ret * T) end\n"
	"local avail = math.floor((now + L - tat) / T + 1e-6)\n"
	"if avail < 0 then avail = 0 end\n"
	"local others = 0\n"
	"local h = redis.call('HGETALL', KEYS[1])\n"
	"for i = 1, #h, 2 do\n"
	"  local f = h[i]\n"
	"  if string.sub(f, 1, 2) == 'a:' and string.sub(f, 3) ~= host then\n"
	"    local at = tonumber(redis.call('HGET', KEYS[1], 'w:' .. string.sub(f, 3))) or 0\n"
	"    if now - at < ttl * 1000 then others = others + tonumber(h[i + 1]) end\n"
	"  end\n"
	"end\n"
	"local g = want\n"
	"if want + others > avail and want > 0 then g = math.floor(avail * want / (want + others)) end\n"
	"if g > avail then g = avail end\n"
	"tat = tat + g * T\n"
	"redis.call('HSET', KEYS[1], 'tat', string.format('%.3f', tat), 'a:' .. host, want, 'w:' .. host, now)\n"
	"redis.call('PEXPIRE', KEYS[1], math.ceil((tat - now) / 1000) + ttl)\n"
	"return {g, avail, lost}\n";

/* The live hosts: KEYS[1] a sorted set scored by each host's expiry (ms,
 * Redis' clock). ARGV: host, TTL ms (0: leave). Returns N. */
const char xrl__fleet_hosts_script[] =
	"local t = redis.call('TIME')\n"
	"local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)\n"
	"local ttl = tonumber(ARGV[2])\n"
	"if ttl == 0 then return redis.call('ZREM', KEYS[1], ARGV[1]) end\n"
	"redis.call('ZADD', KEYS[1], now + ttl, ARGV[1])\n"
	"redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)\n"
	"redis.call('PEXPIRE', KEYS[1], ttl * 2)\n"
	"return redis.call('ZCARD', KEYS[1])\n";

/*
 * The hot keys of one rule: KEYS[1] {xrl:hot:RULE}, a sorted set scored by
 * each key's expiry (ms, Redis' clock). ARGV: TTL ms, the keys this host
 * holds a lease for ("ADDR/LEN ..."), the most the set keeps. Returns the
 * keys not expired, the latest expiries first: a key hot on one host is
 * promoted on every host where it has traffic, so that no host admits it
 * at its share beside the fleet's leases. The set keeps the keys with the
 * latest expiries, so that neither a big fleet nor a writer of junk makes
 * it, or a reply, grow without limit.
 */
const char xrl__fleet_hot_script[] =
	"local t = redis.call('TIME')\n"
	"local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)\n"
	"local ttl, max = tonumber(ARGV[1]), tonumber(ARGV[3])\n"
	"for k in string.gmatch(ARGV[2], '%S+') do redis.call('ZADD', KEYS[1], now + ttl, k) end\n"
	"redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)\n"
	"local n = redis.call('ZCARD', KEYS[1])\n"
	"if n > max then redis.call('ZREMRANGEBYRANK', KEYS[1], 0, n - max - 1) end\n"
	"redis.call('PEXPIRE', KEYS[1], ttl * 2)\n"
	"return redis.call('ZREVRANGE', KEYS[1], 0, max - 1)\n";

/* A script's SHA1 as SCRIPT LOAD returns it: 40 hex digits. */
static bool sha_ok(const redisReply *rep)
{
	if (rep->type != REDIS_REPLY_STRING || rep->len != 40)
		return false;
	for (size_t i = 0; i < 40; i++)
		if (!strchr("0123456789abcdef", rep->str[i]))
			return false;
	return true;
}

int xrl__fleet_load_scripts(struct xrl_fleet *f, double end)
{
	struct xrl_redis_cmd c[3] = {
		{ .argc = 3, .argv = { "SCRIPT", "LOAD", xrl__fleet_lease_script }, .key = HOSTS_KEY },
		{ .argc = 3, .argv = { "SCRIPT", "LOAD", xrl__fleet_hosts_script }, .key = HOSTS_KEY },
		{ .argc = 3, .argv = { "SCRIPT", "LOAD", xrl__fleet_hot_script }, .key = HOSTS_KEY },
	};
	int bad = xrl_redis_batch_by(f->r, c, 3, end);

	if (!bad && sha_ok(c[0].reply) && sha_ok(c[1].reply) && sha_ok(c[2].reply)) {
		snprintf(f->sha_lease, sizeof(f->sha_lease), "%s", c[0].reply->str);
		snprintf(f->sha_hosts, sizeof(f->sha_hosts), "%s", c[1].reply->str);
		snprintf(f->sha_hot, sizeof(f->sha_hot), "%s", c[2].reply->str);
	} else {
		for (int i = 0; i < 3; i++)
			if (c[i].err[0])
				snprintf(f->st.last_error, sizeof(f->st.last_error), "%s", c[i].err);
		if (!bad) {
			f->st.bad_replies++;
			snprintf(f->st.last_error, sizeof(f->st.last_error), "SCRIPT LOAD: not a SHA1");
		}
		bad = bad ? bad : 1;
	}
	xrl_redis_batch_free(c, 3);
	if (!bad)
		f->policy_due = 0;	/* connected anew: read the policy */
	return bad ? -EIO : 0;
}

/* A value of the server's, for a log line and a metric's label: its
 * letters, digits and '-' only (an untrusted reply), never empty. */
static void policy_word(char *dst, size_t len, const char *src, size_t n)
{
	size_t j = 0;

	for (size_t i = 0; i < n && j + 1 < len; i++) {
		char ch = src[i];

		dst[j++] = (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '-' ? ch : '?';
	}
	dst[j] = '\0';
}

/* maxmemory-policy and maxmemory out of INFO memory's "NAME:VALUE" lines */
static void policy_from_info(const char *info, char *policy, size_t len, long long *maxmem)
{
	for (const char *l = info; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		size_t n = strcspn(l, "\r\n");

		if (!strncmp(l, "maxmemory_policy:", 17))
			policy_word(policy, len, l + 17, n - 17);
		else if (!strncmp(l, "maxmemory:", 10) && l[10] >= '0' && l[10] <= '9')
			*maxmem = strtoll(l + 10, NULL, 10);
	}
}

/*
 * What the server does when its memory is full (README, "What the client
 * requires of Redis"): only noeviction, or no memory limit, keeps every
 * fleet key; any other policy may evict them (they all have an expiry, so
 * the volatile-* policies too). Read with CONFIG GET, or from INFO memory
 * when CONFIG is renamed away or refused to this user; neither: unknown,
 * taken as "may evict". On the node of the live hosts' key, within the
 * sync's deadline end.
 */
void xrl__fleet_check_policy(struct xrl_fleet *f, double end)
{
	struct xrl_redis_cmd c = { .argc = 3, .argv = { "CONFIG", "GET", "maxmemory*" }, .key = HOSTS_KEY };
	char policy[sizeof(f->st.policy)] = "";
	long long maxmem = -1;
	bool evict, changed;

	if (!xrl_redis_batch_by(f->r, &c, 1, end) && c.reply && c.reply->type == REDIS_REPLY_ARRAY) {
		for (size_t i = 0; i + 1 < c.reply->elements; i += 2) {
			const redisReply *k = c.reply->element[i], *v = c.reply->element[i + 1];

			if (k->type != REDIS_REPLY_STRING || v->type != REDIS_REPLY_STRING)
				continue;
			if (!strcmp(k->str, "maxmemory-policy"))
				policy_word(policy, sizeof(policy), v->str, v->len);
			else if (!strcmp(k->str, "maxmemory") && v->str[0] >= '0' && v->str[0] <= '9')
				maxmem = strtoll(v->str, NULL, 10);
		}
	}
	xrl_redis_batch_free(&c, 1);
	if (!policy[0] || maxmem < 0) {
		struct xrl_redis_cmd i = { .argc = 2, .argv = { "INFO", "memory" }, .key = HOSTS_KEY };

		if (!xrl_redis_batch_by(f->r, &i, 1, end) && i.reply &&
		    (i.reply->type == REDIS_REPLY_STRING || i.reply->type == REDIS_REPLY_STATUS))
			policy_from_info(i.reply->str, policy, sizeof(policy), &maxmem);
		xrl_redis_batch_free(&i, 1);
	}
	if (!policy[0] || maxmem < 0) {
		snprintf(policy, sizeof(policy), "unknown");
		evict = true;
	} else {
		evict = strcmp(policy, "noeviction") && maxmem != 0;
	}
	pthread_mutex_lock(&f->lock);
	changed = strcmp(policy, f->st.policy) || maxmem != f->st.maxmemory;
	snprintf(f->st.policy, sizeof(f->st.policy), "%s", policy);
	f->st.maxmemory = maxmem;
	f->st.may_evict = evict;
	pthread_mutex_unlock(&f->lock);
	if (!changed)
		return;
	if (!strcmp(policy, "unknown"))
		xrl_log(XRL_LOG_WARN, "fleet: cannot read Redis' maxmemory-policy (CONFIG GET and INFO refused): fleet keys may be evicted; noeviction is required (a lost bucket is taken as spent)");
	else if (evict)
		xrl_log(XRL_LOG_WARN, "fleet: Redis maxmemory-policy is %s under maxmemory %lld: it may evict fleet keys; set noeviction (a lost bucket is taken as spent)",
			policy, maxmem);
	else
		xrl_log(XRL_LOG_INFO, "fleet: Redis maxmemory-policy %s, maxmemory %lld: fleet keys are never evicted",
			policy, maxmem);
}
