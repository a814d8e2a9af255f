// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * libxrl: the object and the layout of its maps. What build and layout a
 * program carries, the check that refuses another layout, and this build's
 * object loaded on the pinned maps (reused, new ones created and pinned) or
 * the pinned program and maps opened: what xrl_open() and an upgrade share.
 */
#include "maps/internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#define INFO_MAP	".rodata.info"	/* the section of struct xrl_build_info */

/* The ids of the maps a program uses; *n of them, at most max. */
int xrl__prog_map_ids(int prog_fd, __u32 *ids, __u32 max, __u32 *n)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);

	info.nr_map_ids = max;
	info.map_ids = (__u64)(unsigned long)ids;
	if (bpf_obj_get_info_by_fd(prog_fd, &info, &len))
		return -errno;
	*n = info.nr_map_ids < max ? info.nr_map_ids : max;
	return 0;
}

int xrl__map_id(int fd)
{
	struct bpf_map_info mi = {};
	__u32 len = sizeof(mi);

	return bpf_obj_get_info_by_fd(fd, &mi, &len) ? 0 : (int)mi.id;
}

/* The build info pinned beside the program, if it is this program's. */
static int pinned_info(struct xrl *x, const __u32 *ids, __u32 n, struct xrl_build_info *bi)
{
	char p[PATH_MAX];
	__u32 zero = 0;
	int fd, id, err = -ENOENT;

	xrl__pin_path(x, INFO_PIN, p, sizeof(p));
	if ((fd = bpf_obj_get(p)) < 0)
		return -ENOENT;
	id = xrl__map_id(fd);
	err = -ESRCH;	/* another program's */
	for (__u32 i = 0; i < n && err; i++)
		if (id && ids[i] == (__u32)id)
			err = bpf_map_lookup_elem(fd, &zero, bi) ? -errno : 0;
	close(fd);
	return err;
}

int xrl__build_info_of(struct xrl *x, int prog_fd, struct xrl_build_info *bi)
{
	__u32 ids[64], n = 0, zero = 0;
	int err = xrl__prog_map_ids(prog_fd, ids, 64, &n);

	memset(bi, 0, sizeof(*bi));
	if (err)
		return err;
	/* pinned beside it: needs CAP_BPF only. An upgrade renames the
	 * program's pin and then the info's: retry across that instant. */
	for (int tries = 0; tries < 3; tries++) {
		err = pinned_info(x, ids, n, bi);
		if (err == 0 && bi->magic == XRL_INFO_MAGIC) {
			bi->build[sizeof(bi->build) - 1] = '\0';
			return 0;
		}
		if (err != -ESRCH)
			break;
		usleep(2000);
	}
	/* not pinned (unpinned instances; pins removed): by the program's map
	 * ids, which needs CAP_SYS_ADMIN */
	for (__u32 i = 0; i < n; i++) {
		struct bpf_map_info mi = {};
		__u32 len = sizeof(mi);
		int fd = bpf_map_get_fd_by_id(ids[i]);
		bool found;

		if (fd < 0)
			continue;
		found = bpf_obj_get_info_by_fd(fd, &mi, &len) == 0 && !strcmp(mi.name, INFO_MAP) &&
			mi.value_size >= sizeof(*bi) && bpf_map_lookup_elem(fd, &zero, bi) == 0;
		close(fd);
		if (found && bi->magic == XRL_INFO_MAGIC) {
			bi->build[sizeof(bi->build) - 1] = '\0';
			return 0;
		}
		memset(bi, 0, sizeof(*bi));
	}
	return -ENOENT;	/* a build from before the layout version */
}

int xrl_build_info(struct xrl *x, struct xrl_build_info *bi)
{
	int err = xrl__build_info_of(x, x->prog_fd, bi);

	if (err == -ENOENT) {
		snprintf(bi->build, sizeof(bi->build), "unknown");
		return 0;
	}
	return err ? xrl_fail(err, "cannot read the program's build: %s", strerror(-err)) : 0;
}

int xrl__layout_check(struct xrl *x, int prog_fd, const char *what)
{
	struct xrl_build_info bi;
	int err = xrl__build_info_of(x, prog_fd, &bi);

	if (err == -ENOENT)
		return xrl_fail(EPROTO, "the %s under %s carries no layout version (a build from before "
			    "layout versions): this build (%s, layout %u) will not use its maps; detach it "
			    "everywhere and purge with its own build, then attach with this one",
			    what, x->pin_dir, xrl_version(), XRL_LAYOUT_VERSION);
	if (err)
		return xrl_fail(err, "cannot read the build of the %s under %s: %s", what, x->pin_dir,
			    strerror(-err));
	if (bi.layout != XRL_LAYOUT_VERSION)
		return xrl_fail(EPROTO, "the %s under %s is build %s with map layout %u; this build (%s) has "
			    "layout %u: its maps cannot be reused (nothing was changed). Use the running "
			    "build, or detach everywhere and purge with it, then attach with this one "
			    "(rules, buckets and counters are lost)",
			    what, x->pin_dir, bi.build, bi.layout, xrl_version(), XRL_LAYOUT_VERSION);
	return 0;
}

