/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The map layer's own parts: the handle, the map table, the names under the
 * pin directory, and what its files share. Not installed, not for the CLI
 * or the daemon.
 */
#ifndef XRL_INTERNAL_H
#define XRL_INTERNAL_H

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "base/log.h"
#include "base/strict.h"
#include "base/version.h"
#include "model/addr.h"
#include "model/rule.h"
#include "maps/xrl.h"
#include "maps/rules.h"
#include "maps/stats.h"
#include "maps/events.h"
#include "maps/bans.h"
#include "maps/attach.h"
#include "maps/sets.h"
#include "xrl_meter.h"
#include "xdp_rl.skel.h"
#include "model/words.h"
#include "base/paths.h"

#define PROG_PIN	"xdp_rl_prog"
#define PROG_PIN_NEW	"xdp_rl_prog_new"	/* an upgrade's, until renamed (bpffs: no dots) */
/* The program's struct xrl_build_info map, pinned beside it: reading it by
 * the program's map ids would need CAP_SYS_ADMIN (BPF_MAP_GET_FD_BY_ID). */
#define INFO_PIN	"xrl_info"
#define INFO_PIN_NEW	"xrl_info_new"
/* The same object's tc ingress program (hook tc), loaded by the first
 * attach at tc (tcprog.c) and pinned beside the XDP one, so that a later
 * command attaches it and an upgrade replaces it too; absent while no tc
 * hook has needed it. */
#define TC_PROG_PIN	"xrl_tc_prog"
#define TC_PROG_PIN_NEW	"xrl_tc_prog_new"
#define LINK_PREFIX	"link_"	/* link_IFNAME: an XDP or a tcx link, one per interface */
/* hook tc without tcx (attach_tc.c): the program pinned as the record of a
 * clsact filter; tcq_: xdp-rl created the clsact qdisc too */
#define TCF_PREFIX	"tcf_"
#define TCQ_PREFIX	"tcq_"
#define XRL_TC_HANDLE	0x5852	/* the filter's handle ("XR") */
#define XRL_TC_PRIO	1	/* and priority: the first */
#define DAEMON_DIR	"daemon"	/* flocked by the daemon for its whole life */
#define SERVES_PREFIX	"if_"		/* DAEMON_DIR/if_NAME: an interface the daemon serves */
#define EVENTS_DIR	"events"	/* flocked by the reader of xrl_events_ctl */
#define CAPTURE_DIR	"capture"	/* flocked by the capture that runs (capture.c) */

enum {
	M_CONTROL, M_RULES4, M_RULES6, M_BUCKETS4, M_BUCKETS6, M_RULE_STATS, M_GLOBAL_STATS, M_IF_STATS,
	M_EVENTS_RLD, M_EVENTS_CTL, M_EVENT_STATS, M_EP4, M_EP6, M_EP_CLASS,
	M_FLEET_RULES, M_FLEET_KEYS4, M_FLEET_KEYS6, M_LEASES, M_RULE_SHARED, M_HOT, M_FLEET_SCRATCH,
	M_BANS4, M_BANS6, M_BAN_STATS, M_BAN_TOTALS, M_OFFENDERS, M_BAN_SCRATCH,
	M_SC_VERIFIED, M_SC_STATS,
	M_SETS, M_SET_RULES, M_SET_META,
	M_ANSWER_CAP,
	M_BAN_HOT,
	M__COUNT
};

/* pinned under these names (pindir.c) */
extern const char *const xrl__map_names[M__COUNT];

struct xrl {
	char pin_dir[PATH_MAX];
	bool pinned;
	bool created;		/* xrl__load_object() pinned a new instance */
	bool created_dir;	/* and made the directory */
	/* pins it made: the maps, the program, its info, the tc program */
	bool new_pin[M__COUNT + 3];
	bool locked;
	int lock_fd;
	int prog_fd;
	int tc_prog_fd;		/* the tc program; -1: none loaded (yet) */
	int map_fd[M__COUNT];
	struct xdp_rl *skel;	/* when this handle loaded the object */
	struct xrl_control *ctrl;	/* mmap of the control block */
	struct xrl_lease *leases;	/* mmap of the fleet leases (fleet_map.c) */
	struct xrl_ban_totals *ban_totals;	/* mmap of the ban totals (bans.c) */
	int ncpus;
	int daemon_fd;		/* the daemon's claim on the pin directory */
	bool own_prog_fd;	/* prog_fd adopted after an upgrade: closed apart */
	bool own_tc_fd;		/* tc_prog_fd loaded or opened on demand (tcprog.c): closed apart */
	bool prog_pin_new;	/* an upgrade pinned its program beside the old */
	/* the last published inner map of each map-in-map (M_RULES4, ...)
	 * this handle published or opened, and its id (publish.c) */
	pthread_mutex_t set_lock;
	int set_fd[M__COUNT];
	__u32 set_id[M__COUNT];
	/* the program that writes userspace's ban events (events.c): loaded
	 * at the first one; emit_failed: it could not be, not tried again */
	struct xrl_emit *emit;
	bool emit_failed;
	/* 1 + the highest rule slot this handle handed out since the load or
	 * the last xrl_test_reset(): the arrays indexed by slot are written
	 * below it only (testreset.c) */
	__u32 slot_hw;
};


