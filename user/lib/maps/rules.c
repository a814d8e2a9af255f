// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * libxrl: the commit. A rule set validated as a whole, a fresh trie built
 * for each family and published in one step; rules that did not change keep
 * their buckets and counters.
 */
#include "maps/internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------------------ */
/* Rules                                                               */

/* An endpoint rule's protocol, ports and SYN; a source rule has none. */
static int rule_check_endpoint(struct xrl_rule_entry *e, const char *pfx)
{
	struct xrl_rule *r = &e->r;
	/* 0-65535 is "no dport" (the grammar writes it so when none is
	 * given); 0-0 is port 0 alone, not every port */
	bool ports = r->dport_lo || r->dport_hi != 65535;

	if (!r->ep) {
		r->proto = r->syn = 0;
		r->dport_lo = r->dport_hi = 0;
		return 0;
	}
	if (ports && r->proto != IPPROTO_TCP && r->proto != IPPROTO_UDP)
		return xrl_fail(EINVAL, "rule %s: dport needs proto tcp or udp", pfx);
	if (r->dport_lo > r->dport_hi)
		return xrl_fail(EINVAL, "rule %s: dport %u-%u is an empty range", pfx,
			    r->dport_lo, r->dport_hi);
	if (r->syn && r->proto != IPPROTO_TCP)
		return xrl_fail(EINVAL, "rule %s: syn needs proto tcp", pfx);
	return 0;
}

/* The smallest byte budget: a full-size Ethernet frame must be able to pass. */
#define XRL_MIN_BYTES	1514

/*
 * A window algorithm or a byte rate (issue 9): the window rules keep the
 * window in interval (ns) and the cost units per window in limit; a byte
 * rate's token bucket charges the frame length against an interval per
 * byte. Rates in bits per second are metered in bytes.
 */
static int rule_check_units(struct xrl_rule_entry *e, const char *pfx,
			    enum xrl_rule_field *bad)
{
	struct xrl_rule *r = &e->r;
	__u64 per_window, period = r->rate_period_ns;
	bool bytes = r->unit != XRL_UNIT_PACKETS;

	if (r->algo >= XRL_ALGO_MAX)
		return xrl_fail(EINVAL, "rule %s: unknown algorithm %u", pfx, r->algo);
	if (r->unit > XRL_UNIT_BITS)
		return xrl_fail(EINVAL, "rule %s: unknown rate unit %u", pfx, r->unit);
	if (bytes && period != XRL_PERIOD_SEC)
		return xrl_fail(EINVAL, "rule %s: a byte rate is per second", pfx);
	if (r->algo != XRL_ALGO_GCRA) {
		per_window = r->unit == XRL_UNIT_BITS ? r->rate_count / 8 : r->rate_count;
		if (!xrl_rate_interval(1, period) || !per_window)
			return xrl_fail(EINVAL, "rule %s: rate must be at least 1 per window (a second, a minute or an hour)", pfx);
		if (per_window > XRL_WIN_COUNT_MAX)
			return xrl_fail(EINVAL, "rule %s: rate must be at most %llu per window", pfx,
				    XRL_WIN_COUNT_MAX);
		if (bytes && per_window < XRL_MIN_BYTES)
			return xrl_fail(EINVAL, "rule %s: a byte rate under %u bytes per window never passes a full-size frame",
				    pfx, XRL_MIN_BYTES);
		*bad = XRL_FIELD_BURST;
		if (r->burst)
			return xrl_fail(EINVAL, "rule %s: burst belongs to the token bucket; %s admits rate per window",
				    pfx, r->algo == XRL_ALGO_FIXED_WINDOW ? "fixed-window" : "sliding-window");
		r->interval = period;
		r->limit = per_window;
		return 0;
	}
	/* a byte rate's token bucket: bits per second as 1/8 byte per second */
	r->interval = xrl_rate_interval(r->rate_count,
					r->unit == XRL_UNIT_BITS ? period * 8 : period);
	if (!r->interval)
		return xrl_fail(EINVAL, "rule %s: a byte rate must be between 1 byte/s and %llu bytes/s (800mbit)",
			    pfx, XRL_RATE_MAX_PER_SEC);
	*bad = XRL_FIELD_BURST;
	if (r->burst < XRL_MIN_BYTES)
		return xrl_fail(EINVAL, "rule %s: burst of a byte rate must be at least %u bytes (a full-size frame)",
			    pfx, XRL_MIN_BYTES);
	r->limit = xrl_burst_limit(r->interval, r->burst);
	if (!r->limit)
		return xrl_fail(EINVAL, "rule %s: burst %u takes too long to refill at this rate (over a year)",
			    pfx, r->burst);
	return 0;
}

