// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * libxrl: attach, detach and list the links: XDP, or tcx at tc ingress
 * (hook tc), one pinned link per interface either way.
 */
#include "maps/internal.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <linux/ethtool.h>
#include <linux/if_link.h>
#include <linux/sockios.h>

/* ------------------------------------------------------------------ */
/* Attach and detach                                                   */

const char *xrl_xdp_mode_name(enum xrl_xdp_mode m)
{
	return xrl_word_name(xrl_xdp_mode_words, m);
}

/*
 * tcx (Linux 6.6): newer than the uapi headers this builds against
 * (Debian 12's are 6.1), and libbpf 1.1 has no bpf_program__attach_tcx():
 * the link is made with bpf_link_create() and the kernel's numbers.
 */
#ifndef BPF_F_BEFORE
#define BPF_F_BEFORE		(1U << 3)
#endif
#define XRL_BPF_TCX_INGRESS	46	/* enum bpf_attach_type */
#define XRL_BPF_LINK_TYPE_TCX	11	/* enum bpf_link_type */

const char *xrl_hook_name(enum xrl_hook h)
{
	return xrl_word_name(xrl_hook_words, h);
}

static void link_pin(const struct xrl *x, const char *ifname, char *buf, size_t len)
{
	snprintf(buf, len, "%s/" LINK_PREFIX "%s", x->pin_dir, ifname);
}

static int try_attach(struct xrl *x, int ifindex, __u32 flags)
{
	LIBBPF_OPTS(bpf_link_create_opts, opts, .flags = flags);
	int fd = bpf_link_create(x->prog_fd, ifindex, BPF_XDP, &opts);

	return fd < 0 ? -errno : fd;
}

/* The program attached to IFINDEX's XDP hook (either mode), with its name
 * when this process may read it (by id: CAP_SYS_ADMIN). 0 with prog_id 0:
 * nothing attached. */
static int holder_of(unsigned int ifindex, struct xrl_xdp_holder *h)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	int err, fd;

	memset(h, 0, sizeof(*h));
	h->mode = XRL_XDP_UNKNOWN;
	err = bpf_xdp_query(ifindex, 0, &q);
	if (err)
		return err;
	switch (q.attach_mode) {
	case XDP_ATTACHED_DRV:
		h->prog_id = q.prog_id;
		h->mode = XRL_XDP_NATIVE;
		break;
	case XDP_ATTACHED_SKB:
		h->prog_id = q.prog_id;
		h->mode = XRL_XDP_GENERIC;
		break;
	case XDP_ATTACHED_MULTI:
		h->prog_id = q.drv_prog_id ? q.drv_prog_id : q.skb_prog_id;
		h->mode = q.drv_prog_id ? XRL_XDP_NATIVE : XRL_XDP_GENERIC;
		break;
	case XDP_ATTACHED_HW:
		h->prog_id = q.hw_prog_id;
		break;
	default:
		return 0;
	}
	fd = bpf_prog_get_fd_by_id(h->prog_id);
	if (fd >= 0) {
		if (bpf_obj_get_info_by_fd(fd, &info, &len) == 0)
			snprintf(h->name, sizeof(h->name), "%s", info.name);
		close(fd);
	}
	/* libxdp's multi-program dispatcher pins its state under its bpffs
	 * directory as dispatch-IFINDEX-PROGID (xdp-tools' libxdp.c) */
	if (!strcmp(h->name, "xdp_dispatcher")) {
		const char *dir = getenv("LIBXDP_BPFFS");

		snprintf(h->pin, sizeof(h->pin), "%s/dispatch-%u-%u", dir && *dir ? dir : "/sys/fs/bpf/xdp",
			 ifindex, h->prog_id);
		if (access(h->pin, F_OK))
			h->pin[0] = '\0';
		h->dispatcher = true;
	}
	return 0;
}