/* The pin directory (pindir.c): the path of a name under it; is it there;
 * the pin directory on a bpffs (the default one mounted when missing and
 * create) and safe from other users; a permission error said as one, and
 * is it one; "xdp-rlctl [--pin-dir DIR]", to tell the operator. */
void xrl__pin_path(const struct xrl *x, const char *name, char *buf, size_t len);
bool xrl__pin_exists(const struct xrl *x, const char *name);
int xrl__ensure_bpffs(const char *pin_dir, bool create);
int xrl__pin_dir_safe(const char *pin_dir);
int xrl__perm_denied(int err, const char *what, const char *path);
bool xrl__is_perm(int err);
void xrl__ctl_cmd(const struct xrl *x, char *buf, size_t len);

/* The lock (lock.c): take the pin-directory lock, waiting at most
 * XRL_LOCK_WAIT_MS; the pid holding an flock on fd's file (0: unknown). */
int xrl__lock_dir(struct xrl *x);
int xrl__flock_holder(int fd);

/* The object and the layout (layout.c): the ids of the maps a program
 * uses; a map's id (0: unknown); the build a program carries (-ENOENT:
 * none); refuse another layout; a map's size; load this build (upgrade: on
 * the pinned maps, checked against this build's first) and pin its program
 * at prog_pin; the same for an upgrade, counting the maps it created; open
 * the pinned program and maps. */
int xrl__prog_map_ids(int prog_fd, __u32 *ids, __u32 max, __u32 *n);
int xrl__map_id(int fd);
int xrl__build_info_of(struct xrl *x, int prog_fd, struct xrl_build_info *bi);
int xrl__layout_check(struct xrl *x, int prog_fd, const char *what);
int xrl__map_max_entries(int fd);
int xrl__load_object(struct xrl *x, const struct xrl_open_opts *o, const char *prog_pin,
		     bool upgrade);
/* The share of the ban tables that rules' bans may hold, in the ban totals
 * (set at the load, and by xrl_test_reset()). */
void xrl__bans_reserve(struct xrl *x);
int xrl__load_upgrade(struct xrl *x, const char *prog_pin, unsigned int *maps_added);
int xrl__reuse_pins(struct xrl *x, const struct xrl_open_opts *o);

/* The tc program on demand (tcprog.c): make x->tc_prog_fd the instance's
 * tc program, the pinned one or, when there is none, this build's loaded
 * on the instance's maps and pinned (refused when the pinned program is
 * another build): 1 loaded now, 0 there already, or a negative error,
 * said. Unload the one xrl__tc_load() just loaded (its pin removed): an
 * attach that failed after it. */
int xrl__tc_load(struct xrl *x);
void xrl__tc_unload(struct xrl *x);

/* Load the skeleton (kernel.c): when it fails on a kernel that lacks a
 * helper or map type the program uses, lacks says which (and libbpf's log
 * of the failure is dropped, unless XRL_DEBUG is set); else lacks is "". */
int xrl__skel_load(struct xdp_rl *skel, char *lacks, size_t len);

/* The claims (claims.c): the pid holding DIR/NAME (0: none, -1: held, by
 * whom unknown); the served-interface names removed but keep[nkeep]; the
 * daemon's claim taken (again); is it still the directory at DIR/daemon;
 * the events reader's claim, an fd held open for as long as it reads. */
pid_t xrl__claim_holder(struct xrl *x, const char *name);
void xrl__serves_clear(struct xrl *x, const char *const *keep, size_t nkeep);
int xrl__claim_daemon(struct xrl *x, pid_t *holder);
bool xrl__claim_intact(struct xrl *x);
int xrl__events_claim(struct xrl *x);

