// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Fleet-wide limits: the shares, the promotions, the leases and the Redis
 * scripts (fleet.h says how one sync goes).
 */
#include "fleet/fleet.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "maps/internal.h"

const double xrl_fleet_lat_bounds[XRL_FLEET_LAT_BUCKETS] = {
	0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1,
};

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
static const char lease_script[] =
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
static const char hosts_script[] =
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
static const char hot_script[] =
	"local t = redis.call('TIME')\n"
	"local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)\n"
	"local ttl, max = tonumber(ARGV[1]), tonumber(ARGV[3])\n"
	"for k in string.gmatch(ARGV[2], '%S+') do redis.call('ZADD', KEYS[1], now + ttl, k) end\n"
	"redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)\n"
	"local n = redis.call('ZCARD', KEYS[1])\n"
	"if n > max then redis.call('ZREMRANGEBYRANK', KEYS[1], 0, n - max - 1) end\n"
	"redis.call('PEXPIRE', KEYS[1], ttl * 2)\n"
	"return redis.call('ZREVRANGE', KEYS[1], 0, max - 1)\n";

#define HOSTS_KEY	"{xrl}:hosts"

struct frule {
	__u32 id, slot, gen;
	__u8 on_failure, key_len;
	__u64 count, period_ns, burst, interval;
};

struct fkey {
	bool used;
	bool live;		/* the map points the key at this slot */
	int family;
	__u8 addr[16];
	__u32 gen, rule_id, key_len;
	__u64 grant;		/* the credit given at the last swap */
	__u64 ret;		/* the leftover to give back at the next call */
	__u64 want;
	__u64 seen_ns;		/* data-path clock of its last grant; 0: none */
	int idle;
	char rkey[96];		/* {xrl:RULE:ADDR/LEN} */
};

struct xrl_fleet {
	struct xrl *x;
	struct xrl_fleet_settings cfg;
	struct xrl_redis *r;
	char user[128], pass[256];
	pthread_mutex_t lock;		/* pending, st */
	struct frule *rules;		/* the sync thread's own */
	size_t nrules;
	struct frule *pending;		/* a new rule set, taken at the next sync */
	size_t npending;
	bool has_pending;
	struct fkey keys[XRL_FLEET_SLOTS];
	/* the slots of the used keys by (family, gen, address): chains from
	 * a bucket of their hash, so that finding a key's slot is O(1), not a
	 * walk of every slot (a hot set of a thousand keys, each sync); and
	 * the free slots as a stack */
	int hash_head[XRL_FLEET_HASH];
	int hash_next[XRL_FLEET_SLOTS];
	int free_slot[XRL_FLEET_SLOTS];
	unsigned nfree;
	unsigned hosts;			/* 0: never heard */
	bool synced;			/* the last sync went through */
	int fails;			/* failed syncs in a row */
	double open_until_ms;
	long backoff_ms;
	char sha_lease[48], sha_hosts[48], sha_hot[48];
	int policy_due;			/* syncs until the policy is read again */
	__u64 last_ok_ns;		/* data-path clock */
	__u64 last_lat_ns;
	struct xrl_fleet_stats st;
};

static double mono_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static const struct xrl_path_rules auth_rules = {
	.what = "Redis credentials file",
	.owner_why = "its owner could replace the credentials",
	.owner_fix = "chown root it",
	.write_why = "whoever can write it could replace the credentials",
	.write_fix = "chmod 0600 it",
};

static unsigned key_hash(int family, __u32 gen, const __u8 *addr)
{
	unsigned h = 2166136261u ^ (unsigned)family;	/* FNV-1a */

	for (int i = 0; i < 4; i++)
		h = (h ^ ((gen >> (8 * i)) & 0xff)) * 16777619u;
	for (int i = 0; i < (family == 4 ? 4 : 16); i++)
		h = (h ^ addr[i]) * 16777619u;
	return h & (XRL_FLEET_HASH - 1);
}

static void index_init(struct xrl_fleet *f)
{
	for (int i = 0; i < XRL_FLEET_HASH; i++)
		f->hash_head[i] = -1;
	/* slot 0 first, as the walk of every slot took them */
	for (int s = 0; s < XRL_FLEET_SLOTS; s++)
		f->free_slot[s] = XRL_FLEET_SLOTS - 1 - s;
	f->nfree = XRL_FLEET_SLOTS;
}