/* "id 42, name xdp_pass, native mode"; libxdp's dispatcher said as such */
static void holder_details(const struct xrl_xdp_holder *h, char *buf, size_t len)
{
	snprintf(buf, len, "id %u%s%s%s%s%s%s%s%s", h->prog_id,
		 h->name[0] ? ", name " : "", h->name,
		 h->mode != XRL_XDP_UNKNOWN ? ", " : "",
		 h->mode != XRL_XDP_UNKNOWN ? xrl_xdp_mode_name(h->mode) : "",
		 h->mode != XRL_XDP_UNKNOWN ? " mode" : "",
		 h->dispatcher ? ", libxdp's multi-program dispatcher" : "",
		 h->pin[0] ? ", pinned at " : "", h->pin);
}

/* What the operator may do about a held XDP hook (docs/coexistence.md). */
#define WAYS_OUT "xdp-rl never replaces what it did not attach: 'attach dev %s hook tc' runs it beside " \
	"that program at tc ingress, or remove that program first (see 'Running beside other programs' in the docs)"

void xrl_xdp_holder_format(const struct xrl_xdp_holder *h, char *buf, size_t len)
{
	char det[96];

	holder_details(h, det, sizeof(det));
	snprintf(buf, len, "another XDP program (%s)", det);
}

/* The program of the link pinned for IFNAME under PIN_DIR, 0: none. */
static __u32 pinned_link_prog(const char *pin_dir, const char *ifname)
{
	struct bpf_link_info info = {};
	__u32 len = sizeof(info);
	char p[PATH_MAX];
	int fd;

	snprintf(p, sizeof(p), "%s/" LINK_PREFIX "%s", pin_dir, ifname);
	fd = bpf_obj_get(p);
	if (fd < 0)
		return 0;
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		info.prog_id = 0;
	close(fd);
	return info.prog_id;
}

/*
 * Another xdp-rl instance (another pin directory) on IFINDEX: its program
 * in the tcx ingress chain, or, when at_tc, at the XDP hook. At XDP a second
 * instance is refused as any other holder is; at tc both would run, and
 * every packet would meet two rule sets and two sets of buckets. 1 (its
 * program's id and hook in *id, *hook) or 0.
 */
static int other_instance(unsigned int ifindex, bool at_tc, __u32 *id, const char **hook)
{
	__u32 ids[64], cnt = 64;
	struct xrl_xdp_holder h;

	if (at_tc && holder_of(ifindex, &h) == 0 && h.prog_id && !strcmp(h.name, "xdp_rl")) {
		*id = h.prog_id;
		*hook = "the XDP hook";
		return 1;
	}
	if (bpf_prog_query(ifindex, XRL_BPF_TCX_INGRESS, 0, NULL, ids, &cnt))
		return 0;	/* no tcx on this kernel: nothing there */
	for (__u32 i = 0; i < cnt && i < 64; i++) {
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);
		int fd = bpf_prog_get_fd_by_id(ids[i]);
		bool ours;

		if (fd < 0)
			continue;
		ours = bpf_obj_get_info_by_fd(fd, &info, &len) == 0 && !strcmp(info.name, "xrl_tc");
		close(fd);
		if (ours) {
			*id = ids[i];
			*hook = "tc ingress";
			return 1;
		}
	}
	return 0;
}

#define OTHER_INSTANCE "another xdp-rl instance is attached to %s (id %u, at %s): one instance per interface " \
	"('--pin-dir' names the instance; detach it there first)"

int xrl_xdp_foreign(const char *pin_dir, const char *ifname, struct xrl_xdp_holder *h)
{
	unsigned int ifindex;
	int err;

	memset(h, 0, sizeof(*h));
	if (strlen(ifname) >= IF_NAMESIZE || !(ifindex = if_nametoindex(ifname)))
		return 0;
	err = holder_of(ifindex, h);
	if (err)
		return xrl_fail(err, "cannot query the XDP program of %s: %s", ifname, strerror(-err));
	if (!h->prog_id)
		return 0;
	return h->prog_id != pinned_link_prog(pin_dir ? pin_dir : XRL_DEFAULT_PIN_DIR, ifname);
}