/* A shared GCRA of count per period_ns and burst: interval, limit and the
 * chunk a CPU takes at once. */
static int shared_gcra(__u64 count, __u64 period_ns, __u32 burst, const char *pfx,
		       const char *what, __u64 *interval, __u64 *limit, __u32 *chunk)
{
	*interval = xrl_rate_interval(count, period_ns);
	if (!*interval)
		return xrl_fail(EINVAL, "rule %s: %s rate must be between 1/h and %llu/s",
			    pfx, what, XRL_RATE_MAX_PER_SEC);
	*limit = xrl_burst_limit(*interval, burst);
	if (!*limit)
		return xrl_fail(EINVAL, "rule %s: %s burst %u takes too long to refill at this rate (over a year)",
			    pfx, what, burst);
	*chunk = xrl_chunk(burst, libbpf_num_possible_cpus());
	return 0;
}

/*
 * The data path's coarse clock moves a tick at a time (clock_getres() of
 * CLOCK_MONOTONIC_COARSE: 4 ms at HZ=250). A token bucket whose tolerance
 * (burst / rate) is under XRL_PRECISE_TICKS ticks would admit at most its
 * burst a tick, a fraction of its rate ("100000/s burst 10": 2,500/s): such
 * a rule, or one whose aggregate is such a bucket, meters on the precise
 * clock instead (some 20 ns a packet more).
 */
static __u64 coarse_tick_tu(void)
{
	static __u64 tick;
	struct timespec ts;

	if (!tick) {
		__u64 ns = 4000000;	/* HZ=250, if the clock will not say */

		if (!clock_getres(CLOCK_MONOTONIC_COARSE, &ts) && (ts.tv_sec || ts.tv_nsec))
			ns = ts.tv_sec * XRL_NSEC_PER_SEC + ts.tv_nsec;
		tick = xrl_ns_to_tu(ns);
	}
	return tick;
}

static void rule_clock(struct xrl_rule *r)
{
	__u64 need = XRL_PRECISE_TICKS * coarse_tick_tu();

	r->precise = (r->algo == XRL_ALGO_GCRA && r->limit && r->limit < need) ||
		     (r->agg_limit && r->agg_limit < need);
}

/* aggregate RATE [burst N]: the burst defaults to one second of the rate
 * (at least 1, at most 2^32 - 1); new-keys RATE: burst = the rate's count. */
static int aggregate_check(struct xrl_rule *r, const char *pfx, enum xrl_rule_field *bad)
{
	int err;

	r->agg_interval = r->agg_limit = 0;
	r->agg_chunk = 0;
	if (r->agg_rate_count) {
		*bad = XRL_FIELD_AGGREGATE;
		if (!r->agg_burst) {
			__u64 b = r->agg_rate_count * XRL_PERIOD_SEC / r->agg_rate_period_ns;

			r->agg_burst = b < 1 ? 1 : b > UINT32_MAX ? UINT32_MAX : b;
		}
		err = shared_gcra(r->agg_rate_count, r->agg_rate_period_ns, r->agg_burst, pfx,
				  "aggregate", &r->agg_interval, &r->agg_limit, &r->agg_chunk);
		if (err)
			return err;
	}
	if (r->nk_rate_count) {
		*bad = XRL_FIELD_NEWKEYS;
		r->nk_burst = r->nk_rate_count > UINT32_MAX ? UINT32_MAX : r->nk_rate_count;
		return shared_gcra(r->nk_rate_count, r->nk_rate_period_ns, r->nk_burst, pfx,
				   "new-keys", &r->nk_interval, &r->nk_limit, &r->nk_chunk);
	}
	r->nk_interval = r->nk_limit = 0;	/* the default comes at commit */
	return 0;
}