/* The published sets (publish.c): a new fd on the map the one-entry
 * map-in-map x->map_fd[which] publishes, and on the published trie of a
 * family; -ENOENT when none is published. Publish inner_fd in it (and pin
 * it as DIR/NAME_set); is this the name of such a pin; pin the published
 * sets where their pins are missing or stale (best effort); remove one's
 * pin; close the handle's descriptors of them. A fresh, empty rule trie of
 * a family; publish one; publish an empty one when none is. */
int xrl__published_fd(struct xrl *x, int which);
int xrl__rules_fd(struct xrl *x, int family);
int xrl__publish_set(struct xrl *x, int which, int inner_fd);
bool xrl__set_pin_name(const char *name);
void xrl__sets_pin(struct xrl *x);
void xrl__set_unpin(struct xrl *x, int which);
void xrl__sets_close(struct xrl *x);
int xrl__rules_create(int family);
int xrl__rules_publish(struct xrl *x, int family, int inner_fd);
int xrl__rules_install_empty(struct xrl *x, int family);
/* Return once every packet the program is running now has finished (an RCU
 * grace period: one update of a map-in-map). */
int xrl__programs_wait(struct xrl *x);

/* The bans' events from userspace (events.c): can they be sent (the
 * program that writes them loaded, once per handle); send one, a ban of
 * family's addr/plen (kind XRL_EV_BANNED or XRL_EV_UNBANNED, cause enum
 * xrl_event_cause): 0 written, 1 left out by the events' cap, or a
 * negative errno; unload it. */
bool xrl__ban_events_ready(struct xrl *x);
int xrl__ban_event(struct xrl *x, int kind, int family, const __u8 *addr, __u8 plen,
		   const struct xrl_ban *b, __u32 cause);
void xrl__ban_events_close(struct xrl *x);
/* hook tc through a clsact filter (attach_tc.c): is the fallback forced
 * (XRL_TC_LEGACY=1: tests on a kernel with tcx); IFNAME's record
 * (TCQ_PREFIX, TCF_PREFIX, NULL: none); the program the filter of
 * xdp-rl's handle runs on IFINDEX (0: none); attach; detach (the qdisc too
 * when xdp-rl created it and no filter is left on it). */
bool xrl_tc_legacy_forced(void);
const char *xrl__tc_legacy_record(const struct xrl *x, const char *ifname);
__u32 xrl__tc_legacy_prog(unsigned int ifindex);
int xrl__tc_legacy_attach(struct xrl *x, const char *ifname, unsigned int ifindex);
int xrl__tc_legacy_detach(struct xrl *x, const char *ifname, const char *record);
/* A per-CPU array entry of nfields counters, summed over the CPUs
 * (stats.c). */
int xrl__percpu_sum(struct xrl *x, int map, __u32 idx, __u64 *sum, size_t nfields);

/* Void every hot-key cache entry (control.c): after a commit, a mode
 * change, a key reset. */
void xrl__cache_bump(struct xrl *x);

/* The bits of a prefix length as a mask of bytes (model/addr.c). */
void xrl__mask_bits(__u8 *out, int bits, int bytes);

/* endpoint rules (endpoints.c): read back, appending; build and publish */
int xrl__endpoints_read(struct xrl *x, struct xrl_rule_entry **v, size_t *n, size_t *cap);
int xrl__endpoints_commit(struct xrl *x, const struct xrl_rule_entry *v, size_t n);
/* set rules (sets.c): their sets' slots resolved; built and published;
 * read back, appending; a set's slot by name (said when none); a slot's
 * name */
int xrl__set_rules_resolve(struct xrl *x, struct xrl_rule_entry *v, size_t n);
int xrl__set_rules_commit(struct xrl *x, const struct xrl_rule_entry *v, size_t n);
int xrl__set_rules_read(struct xrl *x, struct xrl_rule_entry **v, size_t *n, size_t *cap);
int xrl__set_slot(struct xrl *x, const char *name);
int xrl__set_name(struct xrl *x, __u32 slot, char *buf, size_t len);
/* the set rule of an address, in the data path's order (-ENOENT: none);
 * does a set hold an address, as the data path sees it */
int xrl__set_rule_match(struct xrl *x, int family, const __u8 *addr, struct xrl_rule_entry *out);
bool xrl__set_holds(struct xrl *x, __u32 slot, int family, const __u8 *addr);
/* the endpoint classes and the set check: model/epclass.h */
#include "model/epclass.h"

#endif