int xrl_attach(struct xrl *x, const char *ifname, enum xrl_xdp_mode mode,
	       enum xrl_xdp_mode *got)
{
	char p[PATH_MAX];
	unsigned int ifindex;
	const char *where;
	__u32 other;
	int fd;

	if (!x->pinned)
		return xrl_fail(EINVAL, "cannot attach an unpinned instance");
	if (strlen(ifname) >= IF_NAMESIZE || !(ifindex = if_nametoindex(ifname)))
		return xrl_fail(ENODEV, "unknown interface '%s'", ifname);
	link_pin(x, ifname, p, sizeof(p));
	if (access(p, F_OK) == 0)
		return xrl_fail(EEXIST, "xdp-rl is already attached to %s", ifname);
	if (other_instance(ifindex, false, &other, &where))
		return xrl_fail(EBUSY, OTHER_INSTANCE, ifname, other, where);

	*got = mode == XRL_XDP_GENERIC ? XRL_XDP_GENERIC : XRL_XDP_NATIVE;
	fd = try_attach(x, ifindex, *got == XRL_XDP_GENERIC ? XDP_FLAGS_SKB_MODE
							     : XDP_FLAGS_DRV_MODE);
	if (fd < 0 && mode == XRL_XDP_AUTO && fd != -EBUSY && fd != -EEXIST) {
		xrl_warn("native XDP failed on %s (%s); using generic mode, which is slower",
		     ifname, strerror(-fd));
		*got = XRL_XDP_GENERIC;
		fd = try_attach(x, ifindex, XDP_FLAGS_SKB_MODE);
	}
	if (fd == -EBUSY || fd == -EEXIST) {
		struct xrl_xdp_holder h;
		char who[128];

		/* say which: the operator has to find and remove it */
		if (holder_of(ifindex, &h) || !h.prog_id)
			return xrl_fail(EBUSY, "another XDP program is already attached to %s; " WAYS_OUT,
					ifname, ifname);
		holder_details(&h, who, sizeof(who));
		return xrl_fail(EBUSY, "another XDP program is already attached to %s (%s); " WAYS_OUT,
				ifname, who, ifname);
	}
	if (fd < 0)
		return xrl_fail(fd, "cannot attach to %s in %s mode: %s", ifname,
			    xrl_xdp_mode_name(*got), strerror(-fd));
	if (bpf_obj_pin(fd, p)) {
		int err = xrl_fail(errno, "cannot pin the link at %s: %s", p, strerror(errno));

		close(fd);	/* the link goes with its last reference */
		return err;
	}
	close(fd);
	return 0;
}

int xrl_attach_tc(struct xrl *x, const char *ifname)
{
	LIBBPF_OPTS(bpf_link_create_opts, opts, .flags = BPF_F_BEFORE);
	char p[PATH_MAX];
	unsigned int ifindex;
	const char *where;
	__u32 other;
	int fd, err, loaded;

	if (!x->pinned)
		return xrl_fail(EINVAL, "cannot attach an unpinned instance");
	if (strlen(ifname) >= IF_NAMESIZE || !(ifindex = if_nametoindex(ifname)))
		return xrl_fail(ENODEV, "unknown interface '%s'", ifname);
	link_pin(x, ifname, p, sizeof(p));
	if (access(p, F_OK) == 0 || xrl__tc_legacy_record(x, ifname))
		return xrl_fail(EEXIST, "xdp-rl is already attached to %s", ifname);
	if (other_instance(ifindex, true, &other, &where))
		return xrl_fail(EBUSY, OTHER_INSTANCE, ifname, other, where);
	/* the tc program: loaded now when no tc hook needed it before (a
	 * failure leaves the XDP side as it was) */
	if ((loaded = xrl__tc_load(x)) < 0)
		return loaded;
	/* without tcx (or told so): a filter of a clsact qdisc */
	if (xrl_tc_legacy_forced()) {
		err = xrl__tc_legacy_attach(x, ifname, ifindex);
		goto out;
	}
	/* first in the chain: a program before it that returns "pass" would
	 * end the chain and let its packets by unmetered; a pass of xdp-rl
	 * says "no opinion", so the programs after it still decide */
	fd = bpf_link_create(x->tc_prog_fd, ifindex, XRL_BPF_TCX_INGRESS, &opts);
	if (fd < 0) {
		err = -errno;
		if (err == -EINVAL)	/* no tcx links here (Linux 6.6): clsact */
			err = xrl__tc_legacy_attach(x, ifname, ifindex);
		else
			err = xrl_fail(err, "cannot attach to %s at tc ingress: %s", ifname, strerror(-err));
		goto out;
	}
	err = 0;
	if (bpf_obj_pin(fd, p))
		err = xrl_fail(errno, "cannot pin the link at %s: %s", p, strerror(errno));
	close(fd);	/* the link goes with its last reference */
out:
	/* a tc program this attach loaded, and nothing runs: not kept */
	if (err && loaded == 1)
		xrl__tc_unload(x);
	return err;
}

