// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * libxrl: named sets. A set is an LPM trie of IPv4 and IPv6 prefixes behind
 * its slot of xrl_sets (xdp_rl_common.h); its name, default timeout and
 * count in xrl_set_meta. set load builds a fresh trie completely and swaps
 * it in with one update of the slot (the syscall waits for RCU: when it
 * returns no packet looks at the old trie). The rules that take a set are
 * published by the rule commit (xrl__set_rules_commit()).
 */
#include "maps/internal.h"
#include "maps/sets.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int meta_get(struct xrl *x, __u32 slot, struct xrl_set_info *i)
{
	if (bpf_map_lookup_elem(x->map_fd[M_SET_META], &slot, i))
		return xrl_fail(errno, "cannot read the sets: %s", strerror(errno));
	return 0;
}

static int meta_put(struct xrl *x, __u32 slot, const struct xrl_set_info *i)
{
	if (bpf_map_update_elem(x->map_fd[M_SET_META], &slot, i, BPF_ANY))
		return xrl_fail(errno, "cannot write the sets: %s", strerror(errno));
	return 0;
}

/* The slot of a set by name: -ENOENT (said), or the slot. */
static int find(struct xrl *x, const char *name, struct xrl_set_info *out)
{
	for (__u32 s = 0; s < XRL_MAX_SETS; s++) {
		struct xrl_set_info i;

		if (meta_get(x, s, &i))
			return -errno;
		if ((i.flags & XRL_SET_F_USED) && !strncmp(i.name, name, sizeof(i.name))) {
			if (out)
				*out = i;
			return s;
		}
	}
	return xrl_fail(ENOENT, "no set '%s' (set create %s, or set load %s FILE)", name, name, name);
}

int xrl__set_slot(struct xrl *x, const char *name)
{
	return find(x, name, NULL);
}

int xrl__set_name(struct xrl *x, __u32 slot, char *buf, size_t len)
{
	struct xrl_set_info i;

	if (slot >= XRL_MAX_SETS || meta_get(x, slot, &i) || !(i.flags & XRL_SET_F_USED))
		return snprintf(buf, len, "set%u", slot), -ENOENT;
	snprintf(buf, len, "%s", i.name);
	return 0;
}

static int trie_create(void)
{
	LIBBPF_OPTS(bpf_map_create_opts, o, .map_flags = BPF_F_NO_PREALLOC);
	int fd = bpf_map_create(BPF_MAP_TYPE_LPM_TRIE, "xrl_set", sizeof(struct xrl_set_key),
				sizeof(struct xrl_set_elem), XRL_SET_MAX_ELEMS, &o);

	return fd < 0 ? xrl_fail(errno, "cannot create a set: %s", strerror(errno)) : fd;
}

/* The pin of a slot's published trie: DIR/xrl_set_N (the outer map gives
 * only its id, and opening a map by id needs CAP_SYS_ADMIN, which the
 * daemon does not keep). */
static void trie_pin_path(struct xrl *x, __u32 slot, bool next, char *p, size_t len)
{
	char name[32];

	snprintf(name, sizeof(name), "xrl_set_%u%s", slot, next ? "_new" : "");
	xrl__pin_path(x, name, p, len);
}

/* The published trie of a slot (an fd), or an error: its pin when it is
 * the one published, else by id. */
static int trie_of(struct xrl *x, __u32 slot)
{
	char p[PATH_MAX];
	__u32 id;
	int fd;

	if (bpf_map_lookup_elem(x->map_fd[M_SETS], &slot, &id))
		return xrl_fail(errno, "set slot %u holds no trie: %s", slot, strerror(errno));
	if (x->pinned) {
		trie_pin_path(x, slot, false, p, sizeof(p));
		fd = bpf_obj_get(p);
		if (fd >= 0 && (__u32)xrl__map_id(fd) == id)
			return fd;
		if (fd >= 0)
			close(fd);
	}
	fd = bpf_map_get_fd_by_id(id);
	if (fd < 0)
		return xrl_fail(errno, "cannot open a set (its pin is missing, and by id it needs CAP_SYS_ADMIN): %s",
				strerror(errno));
	return fd;
}

