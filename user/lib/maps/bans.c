// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * libxrl: bans (bans.h). Each ban is one entry of its family's LPM trie,
 * written in place; the totals are one mmap-ed entry shared with the data
 * path, added to atomically.
 */
#include "maps/internal.h"
#include "maps/bans.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* The key of a family's trie: prefixlen and the address (4 or 16 bytes). */
struct ban_key {
	__u32 prefixlen;
	__u8 addr[16];
};

static int bans_fd(struct xrl *x, int family)
{
	return x->map_fd[family == 6 ? M_BANS6 : M_BANS4];
}

static struct xrl_ban_totals *totals(struct xrl *x)
{
	void *p;

	if (x->ban_totals)
		return x->ban_totals;
	p = mmap(NULL, sizeof(struct xrl_ban_totals), PROT_READ | PROT_WRITE, MAP_SHARED,
		 x->map_fd[M_BAN_TOTALS], 0);
	if (p == MAP_FAILED)
		return NULL;
	x->ban_totals = p;
	return p;
}

static __u32 family_bit(int family)
{
	return family == 6 ? XRL_BANS_V6 : XRL_BANS_V4;
}

/* After an insert: packets of the family look bans up. */
static void families_set(struct xrl *x, int family)
{
	__atomic_fetch_or(&xrl_control(x)->ban_families, family_bit(family), __ATOMIC_SEQ_CST);
}

static bool family_empty(struct xrl *x, int family)
{
	struct ban_key k;

	return bpf_map_get_next_key(bans_fd(x, family), NULL, &k) != 0;
}

/* After deletes: a family whose table is empty skips the look-up. The
 * flag is cleared first and the table looked at again after: an insert
 * (the data path's) that the first look missed sets it again itself, one
 * the second look sees sets it here. */
static void families_update(struct xrl *x)
{
	for (int family = 4; family <= 6; family += 2) {
		if (!family_empty(x, family))
			continue;
		__atomic_fetch_and(&xrl_control(x)->ban_families, ~family_bit(family), __ATOMIC_SEQ_CST);
		if (!family_empty(x, family))
			families_set(x, family);
	}
}

/* After a change to a ban table is visible to the data path: the entries
 * of the banned-source cache filled before it are void (struct
 * xrl_ban_hot; the data path reads the generation before its look-up). */
static void gen_bump(struct xrl *x)
{
	__atomic_fetch_add(&xrl_control(x)->ban_gen, 1, __ATOMIC_SEQ_CST);
}

/*
 * The drops the banned-source cache holds, not yet added to their bans'
 * counts (struct xrl_ban_hot): per CPU, per source, at most XRL_HOT_FLUSH
 * - 1 each. A reader adds those of the ban it shows: the entry's source
 * masked by the ban's length, and the ban's set time, name it.
 */
struct ban_pend {
	__u8 family, plen;
	__u8 addr[16];
	__u64 set_ns;
	__u64 n;
};

static int cmp_pend(const void *a, const void *b)
{
	const struct ban_pend *p = a, *q = b;

	if (p->family != q->family)
		return p->family < q->family ? -1 : 1;
	if (p->plen != q->plen)
		return p->plen < q->plen ? -1 : 1;
	if (p->set_ns != q->set_ns)
		return p->set_ns < q->set_ns ? -1 : 1;
	return memcmp(p->addr, q->addr, 16);
}

static void mask_addr(__u8 *a, __u8 plen)
{
	for (int i = 0; i < 16; i++) {
		int bits = plen - 8 * i;

		a[i] &= bits >= 8 ? 0xff : bits <= 0 ? 0 : (__u8)(0xff << (8 - bits));
	}
}

#define PEND_BATCH	256

/* One cache entry of one CPU into v, when it holds drops. */
static int pend_push(const struct xrl_ban_hot *e, struct ban_pend **v, size_t *n, size_t *cap)
{
	struct ban_pend *p;

	if (!e->pending || (e->family != 4 && e->family != 6))
		return 0;
	if (*n == *cap) {
		size_t nc = *cap ? 2 * *cap : 64;
		struct ban_pend *t = realloc(*v, nc * sizeof(**v));

		if (!t)
			return xrl_fail(ENOMEM, "out of memory");
		*v = t;
		*cap = nc;
	}
	p = &(*v)[(*n)++];
	memset(p, 0, sizeof(*p));
	p->family = e->family;
	p->plen = e->prefix_len;
	memcpy(p->addr, e->src, e->family == 6 ? 16 : 4);
	mask_addr(p->addr, p->plen);
	p->set_ns = e->set_ns;
	p->n = e->pending;
	return 0;
}