/*
 * The order of the tcx ingress chain: the kernel runs its programs in the
 * order BPF_PROG_QUERY lists them, and a program that ends the chain (a
 * pass, TC_ACT_OK, or a drop) before xdp-rl lets its packets by unmetered.
 * xdp-rl attaches first; a program attached later with BPF_F_BEFORE runs
 * before it. The position of prog_id in IFINDEX's chain (1: first), 0 when
 * it is not there (or the chain cannot be read); *first: the program that
 * runs first then (its id, its name when it can be read).
 */
static __u32 tc_position(unsigned int ifindex, __u32 prog_id, __u32 *first_id, char *first_name,
			 size_t len)
{
	__u32 ids[64], cnt = 64, pos = 0;
	struct bpf_prog_info info = {};
	__u32 ilen = sizeof(info);
	int fd;

	*first_id = 0;
	first_name[0] = '\0';
	if (bpf_prog_query(ifindex, XRL_BPF_TCX_INGRESS, 0, NULL, ids, &cnt))
		return 0;
	for (__u32 i = 0; i < cnt && i < 64 && !pos; i++)
		if (ids[i] == prog_id)
			pos = i + 1;
	if (pos <= 1)
		return pos;
	*first_id = ids[0];
	fd = bpf_prog_get_fd_by_id(ids[0]);
	if (fd >= 0) {
		if (bpf_obj_get_info_by_fd(fd, &info, &ilen) == 0)
			snprintf(first_name, len, "%s", info.name);
		close(fd);
	}
	return pos;
}