static int publish(struct xrl *x, __u32 slot, int fd)
{
	char p[PATH_MAX], q[PATH_MAX];

	if (bpf_map_update_elem(x->map_fd[M_SETS], &slot, &fd, BPF_ANY))
		return xrl_fail(errno, "cannot publish the set: %s", strerror(errno));
	/* pinned beside, renamed over the old pin: a reader finds the old
	 * trie or this one (and checks its id) */
	if (x->pinned) {
		trie_pin_path(x, slot, false, p, sizeof(p));
		trie_pin_path(x, slot, true, q, sizeof(q));
		unlink(q);
		if (bpf_obj_pin(fd, q) || rename(q, p)) {
			xrl_warn("cannot pin set slot %u: %s", slot, strerror(errno));
			unlink(q);
		}
	}
	/* a cached drop may rest on the old set */
	xrl__cache_bump(x);
	return 0;
}

static void key_of(const struct xrl_set_item *it, struct xrl_set_key *k)
{
	memset(k, 0, sizeof(*k));
	k->prefixlen = 8 + it->prefix_len;
	k->family = it->family;
	memcpy(k->addr, it->addr, it->family == 6 ? 16 : 4);
}

/* Write l into fd: each element with its own timeout, else dflt. New
 * elements counted in *added, the earliest expiry kept in *next. */
static int fill(struct xrl *x, int fd, const struct xrl_set_list *l, __u64 dflt, __u32 have,
		__u32 *added, __u64 *next)
{
	__u64 now = xrl_now_ns(x);

	for (size_t i = 0; i < l->n; i++) {
		struct xrl_set_key k;
		struct xrl_set_elem e = {};
		__u64 t = l->v[i].timeout_ns ?: dflt;
		bool fresh;

		key_of(&l->v[i], &k);
		e.prefixlen = k.prefixlen;
		e.expires_ns = t ? now + t : 0;
		/* a look-up of an LPM trie is a longest match, not an exact
		 * one: a new element is one the kernel takes as new */
		fresh = bpf_map_update_elem(fd, &k, &e, BPF_NOEXIST) == 0;
		if (!fresh && errno != EEXIST)
			return xrl_fail(errno, "cannot write a set element: %s", strerror(errno));
		if (!fresh && bpf_map_update_elem(fd, &k, &e, BPF_EXIST))
			return xrl_fail(errno, "cannot write a set element: %s", strerror(errno));
		if (fresh && have + *added >= XRL_SET_MAX_ELEMS) {
			bpf_map_delete_elem(fd, &k);
			return xrl_fail(E2BIG, "the set is full: %u prefixes", XRL_SET_MAX_ELEMS);
		}
		*added += fresh;
		if (e.expires_ns && (!*next || e.expires_ns < *next))
			*next = e.expires_ns;
	}
	return 0;
}

static int cmp_item(const void *a, const void *b)
{
	const struct xrl_set_item *x = a, *y = b;

	if (x->family != y->family)
		return x->family - y->family;
	if (x->prefix_len != y->prefix_len)
		return x->prefix_len - y->prefix_len;
	return memcmp(x->addr, y->addr, 16);
}

/* Fill a fresh trie with l, duplicates merged (the last one's timeout
 * kept): in batches of XRL_SET_BATCH where the kernel takes a batch
 * update of an LPM trie (its generic one: an update each, in one
 * syscall), else one update each. *added: the elements. */
#define XRL_SET_BATCH	8192