int xrl_rule_check(struct xrl_rule_entry *e, enum xrl_rule_field *bad)
{
	struct xrl_rule *r = &e->r;
	int maxlen = e->family == 6 ? 128 : 32;
	char pfx[INET6_ADDRSTRLEN + 8];
	enum xrl_rule_field dummy;
	__u8 mask[16] = {};
	int err;

	if (!bad)
		bad = &dummy;
	xrl_prefix_format(e, pfx, sizeof(pfx));
	*bad = XRL_FIELD_ACTION;
	if (r->action > XRL_ACT_DENY)
		return xrl_fail(EINVAL, "rule %s: unknown action %u", pfx, r->action);
	if (!r->key_len) {
		r->key_len = e->family == 6 ? 64 : 32;
		if (r->key_len < e->prefix_len)
			r->key_len = e->prefix_len;
	}
	*bad = XRL_FIELD_KEYLEN;
	if (r->key_len > maxlen)
		return xrl_fail(EINVAL, "rule %s: key length /%u is longer than an IPv%d address",
			    pfx, r->key_len, e->family);
	if (r->key_len < e->prefix_len)
		return xrl_fail(EINVAL, "rule %s: key length /%u is shorter than the prefix",
			    pfx, r->key_len);
	xrl__mask_bits(mask, r->key_len, maxlen / 8);
	memcpy(r->key_mask, mask, sizeof(r->key_mask));

	*bad = XRL_FIELD_ACTION;
	if (rule_check_endpoint(e, pfx))
		return -EINVAL;
	if (r->action != XRL_ACT_LIMIT) {
		/* allow and deny are never metered */
		r->interval = r->limit = 0;
		r->agg_interval = r->agg_limit = r->nk_interval = r->nk_limit = 0;
		r->precise = 0;
		return 0;
	}
	*bad = XRL_FIELD_RATE;
	if (!r->rate_count)
		return xrl_fail(EINVAL, "rule %s: rate must be at least 1", pfx);
	if (r->algo != XRL_ALGO_GCRA || r->unit != XRL_UNIT_PACKETS) {
		err = rule_check_units(e, pfx, bad) ?: aggregate_check(r, pfx, bad);
		rule_clock(r);
		return err;
	}
	r->interval = xrl_rate_interval(r->rate_count, r->rate_period_ns);
	if (!r->interval)
		return xrl_fail(EINVAL, "rule %s: rate must be between 1/h and %llu/s",
			    pfx, XRL_RATE_MAX_PER_SEC);
	*bad = XRL_FIELD_BURST;
	if (!r->burst)
		return xrl_fail(EINVAL, "rule %s: burst must be at least 1", pfx);
	r->limit = xrl_burst_limit(r->interval, r->burst);
	if (!r->limit)
		return xrl_fail(EINVAL, "rule %s: burst %u takes too long to refill at this rate (over a year)",
			    pfx, r->burst);
	err = aggregate_check(r, pfx, bad);
	rule_clock(r);
	return err;
}

/*
 * Rules without new-keys: table / XRL_NEWKEYS_DEFAULT_DIV new keys a second
 * after a burst of half the table: a spoofed flood fills the free half at
 * once and then turns the table over in no less than 8 s, so a real source
 * that sends once in a few seconds keeps its bucket.
 */
static void newkeys_default(struct xrl_rule_entry *v, size_t n, int table)
{
	__u64 rate = table > 0 ? (__u64)table / XRL_NEWKEYS_DEFAULT_DIV : 0;
	__u64 burst = table > 0 ? (__u64)table / 2 : 0;

	if (rate < 1)
		rate = 1;
	if (burst < rate)
		burst = rate;
	for (size_t i = 0; i < n; i++) {
		struct xrl_rule *r = &v[i].r;

		if (r->action != XRL_ACT_LIMIT || r->nk_rate_count)
			continue;
		r->nk_interval = xrl_rate_interval(rate, XRL_PERIOD_SEC);
		r->nk_burst = burst;
		r->nk_limit = xrl_burst_limit(r->nk_interval, burst);
		r->nk_chunk = xrl_chunk(burst, libbpf_num_possible_cpus());
	}
}

int xrl_rule_prepare(struct xrl_rule_entry *e)
{
	return xrl_rule_check(e, NULL);
}

static int cmp_id(const void *a, const void *b)
{
	const struct xrl_rule_entry *x = a, *y = b;

	return x->r.id < y->r.id ? -1 : x->r.id > y->r.id;
}

static int cmp_u32(const void *a, const void *b)
{
	__u32 x = *(const __u32 *)a, y = *(const __u32 *)b;

	return x < y ? -1 : x > y;
}

