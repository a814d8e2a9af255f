/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * libxrl's own shared parts: the handle, the map table, the error and
 * warning paths. Not installed, not for the CLI or the daemon.
 */
#ifndef XRL_INTERNAL_H
#define XRL_INTERNAL_H

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "libxrl.h"
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
#define LINK_PREFIX	"link_"
#define DAEMON_DIR	"daemon"	/* flocked by the daemon for its whole life */
#define SERVES_PREFIX	"if_"		/* DAEMON_DIR/if_NAME: an interface the daemon serves */
#define EVENTS_DIR	"events"	/* flocked by the reader of xrl_events_ctl */

enum {
	M_CONTROL, M_RULES4, M_RULES6, M_BUCKETS4, M_BUCKETS6, M_RULE_STATS, M_GLOBAL_STATS, M_IF_STATS,
	M_EVENTS_RLD, M_EVENTS_CTL, M_EVENT_STATS, M_EP4, M_EP6, M_EP_CLASS,
	M_FLEET_RULES, M_FLEET_KEYS4, M_FLEET_KEYS6, M_LEASES, M_RULE_SHARED, M_HOT, M_FLEET_SCRATCH,
	M__COUNT
};

/* pinned under these names (pins.c) */
extern const char *const xrl__map_names[M__COUNT];

struct xrl {
	char pin_dir[PATH_MAX];
	bool pinned;
	bool created;		/* load_object() pinned a new instance */
	bool created_dir;	/* and made the directory */
	bool new_pin[M__COUNT + 2];	/* pins it made: the maps, the program, its info */
	bool locked;
	int lock_fd;
	int prog_fd;
	int map_fd[M__COUNT];
	struct xdp_rl *skel;	/* when this handle loaded the object */
	struct xrl_control *ctrl;	/* mmap of the control block */
	struct xrl_lease *leases;	/* mmap of the fleet leases (fleet.c) */
	int ncpus;
	int daemon_fd;		/* the daemon's claim on the pin directory */
	bool own_prog_fd;	/* prog_fd adopted after an upgrade: closed apart */
	bool prog_pin_new;	/* an upgrade pinned its program beside the old */
	/* the last published inner map of each map-in-map (M_RULES4, ...)
	 * this handle published or opened, and its id (rules.c) */
	pthread_mutex_t set_lock;
	int set_fd[M__COUNT];
	__u32 set_id[M__COUNT];
};


/* Void every hot-key cache entry (control.c): after a commit, a mode
 * change, a key reset. */
void xrl__cache_bump(struct xrl *x);
#define map_names xrl__map_names

/* shared between the parts */
void xrl__mask_bits(__u8 *out, int bits, int bytes);
void xrl__pin_path(const struct xrl *x, const char *name, char *buf, size_t len);
int xrl__map_max_entries(int fd);
int xrl__rules_install_empty(struct xrl *x, int family);
/* rules.c: a new fd on the map the one-entry map-in-map x->map_fd[which]
 * publishes, and on the published trie of a family; -ENOENT when none is
 * published. Publish inner_fd in it (and pin it as DIR/NAME_set); is this
 * the name of such a pin; pin the published sets where their pins are
 * missing or stale (best effort); close the handle's descriptors of them. */
int xrl__published_fd(struct xrl *x, int which);
int xrl__rules_fd(struct xrl *x, int family);
int xrl__publish_set(struct xrl *x, int which, int inner_fd);
bool xrl__set_pin_name(const char *name);
void xrl__sets_pin(struct xrl *x);
void xrl__sets_close(struct xrl *x);
void xrl__set_unpin(struct xrl *x, int which);
int xrl__events_claim(struct xrl *x);
/* upgrade.c: the build a program carries (-ENOENT: none); refuse another
 * layout; the pinned maps against this build's; adopt an upgraded program */
int xrl__build_info_of(struct xrl *x, int prog_fd, struct xrl_build_info *bi);
int xrl__layout_check(struct xrl *x, int prog_fd, const char *what);
int xrl__upgrade_precheck(struct xrl *x);
int xrl__adopt_upgraded(struct xrl *x);
/* pins.c: load this build on the pinned maps, its program pinned at prog_pin */
int xrl__load_upgrade(struct xrl *x, const char *prog_pin, unsigned int *maps_added);
#define mask_bits xrl__mask_bits
#define pin_path xrl__pin_path
#define map_max_entries xrl__map_max_entries
#define rules_install_empty xrl__rules_install_empty
#define published_fd xrl__published_fd
#define publish_set xrl__publish_set
#define rules_fd xrl__rules_fd
/* endpoint rules (endpoints.c): read back, appending; build and publish */
int xrl__endpoints_read(struct xrl *x, struct xrl_rule_entry **v, size_t *n, size_t *cap);
int xrl__endpoints_commit(struct xrl *x, const struct xrl_rule_entry *v, size_t n);
/* the endpoint classes and the set check: model/epclass.h */
#include "model/epclass.h"

#endif
