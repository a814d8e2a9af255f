/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * libxrl: every map and attach operation of xdp-rl. The CLI and the daemon
 * are thin layers on top of it.
 *
 * Functions return 0 or a negative errno; on failure xrl_errmsg() says what
 * went wrong in words an operator can act on.
 */
#ifndef LIBXRL_H
#define LIBXRL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <net/if.h>
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
	bool no_lock;		/* readers: take no lock at all (each map element
				 * is read atomically; nothing is held while printing) */
	bool pins_only;		/* the directory and its lock, nothing loaded or
				 * opened: enough for xrl_purge(), even when some
				 * pins are missing */
};

/* How long xrl_open() and xrl_lock() wait for the pin-directory lock:
 * well under the daemon's default watchdog, so no command stalls it. */
#define XRL_LOCK_WAIT_MS	2000

/* The version of this build (the Makefile's VERSION: `git describe`, or
 * its RELEASE outside a git clone). */
const char *xrl_version(void);

int xrl_open(const struct xrl_open_opts *o, struct xrl **out);
void xrl_close(struct xrl *x);
const char *xrl_pin_dir(const struct xrl *x);
/* This handle loaded and pinned a new instance (the directory was empty or
 * did not exist). A command that then fails calls xrl_discard(). */
bool xrl_created(const struct xrl *x);
/* Remove what xrl_open() created: the pins it made and the directory when
 * it made it. Only with the lock held; nothing when !xrl_created(). */
int xrl_discard(struct xrl *x);
int xrl_prog_fd(const struct xrl *x);
/* The build and layout version the handle's program carries ("unknown",
 * layout 0: a build from before layout versions). */
int xrl_build_info(struct xrl *x, struct xrl_build_info *bi);

/* ---- rules ---- */

/* A rule with its prefix, as the operator sees it. */
struct xrl_rule_entry {
	__u8 family;		/* 4 or 6 */
	__u8 prefix_len;
	__u8 addr[16];		/* network order */
	struct xrl_rule r;	/* id, action, key_len (0 = default), rate, burst, on_failure */
};

/* Check a whole rule set without touching the system: ranges, duplicate
 * prefixes and ids. On failure *bad is the index of the offending rule. */
int xrl_rules_validate(struct xrl_rule_entry *v, size_t n, size_t *bad);
/* Every error of the set, each through report(ctx, index, first, message):
 * first is the index of the rule a duplicate repeats (-1: none). Returns the
 * first error, or 0. */
typedef void (*xrl_rules_report)(void *ctx, size_t bad, long first, const char *msg);
int xrl_rules_check_all(struct xrl_rule_entry *v, size_t n, xrl_rules_report report, void *ctx);

/* Fill the derived fields (interval, limit, key mask, default key_len) and
 * check the ranges. Returns 0 or -EINVAL with xrl_errmsg() set. */
int xrl_rule_prepare(struct xrl_rule_entry *e);
/* The same, saying which field is wrong (for a parser that knows where
 * each field was written). */
enum xrl_rule_field {
	XRL_FIELD_ACTION, XRL_FIELD_KEYLEN, XRL_FIELD_RATE, XRL_FIELD_BURST,
	XRL_FIELD_AGGREGATE, XRL_FIELD_NEWKEYS,
};
int xrl_rule_check(struct xrl_rule_entry *e, enum xrl_rule_field *bad);
/* An endpoint rule (proto ...): checked besides the source rule. */
bool xrl_rule_is_endpoint(const struct xrl_rule *r);

/* The active rule set, sorted by id. Free *out with free(). */
int xrl_rules_get(struct xrl *x, struct xrl_rule_entry **out, size_t *n);

/* Replace the whole rule set in one transaction: packets see the old set or
 * the new one, never a mix. Rules that did not change keep their buckets
 * and counters. Ids of 0 are assigned. On failure nothing changed. */
int xrl_rules_commit(struct xrl *x, struct xrl_rule_entry *v, size_t n);

/* The active rule matching a source address (most specific prefix). */
int xrl_rule_match(struct xrl *x, int family, const __u8 *addr,
		   struct xrl_rule_entry *out);
/* The endpoint rules of action limit whose prefix covers a source address:
 * each may hold a key of it (which one meters a packet depends on its
 * protocol and port). *out is malloc'd (free it), ordered by id. */
int xrl_endpoint_rules_covering(struct xrl *x, int family, const __u8 *addr,
				struct xrl_rule_entry **out, size_t *n);