/* Same configuration: the bucket and counters carry over. */
static bool same_config(const struct xrl_rule *a, const struct xrl_rule *b)
{
	return a->id == b->id && a->action == b->action &&
	       a->key_len == b->key_len && a->on_failure == b->on_failure &&
	       a->rate_count == b->rate_count &&
	       a->rate_period_ns == b->rate_period_ns && a->burst == b->burst &&
	       a->unit == b->unit && a->algo == b->algo && a->dry_run == b->dry_run &&
	       a->ep == b->ep && a->proto == b->proto && a->syn == b->syn &&
	       a->dport_lo == b->dport_lo && a->dport_hi == b->dport_hi && a->scope == b->scope &&
	       a->agg_rate_count == b->agg_rate_count &&
	       a->agg_rate_period_ns == b->agg_rate_period_ns && a->agg_burst == b->agg_burst &&
	       a->nk_rate_count == b->nk_rate_count && a->nk_rate_period_ns == b->nk_rate_period_ns;
}

/* A fresh trie holding the rules of one family: an fd, or an error. */
static int build_trie(int family, const struct xrl_rule_entry *v, size_t n)
{
	int fd = xrl__rules_create(family);

	if (fd < 0)
		return xrl_fail(fd, "cannot create a rule set: %s", strerror(-fd));
	for (size_t i = 0; i < n; i++) {
		struct xrl_lpm6_key k = { .prefixlen = v[i].prefix_len };

		if (v[i].family != family || v[i].r.ep)	/* endpoint rules: endpoints.c */
			continue;
		memcpy(k.addr, v[i].addr, family == 6 ? 16 : 4);
		if (bpf_map_update_elem(fd, &k, &v[i].r, BPF_NOEXIST)) {
			int err = xrl_fail(errno, "cannot write rule %u: %s", v[i].r.id,
				       strerror(errno));

			close(fd);
			return err;
		}
	}
	return fd;
}

static int zero_rule_stats(struct xrl *x, __u32 slot)
{
	size_t sz = (size_t)x->ncpus * sizeof(struct xrl_rule_stats);
	void *zero = calloc(1, sz + sizeof(struct xrl_rule_shared));
	int err = 0;

	if (!zero)
		return -ENOMEM;
	/* and the aggregate's and new-key budget's state: full buckets */
	if (bpf_map_update_elem(x->map_fd[M_RULE_STATS], &slot, zero, BPF_ANY) ||
	    bpf_map_update_elem(x->map_fd[M_RULE_SHARED], &slot, zero, BPF_ANY))
		err = -errno;
	free(zero);
	return err;
}

/* Order by family, prefix length, address: equal prefixes are neighbours. */
static int cmp_prefix(const void *a, const void *b)
{
	const struct xrl_rule_entry *x = *(const struct xrl_rule_entry *const *)a;
	const struct xrl_rule_entry *y = *(const struct xrl_rule_entry *const *)b;

	if (x->family != y->family)
		return x->family - y->family;
	if (x->prefix_len != y->prefix_len)
		return x->prefix_len - y->prefix_len;
	if (memcmp(x->addr, y->addr, 16))
		return memcmp(x->addr, y->addr, 16);
	/* an endpoint rule is named by its prefix and what it covers */
	if (x->r.ep != y->r.ep || x->r.proto != y->r.proto || x->r.syn != y->r.syn)
		return (x->r.ep - y->r.ep) * 65536 + (x->r.proto - y->r.proto) * 2 + (x->r.syn - y->r.syn);
	if (x->r.dport_lo != y->r.dport_lo)
		return x->r.dport_lo - y->r.dport_lo;
	return x->r.dport_hi - y->r.dport_hi;
}

static int cmp_id_ptr(const void *a, const void *b)
{
	return cmp_id(*(const void *const *)a, *(const void *const *)b);
}

/*
 * Every error of a whole set, each reported once through report(): a rule
 * out of range, every duplicate prefix and every duplicate id (each second,
 * third, ... occurrence, with `first` the index of the one written first;
 * -1 when there is none). Returns the first error, or 0.
 */
