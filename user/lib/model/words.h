/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The vocabulary: the enum words of the rules, the modes and the attach
 * modes, one table each, for parsing, printing and hints alike.
 */
#ifndef XRL_MODEL_WORDS_H
#define XRL_MODEL_WORDS_H

#include <stdbool.h>
#include <stddef.h>

/* An enum word and its value: one row serves parsing, printing and hints. */
struct xrl_word {
	const char *name;
	long long value;
};

extern const struct xrl_word xrl_xdp_mode_words[];	/* native generic auto */
extern const struct xrl_word xrl_action_words[];	/* limit allow deny */
extern const struct xrl_word xrl_mode_words[];		/* enforce dry-run ... */
extern const struct xrl_word xrl_on_failure_words[];	/* open closed */
extern const struct xrl_word xrl_rate_unit_words[];	/* s min h, and aliases */
extern const struct xrl_word xrl_algo_words[];		/* token-bucket fixed-window sliding-window */
extern const struct xrl_word xrl_proto_words[];		/* tcp udp icmp icmpv6 */
extern const struct xrl_word xrl_scope_words[];		/* host fleet */

/* 0 and *value, or -EINVAL. */
int xrl_word_parse(const struct xrl_word *w, const char *s, long long *value);
/* The same, where prefix allows any prefix that only one word's value
 * begins (the CLI): an exact word wins. 0, -EINVAL (none), -ENOTUNIQ
 * (ambiguous). */
int xrl_word_match(const struct xrl_word *w, const char *s, bool prefix, long long *value);
/* The first name with this value, or "unknown". */
const char *xrl_word_name(const struct xrl_word *w, long long value);
/* The names joined by sep (aliases of an earlier value left out). */
void xrl_words_join(const struct xrl_word *w, const char *sep, char *buf, size_t len);

#endif