/* ---- mode, clock ---- */
int xrl_mode_set(struct xrl *x, enum xrl_mode mode);
enum xrl_mode xrl_mode_get(struct xrl *x);
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
void xrl_unlock(struct xrl *x);
struct xrl_control *xrl_control(struct xrl *x);

/* ---- counters ---- */
int xrl_rule_stats_get(struct xrl *x, __u32 slot, struct xrl_rule_stats *sum);
int xrl_global_stats_get(struct xrl *x, struct xrl_global_stats *sum);
/* The program's own cost: the kernel's BPF run-time statistics, counted
 * only while enabled (a process holds a BPF_STATS_RUN_TIME fd, or the sysctl
 * kernel.bpf_stats_enabled is 1). Both counts persist with the program. */
struct xrl_prog_runtime {
	__u64 run_time_ns;	/* time in the program, over its counted runs */
	__u64 run_cnt;		/* runs counted */
	/* with `who` only: */
	bool enabled;		/* the kernel counts now */
	bool by_sysctl;		/* kernel.bpf_stats_enabled is 1 */
	int holder_pid;		/* another process holding a stats fd; 0: none */
	char holder_comm[16];	/* its command name (/proc/PID/comm), "" unknown */
};
int xrl_prog_runtime_get(struct xrl *x, bool who, struct xrl_prog_runtime *rt);
/* Enable them for as long as the returned fd is open (xdp-rld holds it for
 * its life): an fd, or a negative errno. */
int xrl_runtime_stats_enable(void);
/* Verdicts on packets received by the interface of this ifindex (its slot:
 * ifindex % XRL_IF_SLOTS, shared with any interface XRL_IF_SLOTS apart). */
int xrl_if_stats_get(struct xrl *x, __u32 ifindex, struct xrl_if_stats *sum);

/* ---- buckets ---- */
/* A bucket's key: a rule version's generation and the masked source. */
struct xrl_key {
	int family;
	__u32 gen;
	__u8 addr[16];
};

typedef int (*xrl_bucket_cb)(const struct xrl_key *k, const struct xrl_bucket *b,
			     void *ctx);
/* Every bucket of both families' tables. */
int xrl_buckets_walk(struct xrl *x, xrl_bucket_cb cb, void *ctx);
int xrl_bucket_get(struct xrl *x, const struct xrl_key *k, struct xrl_bucket *b);
/* The bucket as its table holds it, without the drops the hot-key cache
 * still holds for it (xrl_bucket_get() reads the whole cache for those):
 * one look-up, for a question asked of many keys (when was it last seen). */
int xrl_bucket_peek(struct xrl *x, const struct xrl_key *k, struct xrl_bucket *b);
void xrl_key_of(struct xrl_key *k, const struct xrl_rule *r, int family,
		const __u8 *addr);
/* Forgive a key: a fresh, full bucket for the algorithm of its rule r (the
 * counters dropped and last seen kept). -ENOENT when it has no bucket. */
/* What a key may still pass now under its rule: GCRA tokens, or cost
 * units left in the window(s); and the most it can have (burst, or the
 * limit per window). */
__u64 xrl_bucket_left(const struct xrl_rule *r, const struct xrl_bucket *b, __u64 now_ns);
__u64 xrl_rule_capacity(const struct xrl_rule *r);
/* A key's drops are would-drops (counted, passed): its rule's dry-run or
 * the data path's dry-run mode. Every per-key view says so. */
bool xrl_key_dry_run(const struct xrl_rule *r, enum xrl_mode mode);
int xrl_bucket_reset(struct xrl *x, const struct xrl_rule *r, const struct xrl_key *k);
/* Forget a key: delete its bucket. -ENOENT when it has none. */
int xrl_bucket_del(struct xrl *x, const struct xrl_key *k);
/* Keys with a bucket in one family's table (4 or 6). */
int xrl_keys_tracked_family(struct xrl *x, int family, unsigned long long *n);
/* Buckets evicted (or deleted) since the program was loaded, estimated:
 * the keys inserted less those tracked now. */
unsigned long long xrl_keys_evicted_estimate(const struct xrl_global_stats *g,
					     unsigned long long tracked);
/* The size of one family's bucket table (4 or 6). */
__u32 xrl_keys_capacity_family(struct xrl *x, int family);