int xrl_rules_check_all(struct xrl_rule_entry *v, size_t n, xrl_rules_report report, void *ctx)
{
	struct xrl_rule_entry **p = NULL;
	int err = 0, e;

	/* the one limit, for the CLI, the daemon and --check alike */
	if (n > XRL_MAX_RULES) {
		err = xrl_fail(ENOSPC, "too many rules: %zu (at most %d, IPv4 and IPv6 together)",
			   n, XRL_MAX_RULES);
		if (report)
			report(ctx, XRL_MAX_RULES, -1, xrl_errmsg());
		return err;
	}
	for (size_t i = 0; i < n; i++) {
		e = xrl_rule_prepare(&v[i]);
		if (e) {
			err = err ?: e;
			if (!report)
				return err;
			report(ctx, i, -1, xrl_errmsg());
		}
	}
	if (n < 2 || err)
		return err;
	p = malloc(n * sizeof(*p));
	if (!p)
		return xrl_fail(ENOMEM, "out of memory");
	for (size_t i = 0; i < n; i++)
		p[i] = &v[i];
	xrl_sort(p, n, sizeof(*p), cmp_prefix);
	/* within a run of equal prefixes the first written is the one kept */
	for (size_t i = 0, j; i < n; i = j) {
		struct xrl_rule_entry *first = p[i];

		for (j = i + 1; j < n && cmp_prefix(&p[i], &p[j]) == 0; j++)
			if (p[j] < first)
				first = p[j];
		for (size_t k = i; k < j; k++) {
			char pfx[INET6_ADDRSTRLEN + 8];

			if (p[k] == first)
				continue;
			xrl_prefix_format(p[k], pfx, sizeof(pfx));
			e = first->r.id ? xrl_fail(EEXIST, "duplicate prefix %s: rule %u has it already",
					       pfx, first->r.id)
					: xrl_fail(EEXIST, "duplicate prefix %s", pfx);
			err = err ?: e;
			if (!report)
				goto out;
			report(ctx, p[k] - v, first - v, xrl_errmsg());
		}
	}
	xrl_sort(p, n, sizeof(*p), cmp_id_ptr);
	for (size_t i = 0, j; i < n; i = j) {
		struct xrl_rule_entry *first = p[i];

		for (j = i + 1; j < n && p[i]->r.id && p[j]->r.id == p[i]->r.id; j++)
			if (p[j] < first)
				first = p[j];
		for (size_t k = i; k < j && p[i]->r.id; k++) {
			if (p[k] == first)
				continue;
			e = xrl_fail(EEXIST, "duplicate rule id %u", p[k]->r.id);
			err = err ?: e;
			if (!report)
				goto out;
			report(ctx, p[k] - v, first - v, xrl_errmsg());
		}
	}
	/* what the endpoint tables can hold, checked here so that --check,
	 * the CLI and a reload refuse the same sets */
	if (!err) {
		size_t bad = 0;

		err = xrl__endpoints_check(v, n, &bad);
		if (err && report)
			report(ctx, bad, -1, xrl_errmsg());
	}
out:
	free(p);
	return err;
}

struct first_bad {
	size_t bad;
	bool set;
	char msg[sizeof(xrl__errbuf)];
};

static void keep_first(void *ctx, size_t bad, long first, const char *msg)
{
	struct first_bad *f = ctx;

	(void)first;
	/* the earliest rule in the file that is wrong */
	if (!f->set || bad < f->bad) {
		f->bad = bad;
		f->set = true;
		snprintf(f->msg, sizeof(f->msg), "%s", msg);
	}
}

int xrl_rules_validate(struct xrl_rule_entry *v, size_t n, size_t *bad)
{
	struct first_bad f = {};
	int err = xrl_rules_check_all(v, n, keep_first, &f);

	if (err && f.set) {
		*bad = f.bad;
		snprintf(xrl__errbuf, sizeof(xrl__errbuf), "%s", f.msg);
	}
	return err;
}

/* Ids of 0 get the lowest ids not taken. */
static int assign_ids(struct xrl_rule_entry *v, size_t n)
{
	__u32 *ids = malloc((n + 1) * sizeof(*ids)), id = 1;
	size_t k = 0, j = 0;

	if (!ids)
		return xrl_fail(ENOMEM, "out of memory");
	for (size_t i = 0; i < n; i++)
		if (v[i].r.id)
			ids[k++] = v[i].r.id;
	xrl_sort(ids, k, sizeof(*ids), cmp_u32);
	for (size_t i = 0; i < n; i++) {
		if (v[i].r.id)
			continue;
		while (j < k && ids[j] < id)
			j++;
		while (j < k && ids[j] == id)
			id++, j++;
		v[i].r.id = id++;
	}
	free(ids);
	return 0;
}

