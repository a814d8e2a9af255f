// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * libxrl: hook tc without tcx links (before Linux 6.6): the tc program as a
 * filter of the interface's clsact qdisc, in direct-action mode (libbpf's
 * bpf_tc_hook_create() and bpf_tc_attach()), at its own handle and the first
 * priority. A tc filter is no bpf object: it cannot be pinned, so the
 * attachment is recorded by pinning the program it runs beside the links,
 * as TCF_PREFIX IFNAME (the clsact qdisc was there already) or TCQ_PREFIX
 * IFNAME (xdp-rl created it: it removes it at detach when no other filter
 * is left on it). Nothing else of the interface's tc state is touched: the
 * qdisc is created only where there is none, the filter never replaces one
 * of another's, detach removes only a filter that still runs xdp-rl's
 * program.
 */
#include "maps/internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <net/if.h>
#include <libmnl/libmnl.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>

bool xrl_tc_legacy_forced(void)
{
	const char *v = getenv("XRL_TC_LEGACY");

	return v && !strcmp(v, "1");
}

static void legacy_pin(const struct xrl *x, const char *prefix, const char *ifname, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s%s", x->pin_dir, prefix, ifname);
}

/* Which record IFNAME has: TCQ_PREFIX, TCF_PREFIX or NULL (none). */
const char *xrl__tc_legacy_record(const struct xrl *x, const char *ifname)
{
	char p[PATH_MAX];

	legacy_pin(x, TCQ_PREFIX, ifname, p, sizeof(p));
	if (access(p, F_OK) == 0)
		return TCQ_PREFIX;
	legacy_pin(x, TCF_PREFIX, ifname, p, sizeof(p));
	if (access(p, F_OK) == 0)
		return TCF_PREFIX;
	return NULL;
}

static void hook_of(struct bpf_tc_hook *h, unsigned int ifindex)
{
	memset(h, 0, sizeof(*h));
	h->sz = sizeof(*h);
	h->ifindex = ifindex;
	h->attach_point = BPF_TC_INGRESS;
}

__u32 xrl__tc_legacy_prog(unsigned int ifindex)
{
	LIBBPF_OPTS(bpf_tc_opts, o, .handle = XRL_TC_HANDLE, .priority = XRL_TC_PRIO);
	struct bpf_tc_hook h;

	hook_of(&h, ifindex);
	return bpf_tc_query(&h, &o) ? 0 : o.prog_id;
}

/* The filters on IFINDEX's clsact (both directions), by an rtnetlink dump;
 * a negative errno when it cannot be read. */
static int count_cb(const struct nlmsghdr *nlh, void *data)
{
	(void)nlh;
	++*(int *)data;
	return MNL_CB_OK;
}

static int clsact_filters(unsigned int ifindex, __u32 parent)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct mnl_socket *nl = mnl_socket_open(NETLINK_ROUTE);
	struct nlmsghdr *nlh;
	struct tcmsg *t;
	unsigned int seq = time(NULL), port;
	int n = 0, ret, err = 0;

	if (!nl)
		return -errno;
	if (mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		err = -errno;
		goto cleanup;
	}
	port = mnl_socket_get_portid(nl);
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = RTM_GETTFILTER;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	nlh->nlmsg_seq = seq;
	t = mnl_nlmsg_put_extra_header(nlh, sizeof(*t));
	t->tcm_family = AF_UNSPEC;
	t->tcm_ifindex = ifindex;
	t->tcm_parent = parent;
	if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0) {
		err = -errno;
		goto cleanup;
	}
	while ((ret = mnl_socket_recvfrom(nl, buf, sizeof(buf))) > 0) {
		ret = mnl_cb_run(buf, ret, seq, port, count_cb, &n);
		if (ret <= MNL_CB_STOP)
			break;
	}
	if (ret < 0)
		err = -errno;
cleanup:
	mnl_socket_close(nl);
	return err ? err : n;
}