/* Every entry of every CPU's cache with drops pending, sorted; read
 * PEND_BATCH keys a call (a daemon reads the bans every second). */
static int pend_read(struct xrl *x, struct ban_pend **out, size_t *n)
{
	size_t cap = 0, ncpu = x->ncpus > 0 ? (size_t)x->ncpus : 1;
	int fd = x->map_fd[M_BAN_HOT], err = 0;
	__u32 keys[PEND_BATCH], batch = 0;
	struct ban_pend *v = NULL;
	struct xrl_ban_hot *vals;
	bool first = true, end = false;

	*out = NULL;
	*n = 0;
	if (fd < 0)
		return 0;
	vals = calloc(ncpu * PEND_BATCH, sizeof(*vals));
	if (!vals)
		return xrl_fail(ENOMEM, "out of memory");
	while (!end && !err) {
		__u32 count = PEND_BATCH;
		LIBBPF_OPTS(bpf_map_batch_opts, bo);

		if (bpf_map_lookup_batch(fd, first ? NULL : &batch, &batch, keys, vals, &count, &bo)) {
			if (errno != ENOENT) {
				err = xrl_fail(errno, "cannot read the banned-source cache: %s",
					       strerror(errno));
				break;
			}
			end = true;	/* the last batch, count entries in it */
		}
		first = false;
		for (size_t i = 0; i < count * ncpu && !err; i++)
			err = pend_push(&vals[i], &v, n, &cap);
		if (!count)
			end = true;
	}
	free(vals);
	if (err) {
		free(v);
		*n = 0;
		return err;
	}
	xrl_sort(v, *n, sizeof(*v), cmp_pend);
	*out = v;
	return 0;
}