/* Every map of this build's object that is pinned already must be the same
 * map as this build would make: else refuse, naming it, before anything is
 * created. Maps the object has and the pins do not are new: the load creates
 * and pins them. Iterates the object itself, so a map added later is checked
 * with no change here. */
static int maps_compatible(struct xrl *x, struct bpf_object *obj)
{
	struct bpf_map *m;

	bpf_object__for_each_map(m, obj) {
		struct bpf_map_info mi = {};
		__u32 len = sizeof(mi);
		char p[PATH_MAX], diff[128] = "";
		int fd;

		if (bpf_map__is_internal(m))
			continue;
		xrl__pin_path(x, bpf_map__name(m), p, sizeof(p));
		fd = bpf_obj_get(p);
		if (fd < 0) {
			if (errno == ENOENT)
				continue;	/* new in this build: created empty */
			return xrl_fail(errno, "cannot open pinned %s: %s", p, strerror(errno));
		}
		if (bpf_obj_get_info_by_fd(fd, &mi, &len)) {
			int err = xrl_fail(errno, "cannot read pinned %s: %s", p, strerror(errno));

			close(fd);
			return err;
		}
		close(fd);
		if (mi.type != bpf_map__type(m))
			snprintf(diff, sizeof(diff), "type %u, this build %u", mi.type, bpf_map__type(m));
		else if (mi.key_size != bpf_map__key_size(m))
			snprintf(diff, sizeof(diff), "key size %u, this build %u", mi.key_size,
				 bpf_map__key_size(m));
		else if (mi.value_size != bpf_map__value_size(m))
			snprintf(diff, sizeof(diff), "value size %u, this build %u", mi.value_size,
				 bpf_map__value_size(m));
		else if (mi.map_flags != bpf_map__map_flags(m))
			snprintf(diff, sizeof(diff), "flags %#x, this build %#x", mi.map_flags,
				 bpf_map__map_flags(m));
		else if (mi.max_entries != bpf_map__max_entries(m))
			snprintf(diff, sizeof(diff), "%u entries, this build %u", mi.max_entries,
				 bpf_map__max_entries(m));
		if (diff[0])
			return xrl_fail(EPROTO, "pinned map %s differs from this build's (%s) although the layout "
				    "versions agree (%u): refused, nothing was changed (the build forgot to "
				    "bump XRL_LAYOUT_VERSION?)", p, diff, XRL_LAYOUT_VERSION);
	}
	return 0;
}

int xrl__map_max_entries(int fd)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -errno;
	return info.max_entries;
}

/* A `keys N` that the pinned tables do not have: say how to get out. The
 * way is to keep them, or to detach everywhere and purge. */
static int keys_mismatch(struct xrl *x, int cap, __u32 keys)
{
	struct xrl_attachment *a = NULL;
	char cmd[PATH_MAX + 32], steps[sizeof(xrl__errbuf)];
	size_t n = 0, l = 0;

	xrl__ctl_cmd(x, cmd, sizeof(cmd));
	if (xrl_attachments(x, &a, &n))
		n = 0;	/* still worth saying: purge will name them */
	steps[0] = '\0';
	for (size_t i = 0; i < n && l < sizeof(steps); i++)
		l += snprintf(steps + l, sizeof(steps) - l, "'%s detach dev %s', ", cmd, a[i].ifname);
	if (l < sizeof(steps))
		snprintf(steps + l, sizeof(steps) - l, "%s'%s purge'", n ? "then " : "", cmd);
	free(a);
	return xrl_fail(EEXIST, "the pinned bucket tables hold %d keys each, not %u: attach without 'keys' to keep them, "
		    "or start over (rules and buckets are lost): %s", cap, keys, steps);
}

/* How many bans the rules may hold (struct xrl_ban_totals): the table less
 * a quarter, kept for the operator, the configuration and the deciders.
 * Stored atomically: under an upgrade the running program adds to the
 * entry's counters. */
