// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * libxrl: counters and bucket walks.
 */
#include "maps/internal.h"

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "xrl_meter.h"

/* ------------------------------------------------------------------ */
/* Counters                                                            */

int xrl__percpu_sum(struct xrl *x, int map, __u32 idx, __u64 *sum, size_t nfields)
{
	size_t stride = nfields * sizeof(__u64);
	__u64 *vals = calloc(x->ncpus, stride);

	if (!vals)
		return xrl_fail(ENOMEM, "out of memory");
	if (bpf_map_lookup_elem(x->map_fd[map], &idx, vals)) {
		int err = xrl_fail(errno, "cannot read counters: %s", strerror(errno));

		free(vals);
		return err;
	}
	memset(sum, 0, stride);
	for (int c = 0; c < x->ncpus; c++)
		for (size_t f = 0; f < nfields; f++)
			sum[f] += vals[c * nfields + f];
	free(vals);
	return 0;
}

int xrl_rule_stats_get(struct xrl *x, __u32 slot, struct xrl_rule_stats *sum)
{
	return xrl__percpu_sum(x, M_RULE_STATS, slot, (__u64 *)sum,
			  sizeof(*sum) / sizeof(__u64));
}

int xrl_global_stats_get(struct xrl *x, struct xrl_global_stats *sum)
{
	return xrl__percpu_sum(x, M_GLOBAL_STATS, 0, (__u64 *)sum,
			  sizeof(*sum) / sizeof(__u64));
}

int xrl_if_stats_get(struct xrl *x, __u32 ifindex, struct xrl_if_stats *sum)
{
	return xrl__percpu_sum(x, M_IF_STATS, ifindex % XRL_IF_SLOTS, (__u64 *)sum,
			  sizeof(*sum) / sizeof(__u64));
}

/* ------------------------------------------------------------------ */
/* Buckets                                                             */

void xrl_key_of(struct xrl_key *k, const struct xrl_rule *r, int family,
		const __u8 *addr)
{
	__u32 a[4] = {};

	memcpy(a, addr, family == 6 ? 16 : 4);
	for (int i = 0; i < 4; i++)
		a[i] &= r->key_mask[i];
	memset(k, 0, sizeof(*k));
	k->family = family;
	k->gen = r->gen;
	memcpy(k->addr, a, family == 6 ? 16 : 4);
}

/* The map and the raw key of a bucket: raw holds a bucket_key4 or _key6. */
static int bucket_raw(struct xrl *x, const struct xrl_key *k, void *raw)
{
	struct xrl_bucket_key4 k4 = { .gen = k->gen };
	struct xrl_bucket_key6 k6 = { .gen = k->gen };

	if (k->family == 6) {
		memcpy(k6.addr, k->addr, 16);
		memcpy(raw, &k6, sizeof(k6));
		return x->map_fd[M_BUCKETS6];
	}
	memcpy(&k4.addr, k->addr, 4);
	memcpy(raw, &k4, sizeof(k4));
	return x->map_fd[M_BUCKETS4];
}

/*
 * Drops the hot-key cache answered and has not added to their buckets yet
 * (it does every XRL_HOT_FLUSH a CPU): a key's count is its bucket's plus
 * these, so that show, top and key list say every drop.
 */
struct hot_pending {
	__u32 family, gen, kaddr[4];
	__u64 n;
};

static int hp_cmp(const void *a, const void *b)
{
	return memcmp(a, b, offsetof(struct hot_pending, n));
}

/* The entries with drops pending, of every CPU, sorted; NULL when none. */
static struct hot_pending *hot_pending_load(struct xrl *x, size_t *n)
{
	struct xrl_hot *v = calloc(x->ncpus, sizeof(*v));
	struct hot_pending *hp = NULL, *t;
	size_t cap = 0;
	__u32 fam;

	*n = 0;
	if (!v)
		return NULL;
	for (__u32 i = 0; i < XRL_HOT_SLOTS; i++) {
		if (bpf_map_lookup_elem(x->map_fd[M_HOT], &i, v))
			break;
		for (int c = 0; c < x->ncpus; c++) {
			if (!v[c].pending || !v[c].family)
				continue;
			if (*n == cap) {
				cap = cap ? 2 * cap : 64;
				if (!(t = realloc(hp, cap * sizeof(*hp))))
					goto out;
				hp = t;
			}
			/* a source's and an endpoint rule's entries alike:
			 * the bucket is (gen, kaddr) */
			fam = v[c].family & XRL_HOT_FAMILY;
			hp[*n] = (struct hot_pending){ .family = fam, .gen = v[c].gen,
						       .n = v[c].pending };
			memcpy(hp[*n].kaddr, v[c].kaddr, fam == 6 ? 16 : 4);
			++*n;
		}
	}
out:
	free(v);
	if (*n)
		qsort(hp, *n, sizeof(*hp), hp_cmp);
	return hp;
}

