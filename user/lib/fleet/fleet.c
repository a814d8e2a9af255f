// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Fleet-wide limits: the client made and freed, the credentials, and one
 * sync (fleet.h says how it goes; lease.c keeps the keys and their leases,
 * scripts.c talks to the server's scripts).
 */
#include "fleet/fleet_int.h"

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


const double xrl_fleet_lat_bounds[XRL_FLEET_LAT_BUCKETS] = {
	0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1,
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
	xrl__fleet_index_init(f);
	*out = f;
	return 0;
}

long xrl_fleet_sync_ms(const struct xrl_fleet *f)
{
	return f->cfg.sync_ms;
}

void xrl_fleet_free(struct xrl_fleet *f)
{
	if (!f)
		return;
	for (__u32 s = 0; s < XRL_FLEET_SLOTS; s++)
		if (f->keys[s].used)
			xrl__fleet_key_free(f, s);
	xrl_redis_close(f->r);
	pthread_mutex_destroy(&f->lock);
	free(f->known);
	free(f->local);
	free(f->held);
	free(f->rules);
	free(f->pending);
	free(f);
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
	xrl__fleet_write_rules_of(f, rules, m);	/* the shares at once */
	pthread_mutex_unlock(&f->lock);
	return 0;
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

/* The batch's calls: the hosts call, then one lease call per promoted key. */
struct call {
	struct xrl_redis_cmd c;
	__u32 slot;		/* lease calls */
	const struct frule *rule;	/* hot calls */
	char *keys;		/* hot calls: "ADDR/LEN ..." */
	char a[5][40];
};

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
	if (!f->sha_lease[0] && xrl__fleet_load_scripts(f, end)) {
		free(calls);
		return -EIO;
	}
	if (f->policy_due-- <= 0) {
		xrl__fleet_check_policy(f, end);
		f->policy_due = XRL_FLEET_POLICY_SYNCS;
	}
	snprintf(ttl, sizeof(ttl), "%ld", xrl_fleet_host_ttl_ms(f->cfg.sync_ms));
	calls[n++].c = (struct xrl_redis_cmd){
		.argc = 6, .argv = { "EVALSHA", f->sha_hosts, "1", HOSTS_KEY, f->cfg.host, ttl },
		.key = HOSTS_KEY, .script = xrl__fleet_hosts_script,
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
			.key = cl->a[0], .script = xrl__fleet_hot_script,
		};
	}
	for (__u32 s = 0; s < XRL_FLEET_SLOTS; s++) {
		struct fkey *k = &f->keys[s];
		const struct frule *r;
		struct call *cl;
		bool known;

		if (!k->used || !(r = xrl__fleet_rule_of_gen(f, k->gen)) || n >= max)
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
			.key = k->rkey, .script = xrl__fleet_lease_script,
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
						xrl__fleet_promote_hot(f, calls[i].rule, rep->element[j]->str, now_ns);
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
			xrl__fleet_swap_lease(f, calls[i].slot, g, now_ns);
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
	xrl__fleet_scan_family(f, 4);
	xrl__fleet_scan_family(f, 6);
	if (f->st.breaker == XRL_BREAKER_OPEN) {
		if (t0 < f->open_until_ms) {
			f->st.syncs_skipped++;
			f->synced = false;
			if (!f->hosts)
				xrl__fleet_hold_closed(f);
			xrl__fleet_write_rules(f);
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
		xrl__fleet_demote_idle(f);
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
			xrl__fleet_hold_closed(f);
	}
	xrl__fleet_write_rules(f);
	pthread_mutex_unlock(&f->lock);
	/* the fleet's bans: an exchange of their own, not in the lease batch */
	if (!err)
		xrl__fleet_bans_exchange(f);
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
		.argc = 6, .argv = { "EVAL", xrl__fleet_hosts_script, "1", HOSTS_KEY, f->cfg.host, "0" },
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