void xrl__bans_reserve(struct xrl *x)
{
	int cap = xrl__map_max_entries(x->map_fd[M_BANS4]);
	struct xrl_ban_totals *t;

	if (cap <= 0)
		return;
	t = mmap(NULL, sizeof(*t), PROT_READ | PROT_WRITE, MAP_SHARED, x->map_fd[M_BAN_TOTALS], 0);
	if (t == MAP_FAILED)
		return;
	__atomic_store_n(&t->rule_bans_max, (__u64)cap - cap / XRL_BAN_RESERVE_DIV, __ATOMIC_RELAXED);
	munmap(t, sizeof(*t));
}

/* The size of the pinned map m, a table whose size the first attach set
 * (an upgrade takes it): 1 and *cap, 0 where the instance has none pinned,
 * or a negative error, said. */
static int pinned_size(struct xrl *x, int m, int *cap)
{
	char p[PATH_MAX];
	int fd;

	if (!x->pinned || !xrl__pin_exists(x, xrl__map_names[m]))
		return 0;
	xrl__pin_path(x, xrl__map_names[m], p, sizeof(p));
	fd = bpf_obj_get(p);
	*cap = fd < 0 ? -errno : xrl__map_max_entries(fd);
	if (fd >= 0)
		close(fd);
	if (*cap < 0)
		return xrl_fail(*cap, "cannot read pinned %s: %s", p, strerror(-*cap));
	return 1;
}

/* Load this build's object on the pinned maps (reused, new ones created and
 * pinned) and pin its program at prog_pin. upgrade: the pinned maps are
 * checked against this build's first, and nothing is pinned when they
 * differ. The XDP program only: the tc one is loaded when a tc hook first
 * needs it (tcprog.c), each costing a verification; an upgrade loads it
 * too when the running instance has one, to replace it. */