static void index_del(struct xrl_fleet *f, __u32 slot)
{
	const struct fkey *fk = &f->keys[slot];
	int *p = &f->hash_head[key_hash(fk->family, fk->gen, fk->addr)];

	while (*p >= 0 && *p != (int)slot)
		p = &f->hash_next[*p];
	if (*p == (int)slot)
		*p = f->hash_next[slot];
	f->free_slot[f->nfree++] = slot;
}

static int read_auth(struct xrl_fleet *f, const char *path)
{
	char line[512], *nl, *sp;
	struct stat sb;
	FILE *fp;
	int fd;

	/* O_NONBLOCK: a FIFO in the file's place must not stall the daemon's
	 * start or reload (an open for reading waits for a writer) */
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return xrl_fail(errno, "cannot read the Redis credentials %s: %s", path, strerror(errno));
	if (fstat(fd, &sb) || !S_ISREG(sb.st_mode)) {
		close(fd);
		return xrl_fail(EINVAL, "the Redis credentials %s are not a regular file", path);
	}
	if (sb.st_mode & 0004) {
		close(fd);
		return xrl_fail(EPERM, "the Redis credentials %s are readable by everyone: chmod o-r it", path);
	}
	/* whoever could write them could point the daemon at another user's
	 * keys (or lock it out): as the configuration file */
	if (xrl_path_safe(path, &sb, &auth_rules)) {
		close(fd);
		return -EPERM;
	}
	fp = fdopen(fd, "r");
	if (!fp) {
		close(fd);
		return xrl_fail(errno, "cannot read the Redis credentials %s: %s", path, strerror(errno));
	}
	if (!fgets(line, sizeof(line), fp)) {
		fclose(fp);
		return xrl_fail(EINVAL, "the Redis credentials %s are empty", path);
	}
	fclose(fp);
	if ((nl = strpbrk(line, "\r\n")))
		*nl = '\0';
	sp = strchr(line, ' ');
	if (sp) {
		*sp = '\0';
		snprintf(f->user, sizeof(f->user), "%s", line);
		snprintf(f->pass, sizeof(f->pass), "%s", sp + 1);
	} else {
		snprintf(f->pass, sizeof(f->pass), "%s", line);
	}
	if (!f->pass[0])
		return xrl_fail(EINVAL, "the Redis credentials %s hold no password", path);
	return 0;
}

int xrl_fleet_auth_check(const char *path)
{
	struct xrl_fleet *f = calloc(1, sizeof(*f));
	int err;

	if (!f)
		return xrl_fail(ENOMEM, "out of memory");
	err = read_auth(f, path);
	explicit_bzero(f, sizeof(*f));
	free(f);
	return err;
}

int xrl_fleet_new(struct xrl *x, const struct xrl_fleet_settings *cfg, struct xrl_fleet **out)
{
	struct xrl_fleet *f = calloc(1, sizeof(*f));
	struct xrl_redis_opts ro = { 0 };
	int err;

	if (!f)
		return xrl_fail(ENOMEM, "out of memory");
	f->x = x;
	f->cfg = *cfg;
	if (!f->cfg.sync_ms)
		f->cfg.sync_ms = XRL_FLEET_SYNC_MS;
	if (!f->cfg.timeout_ms)
		f->cfg.timeout_ms = XRL_FLEET_TIMEOUT_MS;
	if (!f->cfg.hosts)
		f->cfg.hosts = XRL_FLEET_HOSTS;
	if (!f->cfg.host[0] && gethostname(f->cfg.host, sizeof(f->cfg.host) - 1))
		snprintf(f->cfg.host, sizeof(f->cfg.host), "unknown");
	if (f->cfg.auth_file[0] && (err = read_auth(f, f->cfg.auth_file))) {
		free(f);
		return err;
	}
	if (!xrl_fleet_leases(x)) {
		free(f);
		return xrl_fail(errno, "cannot map the fleet leases: %s", strerror(errno));
	}
	ro.addrs = f->cfg.redis;
	ro.cluster = f->cfg.cluster;
	ro.timeout_ms = f->cfg.timeout_ms;
	ro.batch_ms = xrl_fleet_batch_ms(f->cfg.sync_ms);
	ro.user = f->user;
	ro.pass = f->pass;
	err = xrl_redis_open(&ro, &f->r);
	memset(f->pass, 0, sizeof(f->pass));
	if (err) {
		free(f);
		return xrl_fail(EINVAL, "invalid Redis address list '%s' (HOST:PORT[,HOST:PORT...])",
			    cfg->redis);
	}
	pthread_mutex_init(&f->lock, NULL);
	f->backoff_ms = XRL_FLEET_BACKOFF_MIN_MS;
	index_init(f);
	*out = f;
	return 0;
}