static int fill_fresh(struct xrl *x, int fd, const struct xrl_set_list *l, __u64 dflt, __u32 *added,
		      __u64 *next)
{
	struct xrl_set_key *keys = NULL;
	struct xrl_set_elem *vals = NULL;
	struct xrl_set_item *v = NULL;
	__u64 now = xrl_now_ns(x);
	size_t n = 0;
	int err = 0;

	*added = 0;
	if (!l->n)
		return 0;
	v = malloc(l->n * sizeof(*v));
	keys = calloc(XRL_SET_BATCH, sizeof(*keys));
	vals = calloc(XRL_SET_BATCH, sizeof(*vals));
	if (!v || !keys || !vals) {
		err = xrl_fail(ENOMEM, "out of memory");
		goto out;
	}
	memcpy(v, l->v, l->n * sizeof(*v));
	xrl_sort(v, l->n, sizeof(*v), cmp_item);
	for (size_t i = 0; i < l->n; i++) {
		if (n && !cmp_item(&v[n - 1], &v[i]))
			v[n - 1] = v[i];
		else
			v[n++] = v[i];
	}
	for (size_t at = 0; at < n && !err; at += XRL_SET_BATCH) {
		__u32 cnt = n - at < XRL_SET_BATCH ? n - at : XRL_SET_BATCH;
		LIBBPF_OPTS(bpf_map_batch_opts, bo);

		for (__u32 i = 0; i < cnt; i++) {
			__u64 t = v[at + i].timeout_ns ?: dflt;

			key_of(&v[at + i], &keys[i]);
			memset(&vals[i], 0, sizeof(vals[i]));
			vals[i].prefixlen = keys[i].prefixlen;
			vals[i].expires_ns = t ? now + t : 0;
			if (vals[i].expires_ns && (!*next || vals[i].expires_ns < *next))
				*next = vals[i].expires_ns;
		}
		if (bpf_map_update_batch(fd, keys, vals, &cnt, &bo) == 0)
			continue;
		if (errno != EINVAL && errno != 524 /* ENOTSUPP */ && errno != EOPNOTSUPP)
			err = xrl_fail(errno, "cannot write the set: %s", strerror(errno));
		/* no batch here: one update each */
		for (__u32 i = 0; i < XRL_SET_BATCH && at + i < n && !err; i++)
			if (bpf_map_update_elem(fd, &keys[i], &vals[i], BPF_ANY))
				err = xrl_fail(errno, "cannot write the set: %s", strerror(errno));
	}
	if (!err)
		*added = n;
out:
	free(v);
	free(keys);
	free(vals);
	return err;
}

int xrl_set_create(struct xrl *x, const char *name, __u64 timeout_ns)
{
	struct xrl_set_info i;
	int fd, err;
	__u32 slot;

	if (xrl_set_name_check(name))
		return -EINVAL;
	if (find(x, name, NULL) >= 0)
		return xrl_fail(EEXIST, "set '%s' exists already", name);
	for (slot = 0; slot < XRL_MAX_SETS; slot++) {
		if ((err = meta_get(x, slot, &i)))
			return err;
		if (!(i.flags & XRL_SET_F_USED))
			break;
	}
	if (slot == XRL_MAX_SETS)
		return xrl_fail(ENOSPC, "too many sets: at most %d", XRL_MAX_SETS);
	fd = trie_create();
	if (fd < 0)
		return fd;
	err = publish(x, slot, fd);
	close(fd);
	if (err)
		return err;
	memset(&i, 0, sizeof(i));
	snprintf(i.name, sizeof(i.name), "%s", name);
	i.flags = XRL_SET_F_USED;
	i.timeout_ns = timeout_ns;
	i.loaded_ns = xrl_now_ns(x);
	return meta_put(x, slot, &i);
}

int xrl_set_add(struct xrl *x, const char *name, const struct xrl_set_list *l, __u64 timeout_ns)
{
	struct xrl_set_info i;
	__u32 added = 0;
	int slot = find(x, name, &i), fd, err;

	if (slot < 0)
		return slot;
	xrl_sets_sweep(x);
	if ((err = meta_get(x, slot, &i)))
		return err;
	fd = trie_of(x, slot);
	if (fd < 0)
		return fd;
	err = fill(x, fd, l, timeout_ns ?: i.timeout_ns, i.count, &added, &i.next_expiry_ns);
	close(fd);
	i.count += added;
	i.loaded_ns = xrl_now_ns(x);
	xrl__cache_bump(x);
	return meta_put(x, slot, &i) ?: err;
}

int xrl_set_del_elems(struct xrl *x, const char *name, const struct xrl_set_list *l)
{
	struct xrl_set_info i;
	int slot = find(x, name, &i), fd, err = 0;

	if (slot < 0)
		return slot;
	fd = trie_of(x, slot);
	if (fd < 0)
		return fd;
	for (size_t k = 0; k < l->n && !err; k++) {
		struct xrl_set_key key;

		key_of(&l->v[k], &key);
		if (bpf_map_delete_elem(fd, &key))
			err = xrl_fail(errno, errno == ENOENT ? "no such prefix in set '%s'" :
				       "cannot delete from set '%s'", name);
		else if (i.count)
			i.count--;
	}
	close(fd);
	xrl__cache_bump(x);
	return meta_put(x, slot, &i) ?: err;
}

