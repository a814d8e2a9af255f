/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * libxrl, features: a capture run through the real program (replay.c).
 * struct xrl_rule_entry is the model's.
 */
#ifndef XRL_FEATURES_REPLAY_H
#define XRL_FEATURES_REPLAY_H

#include <stddef.h>
#include "xdp_rl_common.h"
#include "model/rule.h"

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
	struct xrl_sc_stats sc;		/* a syn-cookies rule's SYN cookies */
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
	__u64 answered;		/* XDP_TX: answered in place (a SYN cookie, DNS slip): neither */
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

/* The same with flags. XRL_REPLAY_WALK: find the keys limited by reading
 * every key's count after every dropped frame, the whole hot-key cache
 * each time (the first implementation, ~100 frames a second, kept to check
 * the default path against: both give the same result). */
#define XRL_REPLAY_WALK	0x1
int xrl_replay_flags(const char *path, const struct xrl_rule_entry *rules, size_t n,
		     unsigned int flags, struct xrl_replay_result *out);

#endif
