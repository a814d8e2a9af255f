// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * libxrl: a capture (capture.h). The capture's maps are the program's own,
 * never pinned: an instance opened from its pins finds them by the
 * program's map ids (an upgraded program brings fresh ones, and an older
 * build has none).
 */
#include "maps/internal.h"
#include "maps/capture.h"
#include "maps/rules.h"
#include "model/addr.h"
#include "model/rule.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#define RING_PAGES	64		/* per CPU: 256 KiB */

struct xrl_capture_run {
	struct xrl *x;
	struct perf_buffer *pb;
	int cfg_fd, stats_fd, ring_fd;
	bool own_fds;		/* found by id: closed at the stop */
	int claim_fd;
	xrl_capture_cb cb;
	void *ctx;
	int cb_ret;
	__u32 *slot_id;		/* rule slot -> id + 1 (0: unknown) */
	__u32 nslots;
	bool has_rule;		/* the filter's rule, followed across reloads */
	__u32 rule_id, rule_slot;	/* its id, and its slot + 1 in the filter */
	__u64 ring_lost, delivered;
};

/* The maps by name among the program's (names are cut at 15 bytes). */
static int find_maps(struct xrl_capture_run *c)
{
	static const char *const names[3] = { "xrl_capture", "xrl_capture_sta", "xrl_capture_rin" };
	int *fds[3] = { &c->cfg_fd, &c->stats_fd, &c->ring_fd };
	struct xrl *x = c->x;
	__u32 ids[64], n = 0;
	int err;

	if (x->skel) {
		c->cfg_fd = bpf_map__fd(x->skel->maps.xrl_capture);
		c->stats_fd = bpf_map__fd(x->skel->maps.xrl_capture_stats);
		c->ring_fd = bpf_map__fd(x->skel->maps.xrl_capture_ring);
		return 0;
	}
	c->own_fds = true;
	err = xrl__prog_map_ids(x->prog_fd, ids, 64, &n);
	if (err)
		return xrl_fail(-err, "cannot read the program's maps: %s", strerror(-err));
	for (__u32 i = 0; i < n; i++) {
		struct bpf_map_info mi = {};
		__u32 len = sizeof(mi);
		int fd = bpf_map_get_fd_by_id(ids[i]);

		if (fd < 0)
			return xrl_fail(errno, "cannot open the program's map %u: %s", ids[i],
					strerror(errno));
		if (bpf_obj_get_info_by_fd(fd, &mi, &len)) {
			close(fd);
			continue;
		}
		for (int k = 0; k < 3; k++) {
			if (*fds[k] < 0 && !strncmp(mi.name, names[k], BPF_OBJ_NAME_LEN)) {
				*fds[k] = fd;
				fd = -1;
				break;
			}
		}
		if (fd >= 0)
			close(fd);
	}
	if (c->cfg_fd < 0 || c->stats_fd < 0 || c->ring_fd < 0)
		return xrl_fail(EOPNOTSUPP, "the program attached from %s has no capture (an older build): "
				"'%s upgrade' first", x->pin_dir, "xdp-rlctl");
	return 0;
}

/* One capture at a time: an flock on DIR/capture (none for an unpinned
 * instance: nobody else can reach it). */
static int claim(struct xrl_capture_run *c)
{
	char p[PATH_MAX];
	int fd, pid;

	if (!c->x->pinned)
		return 0;
	xrl__pin_path(c->x, CAPTURE_DIR, p, sizeof(p));
	if (mkdir(p, 0700) && errno != EEXIST)
		return xrl_fail(errno, "cannot create %s: %s", p, strerror(errno));
	fd = open(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return xrl_fail(errno, "cannot open %s: %s", p, strerror(errno));
	if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
		c->claim_fd = fd;
		return 0;
	}
	pid = xrl__flock_holder(fd);
	close(fd);
	if (pid > 0)
		return xrl_fail(EBUSY, "another capture (pid %d) runs on %s: one at a time", pid,
				c->x->pin_dir);
	return xrl_fail(EBUSY, "another capture runs on %s: one at a time", c->x->pin_dir);
}

/* The slots of the active rules, for the records' rule ids (and the
 * filter's rule). A reload gives a new or changed rule a slot that no
 * published rule holds, so an entry is only ever added or overwritten,
 * never cleared: a record still in the ring from the older set keeps its
 * rule. */