/* How many published set rules take slot (the IPv4 copies). */
static int rules_taking(struct xrl *x, __u32 slot)
{
	int fd = xrl__published_fd(x, M_SET_RULES), n = 0;

	if (fd < 0)
		return 0;
	for (__u32 k = 0; k < XRL_MAX_SET_RULES; k++) {
		struct xrl_rule r;

		if (bpf_map_lookup_elem(fd, &k, &r) || !r.id)
			break;
		n += r.set == slot + 1;
	}
	close(fd);
	return n;
}

int xrl_set_destroy(struct xrl *x, const char *name)
{
	struct xrl_set_info i = {};
	int slot = find(x, name, NULL), err;

	if (slot < 0)
		return slot;
	if (rules_taking(x, slot))
		return xrl_fail(EBUSY, "set '%s' is taken by a rule: delete the rule first (or set flush %s)",
				name, name);
	if (bpf_map_delete_elem(x->map_fd[M_SETS], &slot) && errno != ENOENT)
		return xrl_fail(errno, "cannot remove set '%s': %s", name, strerror(errno));
	if (x->pinned) {
		char p[PATH_MAX];

		trie_pin_path(x, slot, false, p, sizeof(p));
		unlink(p);
	}
	err = meta_put(x, slot, &i);
	xrl__cache_bump(x);
	return err;
}

int xrl_set_load(struct xrl *x, const char *name, const struct xrl_set_list *l, double *secs)
{
	struct timespec t0, t1;
	struct xrl_set_info i;
	__u32 added = 0;
	int slot, fd, err;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	slot = find(x, name, &i);
	if (slot < 0) {
		if ((err = xrl_set_create(x, name, 0)))
			return err;
		slot = find(x, name, &i);
		if (slot < 0)
			return slot;
	}
	if (l->n > XRL_SET_MAX_ELEMS)
		return xrl_fail(E2BIG, "%zu prefixes: a set holds at most %u", l->n, XRL_SET_MAX_ELEMS);
	fd = trie_create();
	if (fd < 0)
		return fd;
	i.next_expiry_ns = 0;
	err = fill_fresh(x, fd, l, i.timeout_ns, &added, &i.next_expiry_ns);
	if (!err)
		err = publish(x, slot, fd);
	close(fd);
	if (err)
		return err;	/* the old set stays */
	i.count = added;
	i.loaded_ns = xrl_now_ns(x);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (secs)
		*secs = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	return meta_put(x, slot, &i);
}

int xrl_set_flush(struct xrl *x, const char *name)
{
	struct xrl_set_list empty = {};

	if (find(x, name, NULL) < 0)
		return -ENOENT;
	return xrl_set_load(x, name, &empty, NULL);
}

/* The kernel's count of a map's memory (fdinfo "memlock"). */
static __u64 map_memory(int fd)
{
	char p[64], line[128];
	unsigned long long v = 0;
	FILE *f;

	snprintf(p, sizeof(p), "/proc/self/fdinfo/%d", fd);
	f = fopen(p, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "memlock: %llu", &v) == 1)
			break;
	fclose(f);
	return v;
}

static void view_of(struct xrl *x, __u32 slot, const struct xrl_set_info *i, struct xrl_set_view *v)
{
	int fd;

	memset(v, 0, sizeof(*v));
	v->slot = slot;
	snprintf(v->name, sizeof(v->name), "%s", i->name);
	v->timeout_ns = i->timeout_ns;
	v->count = i->count;
	v->rules = rules_taking(x, slot);
	fd = trie_of(x, slot);
	if (fd >= 0) {
		v->mem_bytes = map_memory(fd);
		close(fd);
	}
}

static int cmp_view(const void *a, const void *b)
{
	return strcmp(((const struct xrl_set_view *)a)->name, ((const struct xrl_set_view *)b)->name);
}

int xrl_sets_list(struct xrl *x, struct xrl_set_view **out, size_t *n)
{
	struct xrl_set_view *v = calloc(XRL_MAX_SETS, sizeof(*v));
	int err;

	*n = 0;
	if (!v)
		return xrl_fail(ENOMEM, "out of memory");
	for (__u32 s = 0; s < XRL_MAX_SETS; s++) {
		struct xrl_set_info i;

		if ((err = meta_get(x, s, &i))) {
			free(v);
			return err;
		}
		if (i.flags & XRL_SET_F_USED)
			view_of(x, s, &i, &v[(*n)++]);
	}
	qsort(v, *n, sizeof(*v), cmp_view);
	*out = v;
	return 0;
}