/* ---- live events (README, "Live events") ---- */
/* Two rings, one per reader: the daemon's and xdp-rlctl events'. */
enum xrl_events_reader { XRL_EVENTS_RLD, XRL_EVENTS_CTL };
typedef int (*xrl_event_cb)(const struct xrl_event *e, void *ctx);
struct xrl_events;
/* Follow one ring: cb for each event, from xrl_events_poll() or
 * xrl_events_consume(). What the ring holds already (written while nobody
 * read it) is discarded first. XRL_EVENTS_CTL is one reader at a time (a
 * claim on DIR/events): -EBUSY naming the other one. */
int xrl_events_open(struct xrl *x, enum xrl_events_reader who, xrl_event_cb cb, void *ctx,
		    struct xrl_events **out);
/* An fd that polls readable when events are there. */
int xrl_events_fd(const struct xrl_events *ev);
/* Events handled (>= 0), or a negative errno (-EINTR on a signal). */
int xrl_events_poll(struct xrl_events *ev, int timeout_ms);
int xrl_events_consume(struct xrl_events *ev);
void xrl_events_close(struct xrl_events *ev);
/* The per-CPU event counters, summed (the cap's state left out). */
int xrl_event_stats_get(struct xrl *x, struct xrl_event_stats *sum);
/* "limited", "unlimited" */
const char *xrl_event_kind_name(int kind);
/* The key: "198.18.0.1" for a whole address, else "198.18.0.0/24". */
void xrl_event_key_format(const struct xrl_event *e, char *buf, size_t len);
/* The wall clock (ns since the epoch) of a data-path time. */
__u64 xrl_event_wall_ns(struct xrl *x, __u64 ts_ns);

/* ---- attach ---- */
enum xrl_xdp_mode {
	XRL_XDP_AUTO = 0,
	XRL_XDP_NATIVE,
	XRL_XDP_GENERIC,
	XRL_XDP_UNKNOWN,
};

struct xrl_attachment {
	char ifname[IF_NAMESIZE];
	__u32 ifindex;		/* 0 when the interface is gone */
	__u32 prog_id;
	enum xrl_xdp_mode mode;
};