int xrl__tc_legacy_attach(struct xrl *x, const char *ifname, unsigned int ifindex)
{
	LIBBPF_OPTS(bpf_tc_opts, o, .prog_fd = x->tc_prog_fd, .handle = XRL_TC_HANDLE,
		    .priority = XRL_TC_PRIO);
	struct bpf_tc_hook h;
	libbpf_print_fn_t prev;
	bool created;
	char p[PATH_MAX];
	int err;

	if (xrl__tc_legacy_record(x, ifname))
		return xrl_fail(EEXIST, "xdp-rl is already attached to %s", ifname);
	hook_of(&h, ifindex);
	/* a clsact there already is the expected case, not a warning:
	 * libbpf's message of the kernel's refusal is held back for it (its
	 * print function is process-wide: another thread's libbpf message at
	 * this very moment is lost) */
	prev = libbpf_set_print(NULL);
	err = bpf_tc_hook_create(&h);
	libbpf_set_print(prev);
	if (err && err != -EEXIST)
		return xrl_fail(err, "cannot add a clsact qdisc to %s: %s", ifname, strerror(-err));
	created = !err;
	/* never BPF_TC_F_REPLACE: a filter of this handle and priority is
	 * another's (another instance), and stays */
	err = bpf_tc_attach(&h, &o);
	if (err == -EEXIST) {
		err = xrl_fail(err, "cannot attach to %s at tc ingress: a filter of handle 0x%x, priority %u "
			       "is there already (another xdp-rl instance?)", ifname, XRL_TC_HANDLE, XRL_TC_PRIO);
		goto undo_qdisc;
	}
	if (err) {
		err = xrl_fail(err, "cannot attach to %s at tc ingress (clsact): %s", ifname, strerror(-err));
		goto undo_qdisc;
	}
	legacy_pin(x, created ? TCQ_PREFIX : TCF_PREFIX, ifname, p, sizeof(p));
	if (bpf_obj_pin(x->tc_prog_fd, p)) {
		err = xrl_fail(errno, "cannot pin the attachment's record at %s: %s", p, strerror(errno));
		o.prog_fd = o.prog_id = o.flags = 0;
		bpf_tc_detach(&h, &o);
		goto undo_qdisc;
	}
	return 0;
undo_qdisc:
	if (created) {
		h.attach_point = BPF_TC_INGRESS | BPF_TC_EGRESS;	/* the qdisc itself */
		bpf_tc_hook_destroy(&h);
	}
	return err;
}

int xrl__tc_legacy_detach(struct xrl *x, const char *ifname, const char *record)
{
	LIBBPF_OPTS(bpf_tc_opts, o, .handle = XRL_TC_HANDLE, .priority = XRL_TC_PRIO);
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	struct bpf_tc_hook h;
	unsigned int ifindex = if_nametoindex(ifname);
	char p[PATH_MAX];
	int fd;

	legacy_pin(x, record, ifname, p, sizeof(p));
	fd = bpf_obj_get(p);
	if (fd >= 0 && bpf_obj_get_info_by_fd(fd, &info, &len))
		info.id = 0;
	if (fd >= 0)
		close(fd);
	/* only a filter that still runs xdp-rl's program (the interface may
	 * be gone, or another took the handle since) */
	hook_of(&h, ifindex);
	if (ifindex && info.id && xrl__tc_legacy_prog(ifindex) == info.id)
		bpf_tc_detach(&h, &o);
	/* the qdisc it created, when nothing uses it now (its filter deleted
	 * behind its back included: the qdisc is still xdp-rl's) */
	if (ifindex && !strcmp(record, TCQ_PREFIX) &&
	    clsact_filters(ifindex, TC_H_MAKE(TC_H_CLSACT, TC_H_MIN_INGRESS)) == 0 &&
	    clsact_filters(ifindex, TC_H_MAKE(TC_H_CLSACT, TC_H_MIN_EGRESS)) == 0) {
		h.attach_point = BPF_TC_INGRESS | BPF_TC_EGRESS;
		bpf_tc_hook_destroy(&h);
	}
	if (unlink(p))
		return xrl_fail(errno, "cannot remove %s: %s", p, strerror(errno));
	return 0;
}
