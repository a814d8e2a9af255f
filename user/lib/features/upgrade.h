/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * libxrl, features: the hitless upgrade (upgrade.c).
 */
#ifndef XRL_FEATURES_UPGRADE_H
#define XRL_FEATURES_UPGRADE_H

#include "xdp_rl_common.h"

struct xrl;

/* The hitless upgrade (README, "Upgrading"):
 * This build's program takes over the pinned maps and links of a running
 * one: refused, with nothing changed, unless the running program has this
 * build's XRL_LAYOUT_VERSION and every pinned map matches this build's;
 * maps new in this build are created empty. Then every pinned link gets the
 * new program with one atomic bpf_link_update() (BPF_F_REPLACE: only if it
 * still runs the old one), and the program pin is replaced by a rename. On
 * success *out (if not NULL) is the locked handle on the new program. */
struct xrl_upgrade_report {
	struct xrl_build_info from;	/* the running build before */
	__u32 old_prog_id, new_prog_id;
	unsigned int links;		/* links moved to the new program */
	unsigned int maps_added;	/* maps new in this build, created empty */
};
int xrl_upgrade(const char *pin_dir, struct xrl_upgrade_report *r, struct xrl **out);
/* With the lock held: finish an upgrade that was killed part way (links on
 * the program pinned as its new one: the rest moved to it, the pins
 * renamed), or remove what one left that never served. A handle opened on
 * the old program switches to the new one. 1 finished one, 0 nothing to
 * finish, <0 error. xrl_upgrade() starts with it; attach and the daemon's
 * start call it too. */
int xrl_upgrade_recover(struct xrl *x);

/* Inside the library: an upgrade replaced the pinned program under this
 * handle (a daemon of the older build): if the pinned one runs on this
 * handle's very maps and has this layout, serve it from now on. 1 adopted,
 * 0 not. */
int xrl__adopt_upgraded(struct xrl *x);

#endif