/* The drops pending in the cache for this ban. */
static __u64 pend_of(const struct ban_pend *v, size_t n, int family, const __u8 *addr, __u8 plen,
		     __u64 set_ns)
{
	struct ban_pend k = { .family = family, .plen = plen, .set_ns = set_ns };
	size_t lo = 0, hi = n;
	__u64 sum = 0;

	memcpy(k.addr, addr, family == 6 ? 16 : 4);
	mask_addr(k.addr, plen);
	while (lo < hi) {	/* the first not below k */
		size_t mid = lo + (hi - lo) / 2;

		if (cmp_pend(&v[mid], &k) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < n && !cmp_pend(&v[lo], &k); lo++)
		sum += v[lo].n;
	return sum;
}

/* A counter of the totals, added to as the data path adds (atomically). */
static void count(struct xrl *x, __u64 *(*field)(struct xrl_ban_totals *, __u32), __u32 origin)
{
	struct xrl_ban_totals *t = totals(x);

	if (t)
		__atomic_fetch_add(field(t, origin), 1, __ATOMIC_RELAXED);
}

static __u64 *f_set(struct xrl_ban_totals *t, __u32 o) { return &t->set[o % XRL_BAN_ORIGINS]; }
static __u64 *f_expired(struct xrl_ban_totals *t, __u32 o) { return &t->expired[o % XRL_BAN_ORIGINS]; }
static __u64 *f_deleted(struct xrl_ban_totals *t, __u32 o) { return &t->deleted[o % XRL_BAN_ORIGINS]; }
static __u64 *f_full(struct xrl_ban_totals *t, __u32 o) { (void)o; return &t->refused_full; }

static void key_of(struct ban_key *k, int family, const __u8 *addr, __u8 plen)
{
	memset(k, 0, sizeof(*k));
	k->prefixlen = plen;
	memcpy(k->addr, addr, family == 6 ? 16 : 4);
}

static void entry_of(struct xrl_ban_entry *e, int family, const struct ban_key *k,
		     const struct xrl_ban *b, __u64 now)
{
	memset(e, 0, sizeof(*e));
	e->family = family;
	e->prefix_len = k->prefixlen;
	memcpy(e->addr, k->addr, family == 6 ? 16 : 4);
	e->b = *b;
	e->b.who[sizeof(e->b.who) - 1] = '\0';
	e->b.reason[sizeof(e->b.reason) - 1] = '\0';
	e->ended = b->expires_ns && (__s64)(now - b->expires_ns) >= 0;
	e->left_ns = b->expires_ns && !e->ended ? b->expires_ns - now : 0;
}

/* The entry of exactly this prefix: a look-up finds the longest prefix of
 * at most this length covering it; the value says whether it is this one. */
static int lookup_exact(struct xrl *x, int family, const struct ban_key *k, struct xrl_ban *b)
{
	if (bpf_map_lookup_elem(bans_fd(x, family), k, b))
		return errno == ENOENT ? -ENOENT : xrl_fail(errno, "cannot read the ban table: %s",
							      strerror(errno));
	return b->prefix_len == k->prefixlen ? 0 : -ENOENT;
}

int xrl_ban_get(struct xrl *x, int family, const __u8 *addr, __u8 prefix_len,
		struct xrl_ban_entry *out)
{
	struct ban_key k;
	struct xrl_ban b;
	int err;

	key_of(&k, family, addr, prefix_len);
	if ((err = lookup_exact(x, family, &k, &b)))
		return err;
	entry_of(out, family, &k, &b, xrl_now_ns(x));
	return 0;
}

static void prefix_str(int family, const __u8 *addr, __u8 plen, char *buf, size_t len)
{
	struct xrl_rule_entry e = { .family = family, .prefix_len = plen };

	memcpy(e.addr, addr, 16);
	xrl_prefix_format(&e, buf, len);
}

/* A ban's "unbanned" once it is out of the table: unless the data path
 * said it already (at the first packet after its end). */
static void unbanned(struct xrl *x, int family, const __u8 *addr, __u8 plen,
		     const struct xrl_ban *b, __u32 cause)
{
	if (b->state != XRL_BAN_S_ENDED)
		xrl__ban_event(x, XRL_EV_UNBANNED, family, addr, plen, b, cause);
}

static int ban_add(struct xrl *x, const struct xrl_ban_spec *s, bool *replaced, bool sweep)
{
	struct xrl_ban b = {}, old;
	struct ban_key k;
	__u64 now = xrl_now_ns(x);
	int err, fd = bans_fd(x, s->family);
	bool was;

	if (replaced)
		*replaced = false;
	if (xrl_ban_spec_check(s))
		return -EINVAL;
	if (sweep)
		xrl_bans_sweep(x, NULL, NULL, NULL);
	key_of(&k, s->family, s->addr, s->prefix_len);
	was = lookup_exact(x, s->family, &k, &old) == 0;
	b.expires_ns = s->duration_s ? now + s->duration_s * 1000000000ULL : 0;
	/* a decider never replaces another origin's live ban that ends later
	 * or never: one rule for every decider (fail2ban, crowdsec, fleet) */
	if (was && s->origin == XRL_BAN_DECIDER &&
	    (old.origin != XRL_BAN_DECIDER || strncmp(old.who, s->who, sizeof(old.who))) &&
	    (!old.expires_ns || (__s64)(now - old.expires_ns) < 0) &&
	    (!old.expires_ns || (b.expires_ns && old.expires_ns >= b.expires_ns)))
		return 1;
	if (was) {
		struct ban_pend *pv;
		size_t np;

		/* its count goes on, with the drops the cache holds for it
		 * (they name the old ban, which no flush will find) */
		b.dropped = old.dropped;
		if (pend_read(x, &pv, &np) == 0) {
			b.dropped += pend_of(pv, np, s->family, k.addr, s->prefix_len, old.set_ns);
			free(pv);
		}
		if (replaced)
			*replaced = true;
	}
	b.set_ns = now;
	b.origin = s->origin;
	b.prefix_len = s->prefix_len;
	/* its "banned" goes out here, once it is in the table; else (no
	 * program to write it) at its first drop, from the data path */
	b.state = xrl__ban_events_ready(x) ? XRL_BAN_S_BANNED : XRL_BAN_S_NEW;
	memcpy(b.who, s->who, sizeof(b.who));
	memcpy(b.reason, s->reason, sizeof(b.reason));
	if (bpf_map_update_elem(fd, &k, &b, BPF_ANY)) {
		char p[64];

		err = errno;
		prefix_str(s->family, s->addr, s->prefix_len, p, sizeof(p));
		if (err == ENOSPC || err == E2BIG) {
			count(x, f_full, 0);
			return xrl_fail(ENOSPC, "cannot ban %s: the IPv%d ban table is full (%d entries); "
				    "no ban is evicted for it: lift one (ban del) or attach with a larger 'bans' "
				    "after a purge", p, s->family, xrl__map_max_entries(fd));
		}
		return xrl_fail(err, "cannot ban %s: %s", p, strerror(err));
	}
	families_set(x, s->family);
	gen_bump(x);
	if (was)	/* the old entry is gone: as lifted (each origin's live = set - expired - deleted) */
		count(x, f_deleted, old.origin);
	count(x, f_set, s->origin);
	if (b.state == XRL_BAN_S_BANNED)
		xrl__ban_event(x, XRL_EV_BANNED, s->family, s->addr, s->prefix_len, &b, 0);
	return 0;
}

int xrl_ban_add(struct xrl *x, const struct xrl_ban_spec *s, bool *replaced)
{
	return ban_add(x, s, replaced, true);
}

int xrl_ban_add_nosweep(struct xrl *x, const struct xrl_ban_spec *s, bool *replaced)
{
	return ban_add(x, s, replaced, false);
}

static int ban_del(struct xrl *x, int family, const __u8 *addr, __u8 prefix_len, const char *who,
		   bool sweep)
{
	struct xrl_ban b;
	struct ban_key k;
	char p[64], by[40];
	int err;

	if (sweep)
		xrl_bans_sweep(x, NULL, NULL, NULL);
	key_of(&k, family, addr, prefix_len);
	prefix_str(family, addr, prefix_len, p, sizeof(p));
	if ((err = lookup_exact(x, family, &k, &b)) == -ENOENT)
		return xrl_fail(ENOENT, "%s is not banned", p);
	if (err)
		return err;
	if (who && (b.origin != XRL_BAN_DECIDER || strncmp(b.who, who, sizeof(b.who)))) {
		xrl_ban_by_format(&b, by, sizeof(by));
		return xrl_fail(EPERM, "the ban of %s is %s's, not %s's: left as it is", p, by, who);
	}
	if (bpf_map_delete_elem(bans_fd(x, family), &k))
		return errno == ENOENT ? xrl_fail(ENOENT, "%s is not banned", p) :
			xrl_fail(errno, "cannot lift the ban of %s: %s", p, strerror(errno));
	gen_bump(x);
	count(x, f_deleted, b.origin);
	families_update(x);
	unbanned(x, family, addr, prefix_len, &b, XRL_EV_CAUSE_LIFTED);
	return 0;
}

int xrl_ban_del(struct xrl *x, int family, const __u8 *addr, __u8 prefix_len, const char *who)
{
	return ban_del(x, family, addr, prefix_len, who, true);
}

int xrl_ban_del_nosweep(struct xrl *x, int family, const __u8 *addr, __u8 prefix_len, const char *who)
{
	return ban_del(x, family, addr, prefix_len, who, false);
}

/* Every entry of one family's table, appended to *v. */
static int read_family(struct xrl *x, int family, __u64 now, struct xrl_ban_entry **v,
		       size_t *n, size_t *cap)
{
	struct ban_key k, next;
	int fd = bans_fd(x, family);
	void *prev = NULL;

	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		struct xrl_ban b;

		k = next;
		prev = &k;
		if (bpf_map_lookup_elem(fd, &k, &b))
			continue;	/* gone meanwhile */
		if (b.prefix_len != k.prefixlen)
			continue;	/* gone meanwhile: a shorter one answered */
		if (*n == *cap) {
			size_t nc = *cap ? 2 * *cap : 64;
			struct xrl_ban_entry *t = realloc(*v, nc * sizeof(**v));

			if (!t)
				return xrl_fail(ENOMEM, "out of memory");
			*v = t;
			*cap = nc;
		}
		entry_of(&(*v)[(*n)++], family, &k, &b, now);
	}
	if (errno != ENOENT)
		return xrl_fail(errno, "cannot walk the ban table: %s", strerror(errno));
	return 0;
}

