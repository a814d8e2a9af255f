/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The vocabulary: the enum words of the rules, the modes and the attach
 * modes, one table each, for parsing, printing and hints alike.
 */
#ifndef XRL_MODEL_WORDS_H
#define XRL_MODEL_WORDS_H

#include <stdbool.h>
#include <stddef.h>

/* How a program is attached (the words of attach's mode). */
enum xrl_xdp_mode {
	XRL_XDP_AUTO = 0,
	XRL_XDP_NATIVE,
	XRL_XDP_GENERIC,
	XRL_XDP_UNKNOWN,
};

/* An enum word and its value: one row serves parsing, printing and hints. */
struct xrl_word {
	const char *name;
	long long value;
};

extern const struct xrl_word xrl_xdp_mode_words[];	/* native generic auto */
extern const struct xrl_word xrl_hook_words[];	/* xdp tc (enum xrl_hook) */
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

/* "limit", "allow", "deny" */
const char *xrl_action_name(int action);
/* The edit distance (insertions, deletions, substitutions, transpositions)
 * that "did you mean" ranks candidates by. */
int xrl_edit_distance(const char *a, const char *b);

/* ---- which word was meant: exact, a prefix (CLI), or a hint ---- */

/* The names one place accepts: commands, sub-commands, keywords or the words
 * of an enum. ok: may be written here (a prefix matches only these; a hint
 * names only these); key: names with the same key mean the same thing (an
 * enum word and its alias), so both matching a prefix is no ambiguity. */
#define XRL_MAX_NAMES 40

struct xrl_names {
	size_t n;
	char v[XRL_MAX_NAMES][24];
	bool ok[XRL_MAX_NAMES];
	bool pref[XRL_MAX_NAMES];	/* wins a shared prefix */
	bool late[XRL_MAX_NAMES];	/* a prefix means it only when it means no other */
	long long key[XRL_MAX_NAMES];
};


/* len: of name, up to a space ("rule" of "rule add") */
void xrl_names_addn(struct xrl_names *ns, const char *name, size_t len, bool ok, long long key);
void xrl_names_add(struct xrl_names *ns, const char *name, bool ok, long long key);
/* The names of an enum's words, keyed by value. */
void xrl_names_from_words(struct xrl_names *ns, const struct xrl_word *w);
/* The index of the name s means: the one it equals (ok or not: the caller
 * says why a name is out of place), else, with prefix, the only meaning of
 * the ok names it begins; or one of these. */
enum { XRL_NM_UNKNOWN = -1, XRL_NM_AMBIGUOUS = -2 };
int xrl_names_match(const struct xrl_names *ns, const char *s, bool prefix);
/* The ok names that s begins: "status, stats, show" (for XRL_NM_AMBIGUOUS). */
void xrl_names_prefixed(const struct xrl_names *ns, const char *s, char *buf, size_t len);
/* "; did you mean 'burst'?" when ok names are close to s (one edit for
 * short words, two for longer ones), else "". */
void xrl_names_hint(const struct xrl_names *ns, const char *s, char *buf, size_t len);

#endif