long xrl_fleet_sync_ms(const struct xrl_fleet *f)
{
	return f->cfg.sync_ms;
}

/* Give every slot back: credit gone, keys deleted from the maps. */
static void key_of(const struct fkey *fk, struct xrl_key *k)
{
	memset(k, 0, sizeof(*k));
	k->family = fk->family;
	k->gen = fk->gen;
	memcpy(k->addr, fk->addr, 16);
}

static void key_free(struct xrl_fleet *f, __u32 slot)
{
	struct fkey *fk = &f->keys[slot];
	struct xrl_lease *l = f->x->leases;
	struct xrl_key k;

	key_of(fk, &k);
	xrl_fleet_key_del(f->x, &k);
	index_del(f, slot);
	f->st.expired += __atomic_exchange_n(&l[slot].credit, 0, __ATOMIC_ACQ_REL);
	__atomic_store_n(&l[slot].expires_ns, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&l[slot].denied, 0, __ATOMIC_RELEASE);
	memset(fk, 0, sizeof(*fk));
}

void xrl_fleet_free(struct xrl_fleet *f)
{
	if (!f)
		return;
	for (__u32 s = 0; s < XRL_FLEET_SLOTS; s++)
		if (f->keys[s].used)
			key_free(f, s);
	xrl_redis_close(f->r);
	pthread_mutex_destroy(&f->lock);
	free(f->rules);
	free(f->pending);
	free(f);
}

/* The share of N hosts, and the state, of each fleet rule: into the map. */
static void write_rules_of(struct xrl_fleet *f, const struct frule *rules, size_t nrules);

static void write_rules(struct xrl_fleet *f)
{
	write_rules_of(f, f->rules, f->nrules);
}

/*
 * N for a rule's share. Known (Redis answered once): the live hosts as last
 * heard. Never heard: an on-failure closed rule cannot know how many hosts
 * admit its keys beside this one, and closed says "rather drop than let
 * the limit through": the share of the 'hosts' the operator gave (default
 * 2, the least a fleet is); an open rule meters alone at its whole rate,
 * as it does without a fleet.
 */
static unsigned share_hosts(const struct xrl_fleet *f, const struct frule *r)
{
	if (f->hosts)
		return f->hosts;
	if (r->on_failure == XRL_FAIL_CLOSED)
		return f->cfg.hosts;
	return 1;
}

static void write_rules_of(struct xrl_fleet *f, const struct frule *rules, size_t nrules)
{
	unsigned promoted[64] = { 0 };

	for (__u32 s = 0; s < XRL_FLEET_SLOTS; s++)
		for (size_t i = 0; f->keys[s].used && i < nrules && i < 64; i++)
			if (f->keys[s].gen == rules[i].gen)
				promoted[i]++;
	for (size_t i = 0; i < nrules; i++) {
		const struct frule *r = &rules[i];
		struct xrl_fleet_rule fr = { 0 };
		unsigned n = share_hosts(f, r);
		__u64 burst = r->burst / n ? r->burst / n : 1;

		fr.interval = r->interval * n;
		fr.limit = xrl_burst_limit(fr.interval, burst);
		if (!fr.limit)	/* out of range: the rule as it is */
			fr.interval = 0;
		if (!f->hosts)
			fr.state = XRL_FLEET_NEVER_SYNCED;
		else if (f->synced)
			fr.state = XRL_FLEET_SYNCED;
		else
			fr.state = r->on_failure == XRL_FAIL_CLOSED ? XRL_FLEET_CLOSED :
								    XRL_FLEET_FALLBACK_OPEN;
		if (f->st.may_evict)
			fr.state |= XRL_FLEET_F_MAY_EVICT;
		fr.hosts = n;
		fr.sync_ns = f->last_ok_ns;
		fr.latency_ns = f->last_lat_ns;
		fr.promoted = i < 64 ? promoted[i] : 0;
		fr.rule_id = r->id;
		xrl_fleet_rule_put(f->x, r->slot, &fr);
	}
}