static int cmp_entry(const void *a, const void *b)
{
	const struct xrl_ban_entry *p = a, *q = b;
	int c;

	if (p->family != q->family)
		return p->family < q->family ? -1 : 1;
	if ((c = memcmp(p->addr, q->addr, 16)))
		return c;
	return p->prefix_len < q->prefix_len ? -1 : p->prefix_len > q->prefix_len;
}

/* Every ban; with_pending: their counts with the drops the cache holds. */
static int bans_get(struct xrl *x, struct xrl_ban_entry **out, size_t *n, bool with_pending)
{
	struct xrl_ban_entry *v = NULL;
	struct ban_pend *pv = NULL;
	size_t cap = 0, np = 0;
	__u64 now = xrl_now_ns(x);
	int err;

	*n = 0;
	if ((err = read_family(x, 4, now, &v, n, &cap)) ||
	    (err = read_family(x, 6, now, &v, n, &cap)) ||
	    (with_pending && *n && (err = pend_read(x, &pv, &np)))) {
		free(v);
		*n = 0;
		return err;
	}
	for (size_t i = 0; i < *n && np; i++)
		v[i].b.dropped += pend_of(pv, np, v[i].family, v[i].addr, v[i].prefix_len,
					  v[i].b.set_ns);
	free(pv);
	/* xrl_sort: no qsort() of NULL when both tables are empty (UBSan) */
	xrl_sort(v, *n, sizeof(*v), cmp_entry);
	*out = v;
	return 0;
}