const char *xrl_xdp_mode_name(enum xrl_xdp_mode m);
/* What holds an interface's XDP hook. */
struct xrl_xdp_holder {
	__u32 prog_id;		/* 0: nothing attached */
	char name[16];		/* "" when it cannot be read (by id: CAP_SYS_ADMIN) */
	enum xrl_xdp_mode mode;
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
int xrl_detach(struct xrl *x, const char *ifname);
/* Is GRO on for IFNAME? 1 on, 0 off, a negative errno when unknown. In
 * generic mode XDP sees GRO's aggregates: a packet rule counts their
 * segments as at least their length over the MTU (a lower bound). */
int xrl_iface_gro(const char *ifname);
int xrl_attachments(struct xrl *x, struct xrl_attachment **out, size_t *n);
/* "eth1, eth2 (gone)": the interfaces of xrl_attachments(). */
void xrl_attachments_names(const struct xrl_attachment *a, size_t n, char *buf, size_t len);
/* Remove every pin, when no interface is attached any more and no daemon
 * serves the directory (else -EBUSY naming them; the daemon's own handle
 * may purge). */
int xrl_purge(struct xrl *x);

/* ---- the daemon ---- */
/* One daemon per pin directory, for its whole life: an flock held until
 * xrl_close(). -EBUSY when another daemon holds it (*holder: its pid, or 0
 * when unknown). */
int xrl_daemon_claim(struct xrl *x, pid_t *holder);
/* The daemon names the interfaces it serves (all of them, each time; n 0
 * at its stop), so that xdp-rlctl can tell a detach that it would undo. */
int xrl_daemon_serves_set(struct xrl *x, const char *const *names, size_t n);
/* 1 when a running daemon serves IFNAME (*pid: its pid, -1 unknown). */
int xrl_daemon_serves(struct xrl *x, const char *ifname, pid_t *pid);

/* ---- replay: a capture through the real program ---- */
/*
 * Run the frames of a capture (pcap or pcapng, read with libpcap) through
 * the XDP program with BPF_PROG_TEST_RUN, on a private, unpinned instance
 * loaded with the test clock (no interface, no pin touched), under the
 * given rules in enforce mode. Each frame's capture timestamp, in epoch ns,
 * is the program's clock when it runs.
 *
 * Link types: Ethernet as it is; Linux cooked captures (SLL, SLL2) and raw
 * IP (RAW, IPV4, IPV6) get an Ethernet header built from their protocol
 * field or IP version; any other link type is refused (-EPROTONOSUPPORT).
 * A frame shorter than an Ethernet header (14 bytes, after that) cannot be
 * run (the kernel refuses it): counted in skipped_short. A frame cut by the
 * snaplen whose captured bytes hold its IP header is run with zeros in
 * place of the bytes not captured, up to its length on the wire: the
 * program's length checks pass as they did on the wire, and the verdict
 * reads the headers only; one cut inside its headers is run as captured,
 * and the program finds it malformed (cut_in_headers). A frame longer than
 * XRL_REPLAY_MAX_FRAME (a GRO/TSO aggregate, a jumbo frame) is run with its
 * first XRL_REPLAY_MAX_FRAME bytes and its IP length lowered to match: the
 * same verdict, but bytes are counted as run.
 */
#define XRL_REPLAY_MAX_FRAME	3072

/* A key that would have been limited: its bucket dropped packets. */
struct xrl_replay_key {
	__u32 rule_id;
	__u8 key_len;
	int family;
	__u8 addr[16];		/* the key: the source masked to key_len */
	__u64 dropped;		/* packets its bucket dropped (would-drops: dry_run) */
	__u8 dry_run;		/* its rule's: the drops were would-drops, passed */
	__u64 first_drop_ns;	/* capture timestamps, epoch ns */
	__u64 last_drop_ns;
};

struct xrl_replay_rule {
	struct xrl_rule_entry rule;	/* id as given (or assigned) */
	struct xrl_rule_stats stats;	/* what the program counted */
};

struct xrl_replay_result {
	int linktype;		/* DLT_* of the capture */
	char linktype_name[32];
	__u64 frames;		/* records read */
	__u64 run;		/* run through the program */
	__u64 skipped_short;	/* shorter than 14 bytes: not run */
	__u64 truncated;	/* cut by the snaplen: zero-filled to their length */
	__u64 cut_in_headers;	/* of those, cut inside the headers: run as captured */
	__u64 oversize;		/* longer than XRL_REPLAY_MAX_FRAME: cut to it */
	__u64 converted;	/* given an Ethernet header (SLL, SLL2, raw IP) */
	__u64 clock_backwards;	/* frames stamped before the frame before them */
	__u64 first_ns, last_ns;	/* first and last timestamp, epoch ns */
	__u64 passed, dropped;	/* the program's verdicts */
	struct xrl_global_stats global;
	struct xrl_replay_rule *rules;	/* by id */
	size_t nrules;
	struct xrl_replay_key *keys;	/* by first drop */
	size_t nkeys;
	char stopped[256];	/* "": the whole file was read; else why not */
};

/* 0, or a negative errno with xrl_errmsg() set; free the result with
 * xrl_replay_free() (also after a failure). The rules are not changed. */
int xrl_replay(const char *path, const struct xrl_rule_entry *rules, size_t n,
	       struct xrl_replay_result *out);
void xrl_replay_free(struct xrl_replay_result *r);

/* ---- addresses ---- */
/* "198.18.0.0/15", "2001:db8::/32", or a bare address (a host prefix).
 * IPv4-mapped IPv6 addresses (::ffff:0:0/96) are refused: no packet the
 * program sees has one (IPv4 arrives as IPv4), so they would never match;
 * the message suggests the IPv4 form. */
int xrl_prefix_parse(const char *s, struct xrl_rule_entry *e);
int xrl_addr_parse(const char *s, int *family, __u8 *addr);
void xrl_prefix_format(const struct xrl_rule_entry *e, char *buf, size_t len);
void xrl_addr_format(int family, const __u8 *addr, char *buf, size_t len);
const char *xrl_action_name(int action);

/* ---- text ---- */
/* A strict decimal number in [min, max]: digits only, no sign, no spaces,
 * not empty. NULL on success, else what is wrong ("no sign allowed", ...). */
const char *xrl_dec_parse(const char *s, __u64 min, __u64 max, __u64 *out);
/* Cut an incomplete UTF-8 sequence off the end of s (after a truncating
 * snprintf), so a message never ends mid-character. */
void xrl_utf8_trim(char *s);

/* qsort() of n elements, n possibly 0 with v NULL (which qsort() itself
 * must not be given: its pointer is declared non-null; UBSan says so). */
static inline void xrl_sort(void *v, size_t n, size_t size,
			    int (*cmp)(const void *, const void *))
{
	if (n > 1)
		qsort(v, n, size, cmp);
}

/* ---- digests ---- */
/* SHA-256 of len bytes, and its 64 hex digits. */
void xrl_sha256(const void *data, size_t len, unsigned char out[32]);
void xrl_sha256_hex(const unsigned char d[32], char out[65]);

#include "features/upgrade.h"
#include "features/restore.h"

#endif
