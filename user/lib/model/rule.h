/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * libxrl, pure values (rule.c): a rule as the operator writes it, checked
 * and derived in one place for every caller (the CLI's rule add, the
 * configuration reader, --check and the commit).
 */
#ifndef XRL_MODEL_RULE_H
#define XRL_MODEL_RULE_H

#include <stdbool.h>
#include <stddef.h>
#include "xdp_rl_common.h"

/* A rule with its prefix, as the operator sees it. */
struct xrl_rule_entry {
	__u8 family;		/* 4 or 6; 0: a set rule (@NAME, below) */
	__u8 prefix_len;
	__u8 addr[16];		/* network order */
	struct xrl_rule r;	/* id, action, key_len (0 = default), rate, burst, on_failure */
	/* a set rule (family 0): the set's name; its slot goes into r.set at
	 * commit (docs/sets.md) */
	char set[XRL_SET_NAME_MAX + 1];
};

/* Is it a rule that takes a set (rule add @NAME ...)? */
static inline bool xrl_rule_is_set(const struct xrl_rule_entry *e)
{
	return e->family == 0 && e->set[0];
}

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
	XRL_FIELD_DPORT,		/* ports for a protocol without them */
	XRL_FIELD_SYN,			/* syn for a protocol other than tcp */
	XRL_FIELD_WINDOW_BURST,		/* a burst for a window algorithm */
	XRL_FIELD_SCOPE,		/* scope fleet for a rule it cannot share */
	XRL_FIELD_BAN,			/* ban on a rule that is not metered, ban-max < ban */
	XRL_FIELD_SYNCOOKIES,		/* syn-cookies for a rule that cannot take them */
	XRL_FIELD_SLIP,			/* slip on a rule that cannot see DNS over UDP */
};
int xrl_rule_check(struct xrl_rule_entry *e, enum xrl_rule_field *bad);
/* What a parser saw written that the values cannot tell: a rule checked
 * with it is checked on its words (dport 0-65535 written is a dport, a
 * burst of 0 written is a burst); xrl_rule_check() goes by the values. */
struct xrl_rule_written {
	bool dport;
	bool burst;
	bool burst_sized;	/* the burst with a size unit (64kb) */
};
int xrl_rule_check_written(struct xrl_rule_entry *e, const struct xrl_rule_written *w,
			   enum xrl_rule_field *bad);
/* What scope fleet takes: a limit rule, a token bucket of packets, a
 * source rule. Part of the check above; a parser may ask it first. */
int xrl_rule_check_scope(const struct xrl_rule *r, enum xrl_rule_field *bad);
/* An endpoint rule (proto ...): checked besides the source rule. */
bool xrl_rule_is_endpoint(const struct xrl_rule *r);

/* The order that names a rule in a set (qsort() of pointers to entries):
 * family, prefix, then what an endpoint rule covers; equal: duplicates. */
int xrl_rule_cmp_prefix(const void *a, const void *b);
/* Rules without new-keys get the default for a bucket table of `table`
 * keys (at commit, when the table's size is known). */
void xrl_rules_newkeys_default(struct xrl_rule_entry *v, size_t n, int table);

#endif