int xrl_bans_get(struct xrl *x, struct xrl_ban_entry **out, size_t *n)
{
	return bans_get(x, out, n, true);
}

/* Delete one entry read before, unless it changed since (a rule's ban set
 * again over an ended one in between: kept). */
static int del_if_same(struct xrl *x, const struct xrl_ban_entry *e, struct xrl_ban *now)
{
	struct ban_key k;

	key_of(&k, e->family, e->addr, e->prefix_len);
	if (lookup_exact(x, e->family, &k, now) || now->set_ns != e->b.set_ns ||
	    now->expires_ns != e->b.expires_ns)
		return -ESTALE;
	return bpf_map_delete_elem(bans_fd(x, e->family), &k) ? -errno : 0;
}

int xrl_bans_sweep(struct xrl *x, size_t *n, xrl_ban_cb cb, void *ctx)
{
	struct xrl_ban_entry *v;
	size_t nv, done = 0;
	int err;

	if (n)
		*n = 0;
	if ((err = bans_get(x, &v, &nv, false)))
		return err;
	for (size_t i = 0; i < nv; i++) {
		struct xrl_ban last;

		if (!v[i].ended)
			continue;
		if (cb)
			cb(&v[i], ctx);
		/* its "unbanned" now, when no packet came after its end to
		 * say it (the state read again just before the delete) */
		if (del_if_same(x, &v[i], &last) == 0) {
			count(x, f_expired, v[i].b.origin);
			unbanned(x, v[i].family, v[i].addr, v[i].prefix_len, &last, XRL_EV_CAUSE_ENDED);
			done++;
		}
	}
	free(v);
	if (done) {
		gen_bump(x);
		families_update(x);
	}
	if (n)
		*n = done;
	return 0;
}

int xrl_ban_flush(struct xrl *x, __u32 origin, const char *who, size_t *n)
{
	struct xrl_ban_entry *v;
	size_t nv;
	int err;

	*n = 0;
	xrl_bans_sweep(x, NULL, NULL, NULL);
	if ((err = bans_get(x, &v, &nv, false)))
		return err;
	for (size_t i = 0; i < nv; i++) {
		struct ban_key k;

		if (origin && v[i].b.origin != origin)
			continue;
		if (who && (v[i].b.origin != XRL_BAN_DECIDER || strncmp(v[i].b.who, who, XRL_BAN_WHO_LEN)))
			continue;
		key_of(&k, v[i].family, v[i].addr, v[i].prefix_len);
		if (bpf_map_delete_elem(bans_fd(x, v[i].family), &k) == 0) {
			count(x, f_deleted, v[i].b.origin);
			unbanned(x, v[i].family, v[i].addr, v[i].prefix_len, &v[i].b, XRL_EV_CAUSE_LIFTED);
			(*n)++;
		} else if (errno != ENOENT) {
			err = xrl_fail(errno, "cannot lift a ban: %s", strerror(errno));
			break;
		}
	}
	free(v);
	if (*n)
		gen_bump(x);
	families_update(x);
	return err;
}

