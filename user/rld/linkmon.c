// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include "linkmon.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <libmnl/libmnl.h>
#include <linux/rtnetlink.h>

struct xrl_linkmon {
	struct mnl_socket *nl;
	char buf[16384];	/* MNL_SOCKET_BUFFER_SIZE is not a constant */
};

struct cb_ctx {
	xrl_link_cb cb;
	void *ctx;
};

static int attr_cb(const struct nlattr *a, void *data)
{
	const struct nlattr **tb = data;
	int type = mnl_attr_get_type(a);

	if (mnl_attr_type_valid(a, IFLA_MAX) < 0)
		return MNL_CB_OK;
	if (type == IFLA_IFNAME && mnl_attr_validate(a, MNL_TYPE_STRING) < 0)
		return MNL_CB_OK;
	tb[type] = a;
	return MNL_CB_OK;
}

static int msg_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[IFLA_MAX + 1] = {};
	struct ifinfomsg *ifm = mnl_nlmsg_get_payload(nlh);
	struct cb_ctx *c = data;
	struct xrl_link_event ev = {};

	if (nlh->nlmsg_type != RTM_NEWLINK && nlh->nlmsg_type != RTM_DELLINK)
		return MNL_CB_OK;
	mnl_attr_parse(nlh, sizeof(*ifm), attr_cb, tb);
	if (!tb[IFLA_IFNAME])
		return MNL_CB_OK;
	ev.added = nlh->nlmsg_type == RTM_NEWLINK;
	ev.ifindex = ifm->ifi_index;
	snprintf(ev.ifname, sizeof(ev.ifname), "%s", mnl_attr_get_str(tb[IFLA_IFNAME]));
	c->cb(&ev, c->ctx);
	return MNL_CB_OK;
}

int xrl_linkmon_open(struct xrl_linkmon **out)
{
	struct xrl_linkmon *m = calloc(1, sizeof(*m));

	if (!m)
		return -ENOMEM;
	m->nl = mnl_socket_open2(NETLINK_ROUTE, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (!m->nl || mnl_socket_bind(m->nl, RTMGRP_LINK, MNL_SOCKET_AUTOPID) < 0) {
		int err = -errno;

		xrl_linkmon_close(m);
		return err;
	}
	*out = m;
	return 0;
}

int xrl_linkmon_fd(const struct xrl_linkmon *m)
{
	return mnl_socket_get_fd(m->nl);
}

int xrl_linkmon_read(struct xrl_linkmon *m, xrl_link_cb cb, void *ctx)
{
	struct cb_ctx c = { cb, ctx };
	ssize_t n;

	while ((n = mnl_socket_recvfrom(m->nl, m->buf, sizeof(m->buf))) > 0)
		mnl_cb_run(m->buf, n, 0, 0, msg_cb, &c);
	if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
		return -errno;	/* ENOBUFS: events were lost; the caller rescans */
	return 0;
}

void xrl_linkmon_close(struct xrl_linkmon *m)
{
	if (!m)
		return;
	if (m->nl)
		mnl_socket_close(m->nl);
	free(m);
}