int xrl_tc_front(struct xrl *x, const char *ifname, __u64 *gap_ns)
{
	LIBBPF_OPTS(bpf_link_create_opts, opts, .flags = BPF_F_BEFORE);
	struct bpf_link_info info = {};
	__u32 len = sizeof(info), first_id, pos;
	struct timespec t0, t1;
	char p[PATH_MAX], name[16];
	unsigned int ifindex;
	int fd, nfd, err;

	*gap_ns = 0;
	link_pin(x, ifname, p, sizeof(p));
	if (strlen(ifname) >= IF_NAMESIZE || access(p, F_OK))
		return xrl_fail(ENOENT, "xdp-rl is not attached to '%s'", ifname);
	fd = bpf_obj_get(p);
	if (fd < 0)
		return xrl_fail(errno, "cannot open %s: %s", p, strerror(errno));
	if (bpf_obj_get_info_by_fd(fd, &info, &len) || info.type != XRL_BPF_LINK_TYPE_TCX) {
		close(fd);
		return xrl_fail(EINVAL, "xdp-rl is attached to %s at the XDP hook, not at tc", ifname);
	}
	ifindex = info.xdp.ifindex;	/* tcx: the union's first word too */
	pos = tc_position(ifindex, info.prog_id, &first_id, name, sizeof(name));
	if (pos <= 1) {
		close(fd);
		if (pos == 1)
			return 0;
		return xrl_fail(ESRCH, "cannot find xdp-rl's program in the tcx chain of %s", ifname);
	}
	if (x->tc_prog_fd < 0) {
		close(fd);
		return xrl_fail(ENOENT, "no tc program pinned at %s", x->pin_dir);
	}
	/* A program is in a chain once: the link goes, and a new one is made
	 * first. The packets between the two pass unmetered (said: tens of
	 * milliseconds, the link's detach returns after an RCU grace period);
	 * the pin is replaced last, so that a failure
	 * leaves the operator's way back (attach again) as it was. */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	bpf_link_detach(fd);
	close(fd);
	nfd = bpf_link_create(x->tc_prog_fd, ifindex, XRL_BPF_TCX_INGRESS, &opts);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	*gap_ns = (t1.tv_sec - t0.tv_sec) * 1000000000ULL + t1.tv_nsec - t0.tv_nsec;
	if (nfd < 0) {
		err = errno;
		unlink(p);
		return xrl_fail(err, "%s: xdp-rl was detached to be attached first again, and that failed (%s): "
				"it is not attached there now", ifname, strerror(err));
	}
	unlink(p);
	if (bpf_obj_pin(nfd, p)) {
		err = xrl_fail(errno, "cannot pin the link at %s: %s", p, strerror(errno));
		close(nfd);	/* the link goes with its last reference */
		return err;
	}
	close(nfd);
	return 1;
}

int xrl_detach(struct xrl *x, const char *ifname)
{
	char p[PATH_MAX];
	int fd;

	const char *record;

	link_pin(x, ifname, p, sizeof(p));
	if (strlen(ifname) < IF_NAMESIZE && access(p, F_OK) && (record = xrl__tc_legacy_record(x, ifname)))
		return xrl__tc_legacy_detach(x, ifname, record);
	if (strlen(ifname) >= IF_NAMESIZE || access(p, F_OK))
		return xrl_fail(ENOENT, "xdp-rl is not attached to '%s'", ifname);
	fd = bpf_obj_get(p);
	if (fd >= 0) {
		/* detach now, even if another process holds the link */
		bpf_link_detach(fd);
		close(fd);
	}
	if (unlink(p))
		return xrl_fail(errno, "cannot remove %s: %s", p, strerror(errno));
	return 0;
}