int xrl_bans_apply_config(struct xrl *x, const struct xrl_ban_spec *v, size_t n,
			  size_t *set, size_t *lifted)
{
	struct xrl_ban_entry *cur;
	size_t ncur;
	int err;

	*set = *lifted = 0;
	for (size_t i = 0; i < n; i++)
		if (v[i].origin != XRL_BAN_CONFIG)
			return xrl_fail(EINVAL, "a configuration's ban has origin config");
	xrl_bans_sweep(x, NULL, NULL, NULL);
	if ((err = bans_get(x, &cur, &ncur, false)))
		return err;
	/* lift the config bans the file no longer has */
	for (size_t i = 0; i < ncur && !err; i++) {
		bool kept = false;
		struct ban_key k;

		if (cur[i].b.origin != XRL_BAN_CONFIG)
			continue;
		for (size_t j = 0; j < n && !kept; j++)
			kept = v[j].family == cur[i].family && v[j].prefix_len == cur[i].prefix_len &&
			       !memcmp(v[j].addr, cur[i].addr, 16);
		if (kept)
			continue;
		key_of(&k, cur[i].family, cur[i].addr, cur[i].prefix_len);
		if (bpf_map_delete_elem(bans_fd(x, cur[i].family), &k) == 0) {
			count(x, f_deleted, XRL_BAN_CONFIG);
			unbanned(x, cur[i].family, cur[i].addr, cur[i].prefix_len, &cur[i].b,
				 XRL_EV_CAUSE_LIFTED);
			(*lifted)++;
		}
	}
	/* set those not held by a live config ban already */
	for (size_t j = 0; j < n && !err; j++) {
		struct xrl_ban_entry e;

		if (xrl_ban_get(x, v[j].family, v[j].addr, v[j].prefix_len, &e) == 0 &&
		    e.b.origin == XRL_BAN_CONFIG && !e.ended)
			continue;
		if (!(err = xrl_ban_add(x, &v[j], NULL)))
			(*set)++;
	}
	free(cur);
	if (*lifted)
		gen_bump(x);
	families_update(x);
	return err;
}

int xrl_ban_totals_get(struct xrl *x, struct xrl_ban_totals *t)
{
	__u32 zero = 0;

	if (bpf_map_lookup_elem(x->map_fd[M_BAN_TOTALS], &zero, t))
		return xrl_fail(errno, "cannot read the ban counters: %s", strerror(errno));
	return 0;
}

int xrl_ban_stats_get(struct xrl *x, struct xrl_ban_stats *sum)
{
	size_t nf = sizeof(*sum) / sizeof(__u64);
	__u64 *vals = calloc(x->ncpus, sizeof(*sum)), *s = (__u64 *)sum;
	__u32 zero = 0;

	if (!vals)
		return xrl_fail(ENOMEM, "out of memory");
	if (bpf_map_lookup_elem(x->map_fd[M_BAN_STATS], &zero, vals)) {
		int err = xrl_fail(errno, "cannot read the ban counters: %s", strerror(errno));

		free(vals);
		return err;
	}
	memset(sum, 0, sizeof(*sum));
	for (int c = 0; c < x->ncpus; c++)
		for (size_t f = 0; f < nf; f++)
			s[f] += vals[c * nf + f];
	sum->clock_j = sum->clock_ns = 0;	/* not counters */
	free(vals);
	return 0;
}

int xrl_bans_fill(struct xrl *x, int family, __u32 *n, __u32 *cap)
{
	struct ban_key k, next;
	int fd = bans_fd(x, family), c = xrl__map_max_entries(fd);
	void *prev = NULL;

	if (c < 0)
		return xrl_fail(c, "cannot read the ban table: %s", strerror(-c));
	*cap = c;
	*n = 0;
	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		k = next;
		prev = &k;
		(*n)++;
	}
	return 0;
}

int xrl_offenders_count(struct xrl *x, __u32 *n)
{
	struct xrl_offender_key k, next;
	void *prev = NULL;

	*n = 0;
	while (bpf_map_get_next_key(x->map_fd[M_OFFENDERS], prev, &next) == 0) {
		k = next;
		prev = &k;
		(*n)++;
	}
	return 0;
}