int xrl_set_get(struct xrl *x, const char *name, struct xrl_set_view *out)
{
	struct xrl_set_info i;
	int slot = find(x, name, &i);

	if (slot < 0)
		return slot;
	view_of(x, slot, &i, out);
	return 0;
}

/* Delete the expired elements of one set; keep its next expiry. */
static int sweep_one(struct xrl *x, __u32 slot, struct xrl_set_info *i, __u64 now)
{
	struct xrl_set_key k, next;
	struct xrl_set_elem e;
	void *prev = NULL;
	int fd = trie_of(x, slot), swept = 0;
	__u64 soonest = 0;

	if (fd < 0)
		return fd;
	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		if (bpf_map_lookup_elem(fd, &next, &e) == 0 && e.expires_ns) {
			if ((__s64)(e.expires_ns - now) <= 0) {
				if (bpf_map_delete_elem(fd, &next) == 0) {
					swept++;
					continue;	/* next's successor from the same key */
				}
			} else if (!soonest || e.expires_ns < soonest) {
				soonest = e.expires_ns;
			}
		}
		k = next;
		prev = &k;
	}
	close(fd);
	i->next_expiry_ns = soonest;
	i->count = i->count > (__u32)swept ? i->count - swept : 0;
	return swept;
}

int xrl_sets_sweep(struct xrl *x)
{
	__u64 now = xrl_now_ns(x);
	int total = 0;

	for (__u32 s = 0; s < XRL_MAX_SETS; s++) {
		struct xrl_set_info i;
		int n;

		if (meta_get(x, s, &i) || !(i.flags & XRL_SET_F_USED) || !i.next_expiry_ns ||
		    (__s64)(i.next_expiry_ns - now) > 0)
			continue;
		n = sweep_one(x, s, &i, now);
		if (n < 0)
			continue;
		total += n;
		meta_put(x, s, &i);
	}
	if (total)
		xrl__cache_bump(x);
	return total;
}

int xrl_set_elems(struct xrl *x, const char *name, struct xrl_set_list *out)
{
	struct xrl_set_key k, next;
	struct xrl_set_elem e;
	void *prev = NULL;
	__u64 now;
	int slot, fd;

	xrl_sets_sweep(x);
	slot = find(x, name, NULL);
	if (slot < 0)
		return slot;
	fd = trie_of(x, slot);
	if (fd < 0)
		return fd;
	now = xrl_now_ns(x);
	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		struct xrl_set_item it = { .family = next.family, .prefix_len = next.prefixlen - 8 };

		memcpy(it.addr, next.addr, 16);
		if (bpf_map_lookup_elem(fd, &next, &e) == 0) {
			if (e.expires_ns && (__s64)(e.expires_ns - now) <= 0)
				goto skip;	/* expired since the sweep */
			it.timeout_ns = e.expires_ns ? e.expires_ns - now : 0;
			if (xrl_set_list_push(out, &it)) {
				close(fd);
				return -ENOMEM;
			}
		}
skip:
		k = next;
		prev = &k;
	}
	close(fd);
	return 0;
}

/* Does set `slot` hold the address, as the data path sees it (the same
 * expiry and the same steps over expired elements: bpf/sets.h)? */
bool xrl__set_holds(struct xrl *x, __u32 slot, int family, const __u8 *addr)
{
	struct xrl_set_key k = { .prefixlen = 8 + (family == 6 ? 128 : 32), .family = family };
	struct xrl_set_elem e;
	__u64 now = xrl_now_ns(x);
	bool held = false;
	int fd = trie_of(x, slot);

	if (fd < 0)
		return false;
	memcpy(k.addr, addr, family == 6 ? 16 : 4);
	for (int i = 0; i < XRL_SET_EXPIRED_HOPS; i++) {
		if (bpf_map_lookup_elem(fd, &k, &e))
			break;
		if (!e.expires_ns || (__s64)(e.expires_ns - now) > 0) {
			held = true;
			break;
		}
		if (e.prefixlen <= 8 || e.prefixlen > k.prefixlen)
			break;
		k.prefixlen = e.prefixlen - 1;
	}
	close(fd);
	return held;
}