/* What the cache holds for this key (entries of one key are neighbours). */
static __u64 hot_pending_of(const struct hot_pending *hp, size_t n, const struct xrl_key *k)
{
	struct hot_pending want = { .family = k->family, .gen = k->gen };
	const struct hot_pending *p;
	size_t lo = 0, hi = n;
	__u64 sum = 0;

	memcpy(want.kaddr, k->addr, k->family == 6 ? 16 : 4);
	while (lo < hi) {	/* the first entry not below want */
		size_t mid = (lo + hi) / 2;

		if (hp_cmp(&hp[mid], &want) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (p = hp + lo; p < hp + n && !hp_cmp(p, &want); p++)
		sum += p->n;
	return sum;
}

int xrl_bucket_peek(struct xrl *x, const struct xrl_key *k, struct xrl_bucket *b)
{
	struct xrl_bucket_key6 raw;
	int fd = bucket_raw(x, k, &raw);

	return bpf_map_lookup_elem(fd, &raw, b) ? -errno : 0;
}

int xrl_bucket_get(struct xrl *x, const struct xrl_key *k, struct xrl_bucket *b)
{
	struct xrl_bucket_key6 raw;
	int fd = bucket_raw(x, k, &raw);
	struct hot_pending *hp;
	size_t n;

	if (bpf_map_lookup_elem(fd, &raw, b))
		return -errno;
	hp = hot_pending_load(x, &n);
	b->dropped += hot_pending_of(hp, n, k);
	free(hp);
	return 0;
}

/* Each key's drop count as xrl_bucket_get() says it (its bucket's plus the
 * drops the hot-key cache holds for it), with one read of the cache for all
 * of them. A key without a bucket gets UINT64_MAX. */
int xrl_buckets_dropped(struct xrl *x, const struct xrl_key *k, size_t n, __u64 *dropped)
{
	size_t nhp = 0;
	struct hot_pending *hp = hot_pending_load(x, &nhp);

	for (size_t i = 0; i < n; i++) {
		struct xrl_bucket_key6 raw;
		struct xrl_bucket b;
		int fd = bucket_raw(x, &k[i], &raw);

		if (bpf_map_lookup_elem(fd, &raw, &b)) {
			dropped[i] = UINT64_MAX;
			continue;
		}
		dropped[i] = b.dropped + hot_pending_of(hp, nhp, &k[i]);
	}
	free(hp);
	return 0;
}

/*
 * A fresh state for the algorithm of the rule, the counters kept: for GCRA
 * a theoretical arrival time of now is a full bucket. The element is
 * replaced (BPF_EXIST: a key the data path dropped in between is not
 * created again); a packet metered on the old element meanwhile is lost to
 * the new one, as it would have been a moment earlier.
 */
int xrl_bucket_reset(struct xrl *x, const struct xrl_rule *r, const struct xrl_key *k)
{
	struct xrl_bucket_key6 raw;
	int fd = bucket_raw(x, k, &raw);
	struct xrl_bucket b;

	if (bpf_map_lookup_elem(fd, &raw, &b)) {
		if (errno != ENOENT)
			return xrl_fail(errno, "cannot read the bucket: %s", strerror(errno));
		/* evicted (a source the hot-key cache answers for leaves
		 * its bucket cold): the cache may hold it refused still */
		xrl__cache_bump(x);
		return -ENOENT;
	}
	switch (r->algo) {
	case XRL_ALGO_GCRA:
		b.tat = xrl_ns_to_tu(xrl_now_ns(x));
		break;
	case XRL_ALGO_FIXED_WINDOW:
	case XRL_ALGO_SLIDING_WINDOW:	/* both windows empty */
		b.tat = b.win1 = xrl_win_empty(xrl_now_ns(x), r->interval);
		break;
	default:
		return xrl_fail(EOPNOTSUPP, "rule %u: unknown metering algorithm %u", r->id, r->algo);
	}
	if (bpf_map_update_elem(fd, &raw, &b, BPF_EXIST)) {
		if (errno != ENOENT)
			return xrl_fail(errno, "cannot reset the bucket: %s", strerror(errno));
		xrl__cache_bump(x);
		return -ENOENT;
	}
	xrl__cache_bump(x);	/* its TAT went back: "refused until" is void */
	return 0;
}

__u64 xrl_rule_capacity(const struct xrl_rule *r)
{
	return r->algo == XRL_ALGO_GCRA ? r->burst : r->limit;
}

bool xrl_key_dry_run(const struct xrl_rule *r, enum xrl_mode mode)
{
	return r->dry_run || mode == XRL_MODE_DRY_RUN;
}

__u64 xrl_bucket_left(const struct xrl_rule *r, const struct xrl_bucket *b, __u64 now_ns)
{
	if (r->algo == XRL_ALGO_GCRA)
		return xrl_gcra_tokens(b->tat, xrl_ns_to_tu(now_ns), r->interval, r->limit);
	return xrl_window_left(r->algo == XRL_ALGO_SLIDING_WINDOW, b->tat, b->win1, now_ns,
			       r->interval, r->limit);
}

int xrl_bucket_del(struct xrl *x, const struct xrl_key *k)
{
	struct xrl_bucket_key6 raw;
	int fd = bucket_raw(x, k, &raw);

	if (bpf_map_delete_elem(fd, &raw)) {
		if (errno != ENOENT)
			return xrl_fail(errno, "cannot delete the bucket: %s", strerror(errno));
		xrl__cache_bump(x);	/* evicted: the cache may hold it still */
		return -ENOENT;
	}
	xrl__cache_bump(x);
	return 0;
}

/* Walk one family's table in batches; keys come back as struct xrl_key. */
static int walk_table(struct xrl *x, int family, xrl_bucket_cb cb, void *ctx, bool pending)
{
	enum { BATCH = 4096 };
	struct hot_pending *hp = NULL;
	size_t nhp = 0;
	size_t ksz = family == 6 ? sizeof(struct xrl_bucket_key6) : sizeof(struct xrl_bucket_key4);
	int fd = x->map_fd[family == 6 ? M_BUCKETS6 : M_BUCKETS4];
	char *keys = calloc(BATCH, ksz);
	struct xrl_bucket *vals = calloc(BATCH, sizeof(*vals));
	__u32 in = 0, out = 0;
	bool first = true, done = false;
	int err = 0;

	if (!keys || !vals) {
		err = xrl_fail(ENOMEM, "out of memory");
		goto out;
	}
	if (pending)
		hp = hot_pending_load(x, &nhp);
	while (!done) {
		__u32 count = BATCH;

		if (bpf_map_lookup_batch(fd, first ? NULL : &in, &out, keys, vals, &count, NULL)) {
			if (errno != ENOENT) {
				err = xrl_fail(errno, "cannot read buckets: %s", strerror(errno));
				goto out;
			}
			done = true;	/* the last batch, possibly partial */
		}
		for (__u32 i = 0; i < count; i++) {
			struct xrl_key k = { .family = family };
			const char *raw = keys + i * ksz;

			memcpy(&k.gen, raw, 4);
			memcpy(k.addr, raw + 4, ksz - 4);
			if (nhp)
				vals[i].dropped += hot_pending_of(hp, nhp, &k);
			err = cb(&k, &vals[i], ctx);
			if (err)
				goto out;
		}
		in = out;
		first = false;
	}
out:
	free(hp);
	free(keys);
	free(vals);
	return err;
}

int xrl_buckets_walk(struct xrl *x, xrl_bucket_cb cb, void *ctx)
{
	int err = walk_table(x, 4, cb, ctx, true);

	return err ? err : walk_table(x, 6, cb, ctx, true);
}

static int count_cb(const struct xrl_key *k, const struct xrl_bucket *b, void *ctx)
{
	(void)k;
	(void)b;
	++*(unsigned long long *)ctx;
	return 0;
}

int xrl_keys_tracked_family(struct xrl *x, int family, unsigned long long *n)
{
	*n = 0;
	return walk_table(x, family, count_cb, n, false);
}

unsigned long long xrl_keys_evicted_estimate(const struct xrl_global_stats *g,
					     unsigned long long tracked)
{
	return g->keys_inserted > tracked ? g->keys_inserted - tracked : 0;
}

__u32 xrl_keys_capacity_family(struct xrl *x, int family)
{
	int cap = xrl__map_max_entries(x->map_fd[family == 6 ? M_BUCKETS6 : M_BUCKETS4]);

	return cap < 0 ? 0 : cap;
}
