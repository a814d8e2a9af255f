// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * libxrl: a private test instance back to the state xrl_open() left it in,
 * without loading the program again (its verification takes ~1.5 s; the
 * differential fuzzer runs thousands of short sequences, each on a fresh
 * instance). Every map of the object is emptied as the kernel creates it:
 * arrays zeroed, hash tables and tries emptied, the map-in-maps' inner maps
 * taken out (the rule sets get empty ones, as at the load),
 * the event rings read to their end; what the load set beyond that (the
 * share of the ban tables that rules' bans may hold) is set again. The
 * libxrl handle forgets the sets it published. Only an unpinned instance
 * this handle loaded: a pinned one is somebody's state.
 */
#include "maps/internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

/*
 * Zero every element of an array (per-CPU: every CPU's) that can have been
 * written: in place when it is mapped into memory, else in one batch when
 * the kernel takes one. An array indexed by rule slot (XRL_RULE_SLOTS
 * entries, and the one past them that some have) is written only at the
 * slots handed out, below x->slot_hw: zeroing all 32,768 of each took most
 * of a reset.
 */
static int zero_array(struct xrl *x, struct bpf_map *m)
{
	__u32 max = bpf_map__max_entries(m), vsz = bpf_map__value_size(m), n = 0;
	bool percpu = bpf_map__type(m) == BPF_MAP_TYPE_PERCPU_ARRAY;
	bool by_slot = max == XRL_RULE_SLOTS || max == XRL_RULE_SLOTS + 1;
	size_t stride = percpu ? ((vsz + 7) & ~7U) * (size_t)x->ncpus : vsz;
	__u32 *keys = NULL, count;
	int fd = bpf_map__fd(m), err = 0;
	void *vals = NULL;

	if (bpf_map__map_flags(m) & BPF_F_MMAPABLE) {
		size_t pg = sysconf(_SC_PAGESIZE), len = ((vsz + 7) & ~7UL) * max;
		void *p;

		len = (len + pg - 1) / pg * pg;
		p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (p == MAP_FAILED)
			return -errno;
		memset(p, 0, len);
		munmap(p, len);
		return 0;
	}
	keys = calloc(max, sizeof(*keys));
	vals = calloc(max, stride);
	if (!keys || !vals) {
		err = -ENOMEM;
		goto out;
	}
	for (__u32 i = 0; i < max; i++)
		if (!by_slot || i < x->slot_hw || i >= XRL_RULE_SLOTS)
			keys[n++] = i;
	count = n;
	if (!n || (!bpf_map_update_batch(fd, keys, vals, &count, NULL) && count == n))
		goto out;
	for (__u32 i = 0; i < n && !err; i++)
		if (bpf_map_update_elem(fd, &keys[i], vals, BPF_ANY))
			err = -errno;
out:
	free(keys);
	free(vals);
	return err;
}

/* Take every inner map out of an array of maps (its slots stay): only the
 * slots that hold one, since each removal waits for an RCU grace period.
 * The rule sets get an empty one in place of theirs instead, as at the
 * load (a program that finds none passes everything as unmatched all the
 * same): one wait, not two. */
static int empty_array_of_maps(struct xrl *x, struct bpf_map *m)
{
	int fd = bpf_map__fd(m);
	__u32 id;

	if (fd == x->map_fd[M_RULES4] || fd == x->map_fd[M_RULES6]) {
		int family = fd == x->map_fd[M_RULES4] ? 4 : 6, in = xrl__rules_create(family), err;

		if (in < 0)
			return in;
		err = xrl__rules_publish(x, family, in);
		close(in);
		return err;
	}
	for (__u32 i = 0; i < bpf_map__max_entries(m); i++)
		if (!bpf_map_lookup_elem(fd, &i, &id) && bpf_map_delete_elem(fd, &i) &&
		    errno != ENOENT)
			return -errno;
	return 0;
}

/* Delete every element of a hash table, an LRU, a trie or a hash of maps. */
static int empty_map(struct bpf_map *m)
{
	__u32 ksz = bpf_map__key_size(m);
	void *k = calloc(2, ksz);
	int fd = bpf_map__fd(m), err = 0;

	if (!k)
		return -ENOMEM;
	/* always the first key: the one after a deleted key is not defined */
	while (!bpf_map_get_next_key(fd, NULL, k)) {
		if (bpf_map_delete_elem(fd, k)) {
			err = -errno;
			break;
		}
	}
	free(k);
	return err;
}

static int drain(void *ctx, void *data, size_t len)
{
	(void)ctx;
	(void)data;
	(void)len;
	return 0;
}

int xrl_test_reset(struct xrl *x)
{
	struct bpf_map *m;
	int err = 0;

	if (x->pinned || !x->skel)
		return xrl_fail(EINVAL, "only a private instance this handle loaded can be reset");
	bpf_object__for_each_map(m, x->skel->obj) {
		struct ring_buffer *rb;

		if (bpf_map__is_internal(m))	/* .rodata: constant */
			continue;
		switch (bpf_map__type(m)) {
		case BPF_MAP_TYPE_ARRAY:
		case BPF_MAP_TYPE_PERCPU_ARRAY:
			err = zero_array(x, m);
			break;
		case BPF_MAP_TYPE_HASH:
		case BPF_MAP_TYPE_LRU_HASH:
		case BPF_MAP_TYPE_PERCPU_HASH:
		case BPF_MAP_TYPE_LRU_PERCPU_HASH:
		case BPF_MAP_TYPE_LPM_TRIE:
		case BPF_MAP_TYPE_HASH_OF_MAPS:
			err = empty_map(m);
			break;
		case BPF_MAP_TYPE_ARRAY_OF_MAPS:
			err = empty_array_of_maps(x, m);
			break;
		case BPF_MAP_TYPE_RINGBUF:
			rb = ring_buffer__new(bpf_map__fd(m), drain, NULL, NULL);
			if (!rb) {
				err = -errno;
				break;
			}
			err = ring_buffer__consume(rb) < 0 ? -EIO : 0;
			ring_buffer__free(rb);
			break;
		case BPF_MAP_TYPE_PERF_EVENT_ARRAY:
			break;	/* the capture's: nothing is read without a reader */
		default:
			return xrl_fail(EOPNOTSUPP, "cannot reset map %s: type %d",
					bpf_map__name(m), bpf_map__type(m));
		}
		if (err)
			return xrl_fail(err, "cannot reset map %s: %s", bpf_map__name(m), strerror(-err));
	}
	/* the sets this handle published, but the empty rule sets just now */
	pthread_mutex_lock(&x->set_lock);
	for (int i = 0; i < M__COUNT; i++) {
		if (i == M_RULES4 || i == M_RULES6 || x->set_fd[i] < 0)
			continue;
		close(x->set_fd[i]);
		x->set_fd[i] = -1;
		x->set_id[i] = 0;
	}
	pthread_mutex_unlock(&x->set_lock);
	x->slot_hw = 0;
	xrl__bans_reserve(x);
	return 0;
}
