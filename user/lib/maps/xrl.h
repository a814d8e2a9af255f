/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * libxrl, the map layer: the handle on an instance of xdp-rl (instance.c),
 * its pin-directory lock (lock.c), the build it runs (layout.c), the mode,
 * the clock and the heartbeat (control.c), the daemon's claims (claims.c)
 * and purge.
 *
 * Functions return 0 or a negative errno; on failure xrl_errmsg() says what
 * went wrong in words an operator can act on.
 */
#ifndef XRL_MAPS_XRL_H
#define XRL_MAPS_XRL_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include "xdp_rl_common.h"
#include "base/log.h"

#define XRL_DEFAULT_PIN_DIR	"/sys/fs/bpf/xdp-rl"

struct xrl;

struct xrl_open_opts {
	const char *pin_dir;	/* NULL: XRL_DEFAULT_PIN_DIR */
	bool create;		/* load and pin when nothing is pinned yet */
	bool no_pin;		/* private, unpinned maps (tests, tools) */
	bool test_clock;	/* the program reads control->test_now_ns */
	__u32 keys;		/* bucket table size; 0: existing or default */
	__u32 bans;		/* ban table size, per family; 0: existing or default */
	__u32 syn_verified;	/* SYN cookies' verified table size; 0: existing or default */
	bool no_lock;		/* readers: take no lock at all (each map element
				 * is read atomically; nothing is held while printing) */
	bool pins_only;		/* the directory and its lock, nothing loaded or
				 * opened: enough for xrl_purge(), even when some
				 * pins are missing */
};

/* How long xrl_open() and xrl_lock() wait for the pin-directory lock:
 * well under the daemon's default watchdog, so no command stalls it. */
#define XRL_LOCK_WAIT_MS	2000

int xrl_open(const struct xrl_open_opts *o, struct xrl **out);
void xrl_close(struct xrl *x);
const char *xrl_pin_dir(const struct xrl *x);
/* This handle loaded and pinned a new instance (the directory was empty or
 * did not exist). A command that then fails calls xrl_discard(). */
bool xrl_created(const struct xrl *x);
/* Remove what xrl_open() created: the pins it made and the directory when
 * it made it. Only with the lock held; nothing when !xrl_created(). */
int xrl_discard(struct xrl *x);
/* A private instance (no_pin) this handle loaded, back to the state
 * xrl_open() left it in, without loading the program again: for tests that
 * run many short sequences, each on a fresh instance (testreset.c). */
int xrl_test_reset(struct xrl *x);
int xrl_prog_fd(const struct xrl *x);
/* The tc ingress program (hook tc). A private instance loads it at the
 * first call (on its maps: a second verification, which XDP-only users
 * never pay); a pinned one has it once a tc hook was attached. -1 (said by
 * xrl_errmsg() when a load failed) when there is none. */
int xrl_tc_prog_fd(struct xrl *x);
/* A pinned instance's tc program loaded (and pinned) now if it is not yet,
 * for a caller about to give up the rights a load takes (the daemon with a
 * hook tc interface that may appear only later): 0, or an error, said.
 * Only with the lock held. */
int xrl_tc_prepare(struct xrl *x);
/* The build and layout version the handle's program carries ("unknown",
 * layout 0: a build from before layout versions). */
int xrl_build_info(struct xrl *x, struct xrl_build_info *bi);

/* The mode, the clock, the heartbeat, the lock. */
int xrl_mode_set(struct xrl *x, enum xrl_mode mode);
enum xrl_mode xrl_mode_get(struct xrl *x);
/* The optional steps the active rule set uses (XRL_FEAT_*, the control
 * block's features word, which the rule commit writes). */
__u32 xrl_features_get(struct xrl *x);
const char *xrl_mode_name(enum xrl_mode m);
/* The data path's clock now (the test clock when loaded with one). */
__u64 xrl_now_ns(struct xrl *x);
/* The clock of a rule's buckets now: the precise one for a rule that meters
 * on it (xrl_rule.precise), which stamps its buckets up to a tick ahead of
 * xrl_now_ns(); else xrl_now_ns(). */
__u64 xrl_rule_now_ns(struct xrl *x, const struct xrl_rule *r);
void xrl_test_clock_set(struct xrl *x, __u64 ns);
/* The daemon's heartbeat: now, the period of its heartbeats (0: it stops
 * heartbeating) and the watchdog time (0: none). */
void xrl_heartbeat(struct xrl *x, __u32 interval_ms, __u64 watchdog_ns);
/* Age of the last heartbeat in ns, or -1 when there never was one. */
long long xrl_heartbeat_age(struct xrl *x);
/* A daemon heartbeats: the last heartbeat is at most three of its periods
 * old (plus the coarse clock's slack). Independent of the watchdog. */
bool xrl_heartbeating(struct xrl *x);
#define XRL_HEARTBEAT_SLACK_NS	50000000ULL
/* The pin-directory lock, for writers, held only around their map and pin
 * operations. xrl_open() returns with it held unless o->no_lock; it waits
 * at most XRL_LOCK_WAIT_MS, then fails with -EBUSY naming the holder. */
int xrl_lock(struct xrl *x);
/* The same, never waiting: -EBUSY while another process holds it. */
int xrl_trylock(struct xrl *x);
void xrl_unlock(struct xrl *x);
struct xrl_control *xrl_control(struct xrl *x);

/* Remove every pin, when no interface is attached any more and no daemon
 * serves the directory (else -EBUSY naming them; the daemon's own handle
 * may purge). */
int xrl_purge(struct xrl *x);

/* The daemon. */
/* One daemon per pin directory, for its whole life: an flock held until
 * xrl_close(). -EBUSY when another daemon holds it (*holder: its pid, or 0
 * when unknown). */
int xrl_daemon_claim(struct xrl *x, pid_t *holder);
/* The daemon names the interfaces it serves (all of them, each time; n 0
 * at its stop), so that xdp-rlctl can tell a detach that it would undo. */
int xrl_daemon_serves_set(struct xrl *x, const char *const *names, size_t n);
/* 1 when a running daemon serves IFNAME (*pid: its pid, -1 unknown). */
int xrl_daemon_serves(struct xrl *x, const char *ifname, pid_t *pid);

#endif