int xrl_rules_commit(struct xrl *x, struct xrl_rule_entry *v, size_t n)
{
	struct xrl_rule_entry *old = NULL, **oldp = NULL;
	size_t nold = 0, bad;
	unsigned char *used = NULL;
	__u32 *fresh = NULL;
	size_t nfresh = 0;
	int err, next, fd4 = -1, fd6 = -1, old4 = -1;
	__u64 gen;

	/* 1. validate the whole set before touching anything */
	err = xrl_rules_validate(v, n, &bad);
	if (!err)
		err = assign_ids(v, n);
	if (err)
		return err;

	/*
	 * 2. rules that did not change keep their slot and generation; a new
	 * or changed rule gets a slot that no published rule holds. The
	 * published set holds at most XRL_MAX_RULES of the XRL_RULE_SLOTS, so
	 * there is always one; a slot that only an older set held is out of
	 * use (see xrl__rules_publish). Nothing is written in this step.
	 */
	err = xrl_rules_get(x, &old, &nold);
	if (err)
		return err;
	used = calloc(XRL_RULE_SLOTS, 1);
	oldp = malloc((nold + 1) * sizeof(*oldp));
	fresh = malloc((n + 1) * sizeof(*fresh));
	if (!used || !oldp || !fresh) {
		err = xrl_fail(ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < nold; i++) {
		if (old[i].r.slot < XRL_RULE_SLOTS)
			used[old[i].r.slot] = 1;
		oldp[i] = &old[i];
	}
	xrl_sort(oldp, nold, sizeof(*oldp), cmp_prefix);
	gen = x->ctrl->gen;
	next = 0;
	for (size_t i = 0; i < n; i++) {
		struct xrl_rule_entry *key = &v[i], **hit;

		hit = nold ? bsearch(&key, oldp, nold, sizeof(*oldp), cmp_prefix) : NULL;
		if (hit && same_config(&v[i].r, &(*hit)->r) &&
		    (*hit)->r.slot < XRL_RULE_SLOTS) {
			v[i].r.slot = (*hit)->r.slot;
			v[i].r.gen = (*hit)->r.gen;
			continue;
		}
		while (next < XRL_RULE_SLOTS && used[next])
			next++;
		if (next == XRL_RULE_SLOTS) {	/* validation makes this impossible */
			err = xrl_fail(ENOSPC, "no free rule slot");
			goto out;
		}
		used[next] = 2;
		v[i].r.slot = next;
		v[i].r.gen = (__u32)++gen;
		fresh[nfresh++] = next;
	}

	/* the default new-key budget follows the table size */
	newkeys_default(v, n, xrl__map_max_entries(x->map_fd[M_BUCKETS4]));

	/* 3. build a fresh trie per family, completely */
	fd4 = build_trie(4, v, n);
	if (fd4 < 0) {
		err = fd4;
		goto out;
	}
	fd6 = build_trie(6, v, n);
	if (fd6 < 0) {
		err = fd6;
		goto out;
	}
	old4 = xrl__rules_fd(x, 4);	/* for a roll-back */
	if (old4 < 0 && old4 != -ENOENT) {
		err = old4;	/* xrl__published_fd() said why */
		goto out;
	}

	/* 4. fresh counters, now that nothing but publishing can fail: these
	 * slots are held by no published rule, so a failure from here on
	 * loses no rule's counters either */
	for (size_t i = 0; i < nfresh; i++) {
		err = zero_rule_stats(x, fresh[i]);
		if (err) {
			err = xrl_fail(err, "cannot reset counters: %s", strerror(-err));
			goto out;
		}
	}
	/* generations are spent even if publishing fails below: a packet may
	 * have metered with one before a roll-back */
	x->ctrl->gen = gen;

	/* 5. the endpoint rules first: until their class array is swapped
	 * in, packets stay on the old endpoint set (endpoints.c) */
	err = xrl__endpoints_commit(x, v, n);
	if (err)
		goto out;

	/* 6. publish each family with one update; roll IPv4 back if IPv6
	 * cannot follow, so that a failed commit changes nothing */
	err = xrl__rules_publish(x, 4, fd4);
	if (err) {
		err = xrl_fail(err, "cannot publish the IPv4 rules: %s", strerror(-err));
		goto out;
	}
	err = xrl__rules_publish(x, 6, fd6);
	if (err) {
		__u32 zero = 0;

		err = xrl_fail(err, "cannot publish the IPv6 rules: %s", strerror(-err));
		if (old4 >= 0)
			xrl__rules_publish(x, 4, old4);
		else
			bpf_map_delete_elem(x->map_fd[M_RULES4], &zero);
		goto out;
	}
	x->ctrl->rules = n;
	err = 0;
out:
	/* after publishing (or rolling back): what a packet cached under the
	 * old set is void from here on */
	if (fd4 >= 0)
		xrl__cache_bump(x);
	/* a published trie lives on in the outer map */
	if (fd4 >= 0)
		close(fd4);
	if (fd6 >= 0)
		close(fd6);
	if (old4 >= 0)
		close(old4);
	free(fresh);
	free(oldp);
	free(used);
	free(old);
	return err;
}
