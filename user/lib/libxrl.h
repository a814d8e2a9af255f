/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * libxrl: every map and attach operation of xdp-rl. The CLI and the daemon
 * are thin layers on top of it. This is their umbrella: it includes the
 * headers of the layers (base, model, maps, fleet's view, features); no file
 * of the library includes it.
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

/* The version of this build (the Makefile's VERSION: `git describe`, or
 * its RELEASE outside a git clone). */
const char *xrl_version(void);

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

/* ---- attach ---- */
enum xrl_xdp_mode {
	XRL_XDP_AUTO = 0,
	XRL_XDP_NATIVE,
	XRL_XDP_GENERIC,
	XRL_XDP_UNKNOWN,
};

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

/* The map layer, the fleet as the CLI shows it, the features. */
#include "maps/xrl.h"
#include "maps/rules.h"
#include "maps/stats.h"
#include "maps/events.h"
#include "maps/attach.h"
#include "maps/kernel.h"
#include "fleet/view.h"
#include "features/upgrade.h"
#include "features/restore.h"
#include "features/replay.h"

#endif