int xrl_fleet_rules_set(struct xrl_fleet *f, const struct xrl_rule_entry *v, size_t n)
{
	struct frule *rules = calloc(n ? n : 1, sizeof(*rules));
	size_t m = 0;

	if (!rules)
		return xrl_fail(ENOMEM, "out of memory");
	for (size_t i = 0; i < n; i++) {
		const struct xrl_rule *r = &v[i].r;

		if (r->scope != XRL_SCOPE_FLEET || r->action != XRL_ACT_LIMIT)
			continue;
		rules[m++] = (struct frule){
			.id = r->id, .slot = r->slot, .gen = r->gen, .on_failure = r->on_failure,
			.key_len = r->key_len,
			.count = r->rate_count, .period_ns = r->rate_period_ns,
			.burst = r->burst, .interval = r->interval,
		};
	}
	pthread_mutex_lock(&f->lock);
	free(f->pending);
	f->pending = rules;
	f->npending = m;
	f->has_pending = true;
	write_rules_of(f, rules, m);	/* the shares at once */
	pthread_mutex_unlock(&f->lock);
	return 0;
}

static const struct frule *rule_of_gen(struct xrl_fleet *f, __u32 gen)
{
	for (size_t i = 0; i < f->nrules; i++)
		if (f->rules[i].gen == gen)
			return &f->rules[i];
	return NULL;
}

/* Per sync, the tokens a key at rate R over N hosts needs at least. */
static __u64 want_min(const struct xrl_fleet *f, const struct frule *r)
{
	double per_sync = (double)r->count * f->cfg.sync_ms * 1e6 / r->period_ns;
	unsigned n = f->hosts ? f->hosts : 1;

	return (__u64)ceil(per_sync / n) + 1;
}

static __u64 want_max(const struct xrl_fleet *f, const struct frule *r)
{
	double per_lease = (double)r->count * xrl_fleet_lease_ms(f->cfg.sync_ms) * 1e6 / r->period_ns;

	return (__u64)ceil(per_lease) + r->burst;
}

/* A candidate of the data path: a slot for it (the map still says pending
 * until its first grant). */
static void promote(struct xrl_fleet *f, int family, const __u32 gen, const __u8 *addr,
		    const struct frule *r, __u32 key_len)
{
	struct fkey *k;
	unsigned h;
	char a[64];
	__u32 s;

	if (!f->nfree) {
		f->st.candidates_full++;
		return;
	}
	s = f->free_slot[--f->nfree];
	k = &f->keys[s];
	memset(k, 0, sizeof(*k));
	k->used = true;
	k->family = family;
	k->gen = gen;
	k->rule_id = r->id;
	k->key_len = key_len;
	memcpy(k->addr, addr, family == 4 ? 4 : 16);
	k->want = want_max(f, r);	/* the first grant may hold the burst */
	xrl_addr_format(family, addr, a, sizeof(a));
	snprintf(k->rkey, sizeof(k->rkey), "{xrl:%u:%s/%u}", r->id, a, key_len);
	h = key_hash(family, gen, k->addr);
	f->hash_next[s] = f->hash_head[h];
	f->hash_head[h] = s;
}

static bool slot_of(struct xrl_fleet *f, int family, __u32 gen, const __u8 *addr, __u32 *slot)
{
	for (int s = f->hash_head[key_hash(family, gen, addr)]; s >= 0; s = f->hash_next[s]) {
		const struct fkey *k = &f->keys[s];

		if (k->used && k->family == family && k->gen == gen &&
		    !memcmp(k->addr, addr, family == 4 ? 4 : 16)) {
			*slot = s;
			return true;
		}
	}
	return false;
}

/* Walk the candidates and promoted keys of one family's map: promote the
 * new ones, forget those of rules gone. */
static void scan_family(struct xrl_fleet *f, int family)
{
	int fd = f->x->map_fd[family == 4 ? M_FLEET_KEYS4 : M_FLEET_KEYS6];
	struct xrl_bucket_key6 cur, next;
	bool first = true;
	__u32 v, s;

	while (!bpf_map_get_next_key(fd, first ? NULL : &cur, &next)) {
		const struct frule *r;
		__u8 addr[16] = { 0 };
		__u32 gen = next.gen;

		first = false;
		cur = next;
		memcpy(addr, next.addr, family == 4 ? 4 : 16);
		if (bpf_map_lookup_elem(fd, &next, &v))
			continue;
		r = rule_of_gen(f, gen);
		if (!r) {	/* its rule changed or went */
			if (slot_of(f, family, gen, addr, &s))
				key_free(f, s);
			else
				bpf_map_delete_elem(fd, &next);	/* a candidate */
			continue;
		}
		if (v == XRL_FLEET_PENDING && !slot_of(f, family, gen, addr, &s))
			promote(f, family, gen, addr, r, r->key_len);
	}
}