int xrl__load_object(struct xrl *x, const struct xrl_open_opts *o, const char *prog_pin,
		       bool upgrade)
{
	struct bpf_map *maps[M__COUNT];
	char p[PATH_MAX], lacks[384];
	bool tc = upgrade && x->pinned && xrl__pin_exists(x, TC_PROG_PIN);
	int has, cap;
	int err;

	x->skel = xdp_rl__open();
	if (!x->skel)
		return xrl_fail(errno, "cannot open the BPF object: %s", strerror(errno));
	bpf_program__set_autoload(x->skel->progs.xrl_tc, tc);
	x->skel->rodata->use_test_clock = o->test_clock;
	snprintf((char *)x->skel->rodata_info->xrl_info.build,
		 sizeof(x->skel->rodata_info->xrl_info.build), "%s", xrl_version());

	maps[M_CONTROL] = x->skel->maps.xrl_control;
	maps[M_RULES4] = x->skel->maps.xrl_rules4;
	maps[M_RULES6] = x->skel->maps.xrl_rules6;
	maps[M_BUCKETS4] = x->skel->maps.xrl_buckets4;
	maps[M_BUCKETS6] = x->skel->maps.xrl_buckets6;
	maps[M_RULE_STATS] = x->skel->maps.xrl_rule_stats;
	maps[M_GLOBAL_STATS] = x->skel->maps.xrl_global_stats;
	maps[M_IF_STATS] = x->skel->maps.xrl_if_stats;
	maps[M_EVENTS_RLD] = x->skel->maps.xrl_events_rld;
	maps[M_EVENTS_CTL] = x->skel->maps.xrl_events_ctl;
	maps[M_EVENT_STATS] = x->skel->maps.xrl_event_stats;
	maps[M_EP4] = x->skel->maps.xrl_ep4;
	maps[M_EP6] = x->skel->maps.xrl_ep6;
	maps[M_EP_CLASS] = x->skel->maps.xrl_ep_class;
	maps[M_FLEET_RULES] = x->skel->maps.xrl_fleet_rules;
	maps[M_FLEET_KEYS4] = x->skel->maps.xrl_fleet_keys4;
	maps[M_FLEET_KEYS6] = x->skel->maps.xrl_fleet_keys6;
	maps[M_LEASES] = x->skel->maps.xrl_leases;
	maps[M_RULE_SHARED] = x->skel->maps.xrl_rule_shared;
	maps[M_HOT] = x->skel->maps.xrl_hot;
	maps[M_FLEET_SCRATCH] = x->skel->maps.xrl_fleet_scratch;
	maps[M_BANS4] = x->skel->maps.xrl_bans4;
	maps[M_BANS6] = x->skel->maps.xrl_bans6;
	maps[M_BAN_STATS] = x->skel->maps.xrl_ban_stats;
	maps[M_BAN_TOTALS] = x->skel->maps.xrl_ban_totals;
	maps[M_OFFENDERS] = x->skel->maps.xrl_offenders;
	maps[M_BAN_SCRATCH] = x->skel->maps.xrl_ban_scratch;
	maps[M_SC_VERIFIED] = x->skel->maps.xrl_sc_verified;
	maps[M_SC_STATS] = x->skel->maps.xrl_sc_stats;
	maps[M_SETS] = x->skel->maps.xrl_sets;
	maps[M_SET_RULES] = x->skel->maps.xrl_set_rules;
	maps[M_SET_META] = x->skel->maps.xrl_set_meta;
	maps[M_ANSWER_CAP] = x->skel->maps.xrl_answer_cap;
	maps[M_BAN_HOT] = x->skel->maps.xrl_ban_hot;

	if ((has = pinned_size(x, M_BUCKETS4, &cap)) < 0)
		return has;
	if (has) {
		/* Buckets survive an upgrade: take the pinned table's size. */
		if (o->keys && (__u32)cap != o->keys)
			return keys_mismatch(x, cap, o->keys);
		bpf_map__set_max_entries(maps[M_BUCKETS4], cap);
		bpf_map__set_max_entries(maps[M_BUCKETS6], cap);
	} else if (o->keys) {
		/* `keys` sizes each family's table */
		bpf_map__set_max_entries(maps[M_BUCKETS4], o->keys);
		bpf_map__set_max_entries(maps[M_BUCKETS6], o->keys);
	}

	if ((has = pinned_size(x, M_SC_VERIFIED, &cap)) < 0)
		return has;
	if (has) {
		/* The sources SYN cookies verified survive an upgrade: take
		 * the pinned table's size. */
		if (o->syn_verified && (__u32)cap != o->syn_verified)
			return xrl_fail(EEXIST, "the pinned table of sources SYN cookies verified holds %d entries, "
				    "not %u: attach without 'syn-verified' to keep it (the size is set at the first attach)",
				    cap, o->syn_verified);
		bpf_map__set_max_entries(maps[M_SC_VERIFIED], cap);
	} else if (o->syn_verified) {
		bpf_map__set_max_entries(maps[M_SC_VERIFIED], o->syn_verified);
	}

	if ((has = pinned_size(x, M_BANS4, &cap)) < 0)
		return has;
	if (has) {
		/* Bans survive an upgrade: take the pinned table's size. */
		if (o->bans && (__u32)cap != o->bans)
			return xrl_fail(EEXIST, "the pinned ban tables hold %d entries each, not %u: attach "
				    "without 'bans' to keep them (the size is set at the first attach)",
				    cap, o->bans);
		bpf_map__set_max_entries(maps[M_BANS4], cap);
		bpf_map__set_max_entries(maps[M_BANS6], cap);
	} else if (o->bans) {
		bpf_map__set_max_entries(maps[M_BANS4], o->bans);
		bpf_map__set_max_entries(maps[M_BANS6], o->bans);
	}

	if (x->pinned) {
		x->created = true;
		for (int i = 0; i < M__COUNT; i++) {
			xrl__pin_path(x, xrl__map_names[i], p, sizeof(p));
			bpf_map__set_pin_path(maps[i], p);
			/* an existing pin is reused by libbpf, and kept by xrl_discard() */
			x->new_pin[i] = !xrl__pin_exists(x, xrl__map_names[i]);
		}
	}

	if (upgrade && (err = maps_compatible(x, x->skel->obj)))
		return err;
	err = xrl__skel_load(x->skel, lacks, sizeof(lacks));
	if (err && lacks[0])	/* an older kernel: what it lacks, not the verifier's log */
		return xrl_fail(err, "cannot load the BPF program: %s", lacks);
	if (err && xrl__is_perm(-err))	/* not another version's maps: no right to load */
		return xrl_fail(err, "cannot load the BPF program: permission denied (uid %u): loading it takes root "
			    "(CAP_BPF, CAP_NET_ADMIN, CAP_PERFMON): run it as root, e.g. with sudo",
			    (unsigned)geteuid());
	if (err)
		return xrl_fail(err, "cannot load the BPF program: %s (a pinned map from another version? 'xdp-rlctl purge' to start over)",
			    strerror(-err));

	x->prog_fd = bpf_program__fd(x->skel->progs.xdp_rl);
	x->tc_prog_fd = tc ? bpf_program__fd(x->skel->progs.xrl_tc) : -1;
	for (int i = 0; i < M__COUNT; i++)
		x->map_fd[i] = bpf_map__fd(maps[i]);
	xrl__bans_reserve(x);

	/* A program that finds no inner map passes everything as unmatched;
	 * an empty rule set says the same, and lets `bpftool map` show it.
	 * Maps reused from pins keep the set they hold. */
	for (int family = 4; family <= 6; family += 2) {
		err = xrl__rules_install_empty(x, family);
		if (err)
			return xrl_fail(err, "cannot create the empty IPv%d rule set: %s",
				    family, strerror(-err));
	}

	if (x->pinned) {
		xrl__pin_path(x, prog_pin, p, sizeof(p));
		if (bpf_obj_pin(x->prog_fd, p))
			return xrl_fail(errno, "cannot pin the program at %s: %s", p, strerror(errno));
		if (upgrade)
			x->prog_pin_new = true;
		else
			x->new_pin[M__COUNT] = true;
		xrl__pin_path(x, upgrade ? INFO_PIN_NEW : INFO_PIN, p, sizeof(p));
		unlink(p);	/* a leftover info pin without its program */
		if (bpf_obj_pin(bpf_map__fd(x->skel->maps.rodata_info), p))
			return xrl_fail(errno, "cannot pin the program's build at %s: %s", p, strerror(errno));
		if (!upgrade)
			x->new_pin[M__COUNT + 1] = true;
		/* the tc program after the XDP one: an upgrade's new tc pin
		 * without its XDP pin means the XDP one was renamed (upgrade.c).
		 * A new instance has none yet: a leftover tc pin (of a removed
		 * instance, or an older build's) would run on other maps. */
		xrl__pin_path(x, upgrade ? TC_PROG_PIN_NEW : TC_PROG_PIN, p, sizeof(p));
		unlink(p);
		if (tc && bpf_obj_pin(x->tc_prog_fd, p))
			return xrl_fail(errno, "cannot pin the tc program at %s: %s", p, strerror(errno));
	}
	return 0;
}