int xrl_attachments(struct xrl *x, struct xrl_attachment **out, size_t *n)
{
	struct xrl_attachment *v = NULL;
	size_t cap = 0;
	struct dirent *de;
	DIR *d;

	*n = 0;
	if (!x->pinned) {
		*out = NULL;
		return 0;
	}
	d = opendir(x->pin_dir);
	if (!d)
		return xrl_fail(errno, "cannot read %s: %s", x->pin_dir, strerror(errno));
	while ((de = readdir(d))) {
		struct bpf_link_info info = {};
		__u32 len = sizeof(info);
		struct xrl_attachment *a;
		char p[PATH_MAX], name[IF_NAMESIZE];
		int fd;

		bool legacy = !strncmp(de->d_name, TCF_PREFIX, strlen(TCF_PREFIX)) ||
			      !strncmp(de->d_name, TCQ_PREFIX, strlen(TCQ_PREFIX));

		if (strncmp(de->d_name, LINK_PREFIX, strlen(LINK_PREFIX)) && !legacy)
			continue;
		if (*n == cap) {
			cap = cap ? cap * 2 : 8;
			a = realloc(v, cap * sizeof(*v));
			if (!a) {
				closedir(d);
				free(v);
				return xrl_fail(ENOMEM, "out of memory");
			}
			v = a;
		}
		a = &v[(*n)++];
		memset(a, 0, sizeof(*a));
		snprintf(a->ifname, sizeof(a->ifname), "%s", de->d_name + strlen(LINK_PREFIX));
		a->mode = XRL_XDP_UNKNOWN;
		if (legacy) {
			/* a clsact filter: attached while one of xdp-rl's handle
			 * runs xdp-rl's program on the interface of that name */
			unsigned int ifindex;
			__u32 id;
			struct bpf_prog_info pi = {};
			__u32 plen = sizeof(pi);

			snprintf(a->ifname, sizeof(a->ifname), "%s", de->d_name + strlen(TCF_PREFIX));
			ifindex = if_nametoindex(a->ifname);
			id = ifindex ? xrl__tc_legacy_prog(ifindex) : 0;
			a->hook = XRL_HOOK_TC;
			a->tc_clsact = true;
			xrl__pin_path(x, de->d_name, p, sizeof(p));
			fd = bpf_obj_get(p);
			if (fd >= 0 && bpf_obj_get_info_by_fd(fd, &pi, &plen) == 0 && id && pi.id == id) {
				a->ifindex = ifindex;
				a->prog_id = id;
			}
			if (fd >= 0)
				close(fd);
			continue;
		}
		xrl__pin_path(x, de->d_name, p, sizeof(p));
		fd = bpf_obj_get(p);
		if (fd < 0)
			continue;
		if (bpf_obj_get_info_by_fd(fd, &info, &len) == 0) {
			/* a tcx link's ifindex is the first word of the union
			 * too (struct { ifindex; attach_type; } tcx) */
			a->ifindex = info.xdp.ifindex;
			a->prog_id = info.prog_id;
			a->hook = info.type == XRL_BPF_LINK_TYPE_TCX ? XRL_HOOK_TC : XRL_HOOK_XDP;
		}
		close(fd);
		/* at tc: is it still first in the chain? (in this namespace) */
		if (a->hook == XRL_HOOK_TC && a->ifindex && if_indextoname(a->ifindex, name) &&
		    !strcmp(name, a->ifname))
			a->tc_position = tc_position(a->ifindex, a->prog_id, &a->tc_first_id,
						     a->tc_first_name, sizeof(a->tc_first_name));
		/* the mode is known when the interface is in this namespace */
		if (a->hook == XRL_HOOK_XDP && a->ifindex && if_indextoname(a->ifindex, name) &&
		    !strcmp(name, a->ifname)) {
			LIBBPF_OPTS(bpf_xdp_query_opts, q);

			if (bpf_xdp_query(a->ifindex, 0, &q) == 0)
				a->mode = q.attach_mode == XDP_ATTACHED_DRV ? XRL_XDP_NATIVE :
					  q.attach_mode == XDP_ATTACHED_SKB ? XRL_XDP_GENERIC :
					  XRL_XDP_UNKNOWN;
		}
	}
	closedir(d);
	*out = v;
	return 0;
}

/*
 * Is GRO on for ifname (in this network namespace)? The ethtool ioctl
 * ETHTOOL_GGRO: 1 on, 0 off, a negative errno when it cannot be read.
 */
int xrl_iface_gro(const char *ifname)
{
	struct ethtool_value ev = { .cmd = ETHTOOL_GGRO };
	struct ifreq ifr;
	int fd, err = 0;

	if (strlen(ifname) >= IFNAMSIZ)
		return -EINVAL;
	memset(&ifr, 0, sizeof(ifr));
	memcpy(ifr.ifr_name, ifname, strlen(ifname));
	ifr.ifr_data = (void *)&ev;
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (ioctl(fd, SIOCETHTOOL, &ifr))
		err = -errno;
	close(fd);
	return err ? err : !!ev.data;
}

void xrl_attachments_names(const struct xrl_attachment *a, size_t n, char *buf, size_t len)
{
	size_t l = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < n && l < len; i++)
		l += snprintf(buf + l, len - l, "%s%s%s", i ? ", " : "", a[i].ifname,
			      a[i].ifindex ? "" : " (gone)");
}