/* Swap the lease of slot s for a grant; returns the credit left of it. */
static void swap_lease(struct xrl_fleet *f, __u32 s, __u64 grant, __u64 now_ns)
{
	struct xrl_lease *l = &f->x->leases[s];
	struct fkey *k = &f->keys[s];
	__u64 lease_ns = (__u64)xrl_fleet_lease_ms(f->cfg.sync_ms) * 1000000ULL;
	__u64 old_exp = __atomic_load_n(&l->expires_ns, __ATOMIC_ACQUIRE), old, used, demand;
	const struct frule *r = rule_of_gen(f, k->gen);

	/* never new credit on old credit with a later expiry: the expiry
	 * first (old credit may be spent a little longer, never re-counted),
	 * then the credit replaced, its leftover kept to give back */
	__atomic_store_n(&l->expires_ns, now_ns + lease_ns, __ATOMIC_RELEASE);
	old = __atomic_exchange_n(&l->credit, grant, __ATOMIC_ACQ_REL);
	if (!k->live) {
		struct xrl_key key;

		key_of(k, &key);
		xrl_fleet_key_put(f->x, &key, s);
		k->live = true;
		old = 0;
		used = 0;
		k->idle = 0;
	} else if ((__s64)(old_exp - now_ns) <= 0) {
		f->st.expired += old;	/* run out: never spendable again */
		used = k->grant - (old < k->grant ? old : k->grant);
		old = 0;
	} else {
		used = k->grant - (old < k->grant ? old : k->grant);
	}
	k->ret = old;
	k->grant = grant;
	k->seen_ns = now_ns;
	f->st.granted += grant;
	/* ask for what was spent and what was refused, and a quarter more:
	 * the grants follow each host's demand, not its past grants */
	demand = used + __atomic_exchange_n(&l->denied, 0, __ATOMIC_ACQ_REL);
	demand += demand / 4;
	if (r) {
		__u64 lo = want_min(f, r), hi = want_max(f, r);

		k->want = demand < lo ? lo : demand > hi ? hi : demand;
	}
	k->idle = used ? 0 : k->idle + 1;
}

static void lat_observe(struct xrl_fleet *f, double s)
{
	for (int i = 0; i < XRL_FLEET_LAT_BUCKETS; i++)
		if (s <= xrl_fleet_lat_bounds[i])
			f->st.lat_le[i]++;
	f->st.lat_count++;
	f->st.lat_sum_s += s;
	f->st.last_latency_s = s;
}

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