int xrl__load_upgrade(struct xrl *x, const char *prog_pin, unsigned int *maps_added)
{
	struct xrl_open_opts o = { .pin_dir = x->pin_dir };
	int err = xrl__load_object(x, &o, prog_pin, true);

	*maps_added = 0;
	for (int i = 0; i < M__COUNT; i++)
		*maps_added += x->new_pin[i];
	return err;
}

int xrl__reuse_pins(struct xrl *x, const struct xrl_open_opts *o)
{
	char p[PATH_MAX];
	int cap, err;

	xrl__pin_path(x, PROG_PIN, p, sizeof(p));
	x->prog_fd = bpf_obj_get(p);
	if (x->prog_fd < 0 && xrl__is_perm(errno))
		return xrl__perm_denied(errno, "cannot open the pinned program", p);
	if (x->prog_fd < 0)
		return xrl_fail(errno, "cannot open pinned program %s: %s", p, strerror(errno));
	/* another layout's maps are never read or written by this build */
	if ((err = xrl__layout_check(x, x->prog_fd, "pinned program")))
		return err;
	/* the tc program, once a tc hook needed it (else -1: hook tc loads
	 * it, tcprog.c) */
	xrl__pin_path(x, TC_PROG_PIN, p, sizeof(p));
	x->tc_prog_fd = bpf_obj_get(p);
	for (int i = 0; i < M__COUNT; i++) {
		xrl__pin_path(x, xrl__map_names[i], p, sizeof(p));
		x->map_fd[i] = bpf_obj_get(p);
		if (x->map_fd[i] < 0 && xrl__is_perm(errno))
			return xrl__perm_denied(errno, "cannot open the pinned map", p);
		if (x->map_fd[i] < 0)
			return xrl_fail(errno, "cannot open pinned map %s: %s ('xdp-rlctl purge' to start over; "
				    "pinned by an older build of xdp-rl? detach and purge with that build, "
				    "or remove %s, which detaches it everywhere; its rules and buckets are lost)",
				    p, strerror(errno), x->pin_dir);
	}
	cap = xrl__map_max_entries(x->map_fd[M_BUCKETS4]);
	if (o->keys && cap >= 0 && (__u32)cap != o->keys)
		return keys_mismatch(x, cap, o->keys);
	cap = xrl__map_max_entries(x->map_fd[M_SC_VERIFIED]);
	if (o->syn_verified && cap >= 0 && (__u32)cap != o->syn_verified)
		return xrl_fail(EEXIST, "the pinned table of sources SYN cookies verified holds %d entries, "
			    "not %u: attach without 'syn-verified' to keep it (the size is set at the first attach)",
			    cap, o->syn_verified);
	return 0;
}