static int read_slots(struct xrl_capture_run *c, __u32 *filter_slot)
{
	struct xrl_rule_entry *v = NULL;
	size_t n = 0;
	int err = xrl_rules_get(c->x, &v, &n);

	if (err)
		return err;
	if (!c->slot_id) {
		c->nslots = XRL_RULE_SLOTS;
		c->slot_id = calloc(c->nslots, sizeof(*c->slot_id));
		if (!c->slot_id) {
			free(v);
			return xrl_fail(ENOMEM, "out of memory");
		}
	}
	*filter_slot = 0;
	for (size_t i = 0; i < n; i++) {
		if (v[i].r.slot < c->nslots)
			c->slot_id[v[i].r.slot] = v[i].r.id + 1;
		if (c->has_rule && v[i].r.id == c->rule_id)
			*filter_slot = v[i].r.slot + 1;
	}
	free(v);
	return 0;
}

/* After a reload: the slot map again, and the filter's rule where it now
 * is (a changed rule moves to another slot). A rule gone from the set
 * keeps its old slot: it decides nothing more. */
static int follow_rules(struct xrl_capture_run *c)
{
	struct xrl_capture cfg;
	__u32 slot, zero = 0;
	int err = read_slots(c, &slot);

	if (err)
		return err;
	if (!c->has_rule || !slot || slot == c->rule_slot)
		return 0;
	if (bpf_map_lookup_elem(c->cfg_fd, &zero, &cfg))
		return xrl_fail(errno, "cannot read the capture's filter: %s", strerror(errno));
	cfg.rule_slot = slot;
	if (bpf_map_update_elem(c->cfg_fd, &zero, &cfg, BPF_ANY))
		return xrl_fail(errno, "cannot set the capture's filter: %s", strerror(errno));
	c->rule_slot = slot;
	return 0;
}

static void on_sample(void *ctx, int cpu, void *data, __u32 size)
{
	struct xrl_capture_run *c = ctx;
	struct xrl_capture_hdr h;
	struct xrl_capture_pkt p = {};

	(void)cpu;
	if (size < sizeof(h) || c->cb_ret)
		return;
	memcpy(&h, data, sizeof(h));
	if (h.caplen > size - sizeof(h))
		h.caplen = size - sizeof(h);
	p.ts_ns = h.ts_ns;
	p.ifindex = h.ifindex;
	p.len = h.len;
	p.caplen = h.caplen;
	p.verdict = h.verdict;
	p.mode = h.mode;
	p.data = (const __u8 *)data + sizeof(h);
	if (h.rule_slot && h.rule_slot <= c->nslots && c->slot_id[h.rule_slot - 1]) {
		p.has_rule = true;
		p.rule_id = c->slot_id[h.rule_slot - 1] - 1;
	}
	c->delivered++;
	c->cb_ret = c->cb(&p, c->ctx);
}

static void on_lost(void *ctx, int cpu, __u64 cnt)
{
	struct xrl_capture_run *c = ctx;

	(void)cpu;
	c->ring_lost += cnt;
}

/* The lease: now and XRL_CAPTURE_LEASE units on, on the data path's
 * clock (the coarse one, or the test clock). */
static void renew(struct xrl_capture_run *c)
{
	__u64 now = xrl_now_ns(c->x);
	__u32 until = (__u32)(now >> XRL_CAPTURE_LEASE_SHIFT) + XRL_CAPTURE_LEASE;

	__atomic_store_n(&c->x->ctrl->capture_until, until, __ATOMIC_RELEASE);
}

static int set_filter(struct xrl_capture_run *c, const struct xrl_capture_filter *f, __u32 slot)
{
	struct xrl_capture cfg = {};
	__u32 rate = f->rate ? f->rate : XRL_CAPTURE_RATE;
	__u32 burst = f->burst ? f->burst : XRL_CAPTURE_BURST;
	__u64 *zeros;
	__u32 zero = 0;
	int err = 0;

	if (rate > XRL_CAPTURE_RATE)
		rate = XRL_CAPTURE_RATE;
	cfg.interval_ns = 1000000000ULL / rate;
	cfg.limit_ns = (__u64)(burst - 1) * cfg.interval_ns;
	cfg.verdicts = f->verdicts ? f->verdicts : XRL_CAPTURE_F_PASS | XRL_CAPTURE_F_DROP;
	cfg.rule_slot = slot;
	cfg.snaplen = f->snaplen ? f->snaplen : XRL_CAPTURE_SNAPLEN;
	if (cfg.snaplen > XRL_CAPTURE_MAX_SNAPLEN)
		cfg.snaplen = XRL_CAPTURE_MAX_SNAPLEN;
	if (f->family == 4 || f->family == 6) {
		int words = f->family == 4 ? 1 : 4;
		__u8 mask[16] = {};

		cfg.family = f->family;
		for (int b = 0; b < f->prefix_len && b < words * 32; b++)
			mask[b / 8] |= 0x80 >> (b % 8);
		memcpy(cfg.mask, mask, sizeof(mask));
		for (int i = 0; i < 16; i++)
			((__u8 *)cfg.addr)[i] = f->addr[i] & mask[i];
	}
	zeros = calloc(c->x->ncpus, sizeof(struct xrl_capture_stats));
	if (!zeros)
		return xrl_fail(ENOMEM, "out of memory");
	if (bpf_map_update_elem(c->stats_fd, &zero, zeros, BPF_ANY) ||
	    bpf_map_update_elem(c->cfg_fd, &zero, &cfg, BPF_ANY))
		err = xrl_fail(errno, "cannot set the capture's filter: %s", strerror(errno));
	free(zeros);
	return err;
}