static int load_scripts(struct xrl_fleet *f, double end)
{
	struct xrl_redis_cmd c[3] = {
		{ .argc = 3, .argv = { "SCRIPT", "LOAD", lease_script }, .key = HOSTS_KEY },
		{ .argc = 3, .argv = { "SCRIPT", "LOAD", hosts_script }, .key = HOSTS_KEY },
		{ .argc = 3, .argv = { "SCRIPT", "LOAD", hot_script }, .key = HOSTS_KEY },
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
static void check_policy(struct xrl_fleet *f, double end)
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

/* The batch's calls: the hosts call, then one lease call per promoted key. */
struct call {
	struct xrl_redis_cmd c;
	__u32 slot;		/* lease calls */
	const struct frule *rule;	/* hot calls */
	char *keys;		/* hot calls: "ADDR/LEN ..." */
	char a[5][40];
};

/* A key hot elsewhere: promoted here too when it had traffic here lately. */
static void promote_hot(struct xrl_fleet *f, const struct frule *r, const char *s, __u64 now_ns)
{
	struct xrl_rule_entry e = { 0 };
	struct xrl_bucket b;
	struct xrl_key k = { 0 };
	__u32 slot;

	/* a key of this rule's form, or nothing: the reply is untrusted */
	if (xrl_prefix_parse(s, &e) || e.prefix_len != r->key_len)
		return;
	if (slot_of(f, e.family, r->gen, e.addr, &slot))
		return;
	k.family = e.family;
	k.gen = r->gen;
	memcpy(k.addr, e.addr, 16);
	/* signed: a precise-clock rule stamps last_ns up to a tick ahead of
	 * now_ns (xrl_rule_now_ns()), which is "just now", not idle */
	if (xrl_bucket_peek(f->x, &k, &b) || (__s64)(now_ns - b.last_ns) > 1000000000LL)
		return;
	promote(f, e.family, r->gen, e.addr, r, r->key_len);
}

static int run_sync(struct xrl_fleet *f, __u64 now_ns)
{
	size_t n = 0, max = 1 + f->nrules + XRL_FLEET_SLOTS;
	struct call *calls = calloc(max, sizeof(*calls));
	__u64 lease_ns = (__u64)xrl_fleet_lease_ms(f->cfg.sync_ms) * 1000000ULL;
	/* one deadline for the sync's batches, the scripts' load included */
	double end = mono_ms() + xrl_fleet_batch_ms(f->cfg.sync_ms);
	bool late = false;
	char ttl[16];
	int bad, err = 0;

	if (!calls)
		return -ENOMEM;
	if (!f->sha_lease[0] && load_scripts(f, end)) {
		free(calls);
		return -EIO;
	}
	if (f->policy_due-- <= 0) {
		check_policy(f, end);
		f->policy_due = XRL_FLEET_POLICY_SYNCS;
	}
	snprintf(ttl, sizeof(ttl), "%ld", xrl_fleet_host_ttl_ms(f->cfg.sync_ms));
	calls[n++].c = (struct xrl_redis_cmd){
		.argc = 6, .argv = { "EVALSHA", f->sha_hosts, "1", HOSTS_KEY, f->cfg.host, ttl },
		.key = HOSTS_KEY, .script = hosts_script,
	};
	for (size_t i = 0; i < f->nrules && n < max; i++) {
		const struct frule *r = &f->rules[i];
		struct call *cl = &calls[n++];
		size_t len = 0, cap = 64;
		unsigned sent = 0;

		cl->rule = r;
		cl->keys = malloc(cap);
		if (!cl->keys) {
			n--;
			continue;
		}
		cl->keys[0] = '\0';
		for (__u32 s = 0; s < XRL_FLEET_SLOTS; s++) {
			struct fkey *k = &f->keys[s];
			const char *tag;

			if (!k->used || !k->live || k->gen != r->gen)
				continue;
			if (sent++ == XRL_FLEET_HOT_MAX)	/* what the set keeps */
				break;
			if (len + 80 > cap) {
				char *p = realloc(cl->keys, cap * 2);

				if (!p)
					break;
				cl->keys = p;
				cap *= 2;
			}
			tag = strchr(k->rkey, ':') ? strchr(strchr(k->rkey, ':') + 1, ':') + 1 : "";
			/* {xrl:RULE:ADDR/LEN} -> ADDR/LEN */
			len += snprintf(cl->keys + len, cap - len, "%s%.*s", len ? " " : "",
					(int)strcspn(tag, "}"), tag);
		}
		snprintf(cl->a[0], sizeof(cl->a[0]), "{xrl:hot:%u}", r->id);
		snprintf(cl->a[1], sizeof(cl->a[1]), "%s", ttl);
		snprintf(cl->a[2], sizeof(cl->a[2]), "%d", XRL_FLEET_HOT_MAX);
		cl->c = (struct xrl_redis_cmd){
			.argc = 7,
			.argv = { "EVALSHA", f->sha_hot, "1", cl->a[0], cl->a[1], cl->keys, cl->a[2] },
			.key = cl->a[0], .script = hot_script,
		};
	}
	for (__u32 s = 0; s < XRL_FLEET_SLOTS; s++) {
		struct fkey *k = &f->keys[s];
		const struct frule *r;
		struct call *cl;
		bool known;

		if (!k->used || !(r = rule_of_gen(f, k->gen)) || n >= max)
			continue;
		cl = &calls[n++];
		cl->slot = s;
		snprintf(cl->a[0], sizeof(cl->a[0]), "%.6f", r->period_ns / 1e3 / r->count);
		snprintf(cl->a[1], sizeof(cl->a[1]), "%llu", (unsigned long long)r->burst);
		snprintf(cl->a[2], sizeof(cl->a[2]), "%llu", (unsigned long long)k->ret);
		snprintf(cl->a[3], sizeof(cl->a[3]), "%llu", (unsigned long long)k->want);
		snprintf(cl->a[4], sizeof(cl->a[4]), "%s", ttl);
		/* the key must be there unless Redis lost it: a grant within
		 * xrl_fleet_known_ms(), each call keeping it the host TTL longer */
		known = k->live && k->seen_ns &&
			now_ns - k->seen_ns < (__u64)xrl_fleet_known_ms(f->cfg.sync_ms) * 1000000ULL;
		cl->c = (struct xrl_redis_cmd){
			.argc = 11,
			.argv = { "EVALSHA", f->sha_lease, "1", k->rkey, cl->a[0], cl->a[1], cl->a[2],
				  cl->a[3], f->cfg.host, cl->a[4], known ? "1" : "0" },
			.key = k->rkey, .script = lease_script,
		};
	}
	{
		struct xrl_redis_cmd *cmds = calloc(n, sizeof(*cmds));

		if (!cmds) {
			free(calls);
			return -ENOMEM;
		}
		for (size_t i = 0; i < n; i++)
			cmds[i] = calls[i].c;
		bad = xrl_redis_batch_by(f->r, cmds, n, end);
		/* later than a lease: whatever it granted has run out already */
		late = xrl_now_ns(f->x) - now_ns >= lease_ns;
		if (late) {
			f->st.late++;
			err = -ETIMEDOUT;
			snprintf(f->st.last_error, sizeof(f->st.last_error),
				 "the sync took longer than a lease (%ld ms)", xrl_fleet_lease_ms(f->cfg.sync_ms));
		} else if (!cmds[0].reply || cmds[0].reply->type != REDIS_REPLY_INTEGER ||
			   cmds[0].reply->integer < 1 || cmds[0].reply->integer > XRL_FLEET_MAX_HOSTS) {
			if (cmds[0].reply && cmds[0].reply->type != REDIS_REPLY_ERROR)
				f->st.bad_replies++;
			err = -EIO;
		} else {
			f->hosts = cmds[0].reply->integer;
		}
		for (size_t i = 1; i < n; i++) {
			redisReply *rep = cmds[i].reply;
			struct fkey *k = &f->keys[calls[i].slot];
			long long g;

			if (late) {	/* nothing of it is spendable */
				if (!calls[i].rule)
					k->ret = 0;
				continue;
			}

			if (calls[i].rule) {	/* the hot keys */
				if (!rep || rep->type != REDIS_REPLY_ARRAY) {
					err = -EIO;
					continue;
				}
				/* at most what the script keeps: a longer
				 * reply is not ours to walk */
				for (size_t j = 0; j < rep->elements && j < XRL_FLEET_HOT_MAX; j++)
					if (rep->element[j]->type == REDIS_REPLY_STRING)
						promote_hot(f, calls[i].rule, rep->element[j]->str, now_ns);
				if (rep->elements > XRL_FLEET_HOT_MAX)
					f->st.hot_ignored += rep->elements - XRL_FLEET_HOT_MAX;
				continue;
			}
			f->st.lease_calls++;
			if (!rep || rep->type != REDIS_REPLY_ARRAY || rep->elements < 1 ||
			    rep->element[0]->type != REDIS_REPLY_INTEGER) {
				if (rep && rep->type != REDIS_REPLY_ERROR)
					f->st.bad_replies++;
				/* the call may have gone through: never give the
				 * leftover back twice */
				k->ret = 0;
				err = -EIO;
				continue;
			}
			/* never more than was asked, never a negative grant */
			g = rep->element[0]->integer;
			if (g < 0 || (unsigned long long)g > k->want) {
				f->st.clamped++;
				g = g < 0 ? 0 : (long long)k->want;
			}
			f->st.returned += k->ret;
			if (rep->elements >= 3 && rep->element[2]->type == REDIS_REPLY_INTEGER &&
			    rep->element[2]->integer == 1)
				f->st.buckets_lost++;
			swap_lease(f, calls[i].slot, g, now_ns);
		}
		for (size_t i = 0; i < n; i++) {
			if (cmds[i].err[0]) {
				snprintf(f->st.last_error, sizeof(f->st.last_error), "%s", cmds[i].err);
				break;
			}
		}
		xrl_redis_batch_free(cmds, n);
		free(cmds);
	}
	for (size_t i = 0; i < n; i++)
		free(calls[i].keys);
	free(calls);
	if (bad && !err)
		err = -EIO;
	return err;
}

/*
 * Redis never answered: the candidates of an on-failure closed rule (keys
 * over its conservative share, share_hosts()) point at their slot, whose
 * lease was never granted (expired): the data path drops them, as it drops
 * a promoted key whose lease ran out. The first grant swaps a real lease in.
 */
static void hold_closed(struct xrl_fleet *f)
{
	for (__u32 s = 0; s < XRL_FLEET_SLOTS; s++) {
		struct fkey *k = &f->keys[s];
		const struct frule *r;
		struct xrl_key key;

		if (!k->used || k->live || !(r = rule_of_gen(f, k->gen)) ||
		    r->on_failure != XRL_FAIL_CLOSED)
			continue;
		__atomic_store_n(&f->x->leases[s].credit, 0, __ATOMIC_RELEASE);
		__atomic_store_n(&f->x->leases[s].expires_ns, 0, __ATOMIC_RELEASE);
		key_of(k, &key);
		if (!xrl_fleet_key_put(f->x, &key, s))
			k->live = true;
	}
}

/* A key that spent nothing for a while goes back to its share. */
static void demote_idle(struct xrl_fleet *f)
{
	for (__u32 s = 0; s < XRL_FLEET_SLOTS; s++) {
		struct fkey *k = &f->keys[s];

		if (k->used && (k->idle >= XRL_FLEET_IDLE_SYNCS || !rule_of_gen(f, k->gen)))
			key_free(f, s);
	}
}

int xrl_fleet_sync(struct xrl_fleet *f)
{
	double t0 = mono_ms();
	__u64 now_ns;
	int err;

	pthread_mutex_lock(&f->lock);
	if (f->has_pending) {
		free(f->rules);
		f->rules = f->pending;
		f->nrules = f->npending;
		f->pending = NULL;
		f->has_pending = false;
	}
	scan_family(f, 4);
	scan_family(f, 6);
	if (f->st.breaker == XRL_BREAKER_OPEN) {
		if (t0 < f->open_until_ms) {
			f->st.syncs_skipped++;
			f->synced = false;
			if (!f->hosts)
				hold_closed(f);
			write_rules(f);
			pthread_mutex_unlock(&f->lock);
			return -EAGAIN;
		}
		f->st.breaker = XRL_BREAKER_HALF_OPEN;	/* one probe */
	}
	pthread_mutex_unlock(&f->lock);

	/* Redis' I/O outside the lock: stats and rules stay readable */
	now_ns = xrl_now_ns(f->x);
	err = run_sync(f, now_ns);

	pthread_mutex_lock(&f->lock);
	lat_observe(f, (mono_ms() - t0) / 1e3);
	if (!err) {
		f->st.syncs_ok++;
		f->fails = 0;
		f->synced = true;
		f->st.breaker = XRL_BREAKER_CLOSED;
		f->backoff_ms = XRL_FLEET_BACKOFF_MIN_MS;
		f->last_ok_ns = now_ns;
		f->last_lat_ns = (mono_ms() - t0) * 1e6;
		f->st.last_ok_ms = mono_ms();
		demote_idle(f);
	} else {
		f->st.syncs_failed++;
		f->synced = false;
		if (f->st.breaker == XRL_BREAKER_HALF_OPEN || ++f->fails >= XRL_FLEET_BREAKER_FAILS) {
			if (f->st.breaker == XRL_BREAKER_HALF_OPEN)
				f->backoff_ms = f->backoff_ms * 2 > XRL_FLEET_BACKOFF_MAX_MS ?
							XRL_FLEET_BACKOFF_MAX_MS : f->backoff_ms * 2;
			f->st.breaker = XRL_BREAKER_OPEN;
			f->open_until_ms = mono_ms() + f->backoff_ms;
		}
		f->sha_lease[0] = '\0';	/* a restarted Redis lost them: load again */
		if (!f->hosts)
			hold_closed(f);
	}
	write_rules(f);
	pthread_mutex_unlock(&f->lock);
	return err;
}

int xrl_fleet_probe(struct xrl_fleet *f)
{
	struct xrl_redis_cmd c = { .argc = 1, .argv = { "PING" }, .key = HOSTS_KEY };
	int err = 0;

	if (xrl_redis_batch(f->r, &c, 1))
		err = xrl_fail(EHOSTUNREACH, "Redis %s does not answer: %s", f->cfg.redis,
			   c.err[0] ? c.err : "an error reply");
	xrl_redis_batch_free(&c, 1);
	return err;
}

void xrl_fleet_abort(struct xrl_fleet *f, bool stop)
{
	xrl_redis_abort(f->r, stop);
}

void xrl_fleet_leave(struct xrl_fleet *f)
{
	struct xrl_redis_cmd c = {
		.argc = 6, .argv = { "EVAL", hosts_script, "1", HOSTS_KEY, f->cfg.host, "0" },
		.key = HOSTS_KEY,
	};

	xrl_redis_batch(f->r, &c, 1);
	xrl_redis_batch_free(&c, 1);
}

void xrl_fleet_stats_get(struct xrl_fleet *f, struct xrl_fleet_stats *s)
{
	unsigned promoted = 0;

	pthread_mutex_lock(&f->lock);
	for (__u32 i = 0; i < XRL_FLEET_SLOTS; i++)
		promoted += f->keys[i].used && f->keys[i].live;
	f->st.promoted = promoted;
	f->st.hosts = f->hosts;
	*s = f->st;
	pthread_mutex_unlock(&f->lock);
	/* the client's counters: only the sync thread writes them */
	xrl_redis_stats_get(f->r, &s->redis);
}
