/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Link notifications (rtnetlink, RTMGRP_LINK) through libmnl. */
#ifndef XRL_LINKMON_H
#define XRL_LINKMON_H

#include <net/if.h>

struct xrl_linkmon;

struct xrl_link_event {
	int added;		/* 1: RTM_NEWLINK, 0: RTM_DELLINK */
	int ifindex;
	char ifname[IF_NAMESIZE];
};

typedef void (*xrl_link_cb)(const struct xrl_link_event *ev, void *ctx);

int xrl_linkmon_open(struct xrl_linkmon **out);
int xrl_linkmon_fd(const struct xrl_linkmon *m);
/* Read what is pending and call cb for every link message. */
int xrl_linkmon_read(struct xrl_linkmon *m, xrl_link_cb cb, void *ctx);
void xrl_linkmon_close(struct xrl_linkmon *m);

#endif