int xrl_capture_start(struct xrl *x, const struct xrl_capture_filter *f, xrl_capture_cb cb,
		      void *ctx, struct xrl_capture_run **out)
{
	struct xrl_capture_run *c = calloc(1, sizeof(*c));
	__u32 slot = 0;
	int err;

	if (!c)
		return xrl_fail(ENOMEM, "out of memory");
	c->x = x;
	c->cb = cb;
	c->ctx = ctx;
	c->cfg_fd = c->stats_fd = c->ring_fd = c->claim_fd = -1;
	c->has_rule = f->has_rule;
	c->rule_id = f->rule_id;
	if ((err = find_maps(c)) || (err = claim(c)) || (err = read_slots(c, &slot)))
		goto fail;
	if (f->has_rule && !slot) {
		err = xrl_fail(ENOENT, "no rule %u in the active set ('xdp-rlctl rule list')", f->rule_id);
		goto fail;
	}
	c->rule_slot = slot;
	if ((err = set_filter(c, f, slot)))
		goto fail;
	c->pb = perf_buffer__new(c->ring_fd, RING_PAGES, on_sample, on_lost, c, NULL);
	if (!c->pb) {
		err = xrl_fail(errno, "cannot open the capture's ring: %s", strerror(errno));
		goto fail;
	}
	renew(c);
	*out = c;
	return 0;
fail:
	xrl_capture_stop(c, NULL);
	return err;
}

int xrl_capture_poll(struct xrl_capture_run *c, int timeout_ms)
{
	int err;

	renew(c);
	err = follow_rules(c);
	if (err)
		return err;
	err = perf_buffer__poll(c->pb, timeout_ms);
	if (err < 0 && err != -EINTR)
		return xrl_fail(-err, "cannot read the capture's ring: %s", strerror(-err));
	err = c->cb_ret;
	c->cb_ret = 0;
	return err;
}

void xrl_capture_totals(struct xrl_capture_run *c, struct xrl_capture_totals *t)
{
	struct xrl_capture_stats *v = calloc(c->x->ncpus, sizeof(*v));
	__u32 zero = 0;

	memset(t, 0, sizeof(*t));
	if (v && !bpf_map_lookup_elem(c->stats_fd, &zero, v)) {
		for (int i = 0; i < c->x->ncpus; i++) {
			t->matched += v[i].matched;
			t->captured += v[i].captured;
			t->left_out += v[i].left_out;
			t->lost += v[i].lost;
		}
	}
	free(v);
	t->lost += c->ring_lost;
	t->delivered = c->delivered;
}

void xrl_capture_stop(struct xrl_capture_run *c, struct xrl_capture_totals *t)
{
	if (!c)
		return;
	if (c->pb) {
		/* the lease off first (another capture may take over only
		 * once the claim is gone), then what the ring holds */
		__atomic_store_n(&c->x->ctrl->capture_until, 0, __ATOMIC_RELEASE);
		perf_buffer__consume(c->pb);
		if (t)
			xrl_capture_totals(c, t);
		perf_buffer__free(c->pb);
	}
	if (c->own_fds) {
		if (c->cfg_fd >= 0)
			close(c->cfg_fd);
		if (c->stats_fd >= 0)
			close(c->stats_fd);
		if (c->ring_fd >= 0)
			close(c->ring_fd);
	}
	if (c->claim_fd >= 0)
		close(c->claim_fd);
	free(c->slot_id);
	free(c);
}
