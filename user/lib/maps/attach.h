/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * libxrl, the map layer: attach and detach (attach.c). enum xrl_xdp_mode
 * is the model's, beside its words (model/words.h).
 */
#ifndef XRL_MAPS_ATTACH_H
#define XRL_MAPS_ATTACH_H

#include <stddef.h>
#include <net/if.h>
#include "xdp_rl_common.h"
#include "model/words.h"

struct xrl;

struct xrl_attachment {
	char ifname[IF_NAMESIZE];
	__u32 ifindex;		/* 0 when the interface is gone */
	__u32 prog_id;
	enum xrl_xdp_mode mode;	/* XRL_XDP_UNKNOWN at tc */
	enum xrl_hook hook;	/* the link's: XDP or tc ingress (tcx) */
	/* at tc: its place in the interface's tcx ingress chain, 1 first (0:
	 * unknown: at XDP, in another namespace); when not first, the
	 * program that runs first (its name "" when it cannot be read) */
	__u32 tc_position;
	__u32 tc_first_id;
	char tc_first_name[16];
	bool tc_clsact;		/* at tc through a clsact filter (no tcx links) */
};

/* "xdp", "tc" */
const char *xrl_hook_name(enum xrl_hook h);

const char *xrl_xdp_mode_name(enum xrl_xdp_mode m);
/* What holds an interface's XDP hook. */
struct xrl_xdp_holder {
	__u32 prog_id;		/* 0: nothing attached */
	char name[16];		/* "" when it cannot be read (by id: CAP_SYS_ADMIN) */
	enum xrl_xdp_mode mode;
	bool dispatcher;	/* libxdp's multi-program dispatcher */
	char pin[128];		/* its pin directory, "" when not found */
};
/* 1 when an XDP program other than the one of the link pinned for IFNAME
 * under PIN_DIR (NULL: the default) is attached to IFNAME, *h naming it;
 * 0 when none is, or it is xdp-rl's own, or IFNAME does not exist. Reads
 * only: the start and --check ask it before anything is created. */
int xrl_xdp_foreign(const char *pin_dir, const char *ifname, struct xrl_xdp_holder *h);
/* "another XDP program (id 42, name xdp_pass, native mode)" */
void xrl_xdp_holder_format(const struct xrl_xdp_holder *h, char *buf, size_t len);
int xrl_attach(struct xrl *x, const char *ifname, enum xrl_xdp_mode mode,
	       enum xrl_xdp_mode *got);
/* Attach the tc ingress program to IFNAME (hook tc): a tcx link, first in
 * the interface's tcx chain, pinned as the XDP links are; whatever holds
 * the XDP hook or other tc programs is left as it is. */
int xrl_attach_tc(struct xrl *x, const char *ifname);
/* Put xdp-rl first again in IFNAME's tcx ingress chain, where another
 * program was attached before it later (BPF_F_BEFORE): 0 when it is first
 * already, 1 when it was moved (its link detached and made again first;
 * *gap_ns: how long packets passed unmetered meanwhile), or a negative
 * errno (-ENOENT: not attached there; a failure after the detach leaves it
 * detached, and says so). */
int xrl_tc_front(struct xrl *x, const char *ifname, __u64 *gap_ns);
/* Detach IFNAME, whichever hook its link is at. */
int xrl_detach(struct xrl *x, const char *ifname);
/* Is GRO on for IFNAME? 1 on, 0 off, a negative errno when unknown. In
 * generic mode XDP sees GRO's aggregates: a packet rule counts their
 * segments as at least their length over the MTU (a lower bound). */
int xrl_iface_gro(const char *ifname);
int xrl_attachments(struct xrl *x, struct xrl_attachment **out, size_t *n);
/* "eth1, eth2 (gone)": the interfaces of xrl_attachments(). */
void xrl_attachments_names(const struct xrl_attachment *a, size_t n, char *buf, size_t len);

#endif
