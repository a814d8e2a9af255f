// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * libxrl: replay's bookkeeping: the keys seen limited, in order of their
 * first drop, and the look-ups of the fast path (replay.c).
 */
#define _GNU_SOURCE	/* sched_getcpu(), CPU_SET() */
#include "maps/internal.h"
#include "features/replay_keys.h"

#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static __u64 key_hash(__u32 gen, int family, const __u8 *addr)
{
	__u64 h = 1469598103934665603ULL ^ gen ^ ((__u64)family << 32);

	for (int i = 0; i < 16; i++)
		h = (h ^ addr[i]) * 1099511628211ULL;
	return h;
}

static int kt_grow(struct key_table *t)
{
	size_t ns = t->nslots ? t->nslots * 2 : 1024;
	__u32 *s = calloc(ns, sizeof(*s));

	if (!s)
		return -ENOMEM;
	for (size_t i = 0; i < t->n; i++) {
		size_t j = key_hash(t->gen[i], t->v[i].family, t->v[i].addr) & (ns - 1);

		while (s[j])
			j = (j + 1) & (ns - 1);
		s[j] = i + 1;
	}
	free(t->slot);
	t->slot = s;
	t->nslots = ns;
	return 0;
}

/* The entry of (gen, key), made when new; NULL when out of memory. */
struct xrl_replay_key *xrl__kt_get(struct key_table *t, const struct xrl_key *k,
				   const struct xrl_rule *r)
{
	size_t j;

	if ((t->n + 1) * 2 > t->nslots && kt_grow(t))
		return NULL;
	j = key_hash(k->gen, k->family, k->addr) & (t->nslots - 1);
	for (; t->slot[j]; j = (j + 1) & (t->nslots - 1)) {
		size_t i = t->slot[j] - 1;

		if (t->gen[i] == k->gen && t->v[i].family == k->family &&
		    !memcmp(t->v[i].addr, k->addr, 16))
			return &t->v[i];
	}
	if (t->n == t->cap) {
		size_t nc = t->cap ? t->cap * 2 : 256;
		struct xrl_replay_key *v = realloc(t->v, nc * sizeof(*v));
		__u32 *g = realloc(t->gen, nc * sizeof(*g));
		struct kt_seen *w = realloc(t->seen, nc * sizeof(*w));

		if (v)
			t->v = v;
		if (g)
			t->gen = g;
		if (w)
			t->seen = w;
		if (!v || !g || !w)
			return NULL;
		t->cap = nc;
	}
	t->slot[j] = t->n + 1;
	t->gen[t->n] = k->gen;
	memset(&t->seen[t->n], 0, sizeof(t->seen[t->n]));
	memset(&t->v[t->n], 0, sizeof(t->v[t->n]));
	t->v[t->n].family = k->family;
	memcpy(t->v[t->n].addr, k->addr, 16);
	t->v[t->n].rule_id = r->id;
	t->v[t->n].key_len = r->key_len;
	t->v[t->n].dry_run = r->dry_run;
	return &t->v[t->n++];
}

/* The entry of (gen, key) if there is one, without making it. */
struct xrl_replay_key *xrl__kt_find(const struct key_table *t, const struct xrl_key *k)
{
	size_t j;

	if (!t->nslots)
		return NULL;
	j = key_hash(k->gen, k->family, k->addr) & (t->nslots - 1);
	for (; t->slot[j]; j = (j + 1) & (t->nslots - 1)) {
		size_t i = t->slot[j] - 1;

		if (t->gen[i] == k->gen && t->v[i].family == k->family &&
		    !memcmp(t->v[i].addr, k->addr, 16))
			return &t->v[i];
	}
	return NULL;
}

/* The rule of a source address (zero-padded to 16 bytes): 1 when the trie
 * of its family holds one, in *rule. */
int xrl__source_rule(struct rule_memo *memo, const int *fd, int family, const __u8 *addr,
		     struct xrl_rule *rule)
{
	struct rule_memo *m = &memo[key_hash(0, family, addr) & (RULE_MEMO_SLOTS - 1)];

	if (m->family != family || memcmp(m->addr, addr, 16)) {
		struct xrl_lpm6_key k = { .prefixlen = family == 6 ? 128 : 32 };

		memcpy(k.addr, addr, 16);
		m->family = family;
		memcpy(m->addr, addr, 16);
		m->found = !bpf_map_lookup_elem(fd[family == 6], &k, &m->rule);
	}
	if (m->found)
		*rule = m->rule;
	return m->found;
}

/* Did the hot-key cache answer for the rule in slot since this was last
 * asked? Its hot_dropped, summed over the CPUs, against the sum seen then
 * (last[slot]). vals: room for a struct xrl_rule_stats a CPU. */
bool xrl__cache_answered(struct xrl *x, __u32 slot, __u64 *last, struct xrl_rule_stats *vals)
{
	__u64 sum = 0;

	if (slot >= XRL_RULE_SLOTS ||
	    bpf_map_lookup_elem(x->map_fd[M_RULE_STATS], &slot, vals))
		return false;
	for (int c = 0; c < x->ncpus; c++)
		sum += vals[c].hot_dropped;
	if (sum == last[slot])
		return false;
	last[slot] = sum;
	return true;
}

/* The counts of the keys seen limited, read once at the end (the fast
 * path has their first and last drops, not their counts). */
int xrl__kt_counts(struct xrl *x, struct key_table *t)
{
	struct xrl_key *k = calloc(t->n + 1, sizeof(*k));
	__u64 *d = calloc(t->n + 1, sizeof(*d));
	int err = 0;

	if (!k || !d) {
		err = xrl_fail(ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < t->n; i++) {
		k[i].family = t->v[i].family;
		k[i].gen = t->gen[i];
		memcpy(k[i].addr, t->v[i].addr, 16);
	}
	err = xrl_buckets_dropped(x, k, t->n, d);
	if (err)
		goto out;
	/* a key whose bucket has gone (evicted) keeps what was seen */
	for (size_t i = 0; i < t->n; i++)
		if (t->v[i].dropped && d[i] != UINT64_MAX)
			t->v[i].dropped = d[i];
out:
	free(k);
	free(d);
	return err;
}

/*
 * The calling thread on the CPU it runs on, for the replay; *old gets the
 * set to restore (false: unchanged). A test run executes on the calling
 * CPU, and an aggregate's and a new-key budget's chunks and the hot-key
 * cache are per CPU: a thread that moved between CPUs would give another
 * result each run.
 */
bool xrl__pin_cpu(cpu_set_t *old)
{
	cpu_set_t one;
	int cpu = sched_getcpu();

	if (cpu < 0 || sched_getaffinity(0, sizeof(*old), old))
		return false;
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	return !sched_setaffinity(0, sizeof(one), &one);
}
