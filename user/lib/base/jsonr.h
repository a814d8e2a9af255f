/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * libxrl, plain helpers (jsonr.c): a strict, bounded JSON reader for
 * replies of servers (CrowdSec's Local API). The text is checked whole
 * (RFC 8259: no trailing comma, no comment, no control character in a
 * string, no leading zero, no bare word but true/false/null, one value and
 * nothing but white space after it) and cut into a flat array of tokens,
 * each with the number of tokens it spans, so that a reader walks it
 * without recursion. Nesting and the token count are bounded; nothing is
 * allocated but the token array, whose size the caller gives.
 */
#ifndef XRL_BASE_JSONR_H
#define XRL_BASE_JSONR_H

#include <stdbool.h>
#include <stddef.h>

enum jr_type { JR_OBJECT, JR_ARRAY, JR_STRING, JR_NUMBER, JR_TRUE, JR_FALSE, JR_NULL };

struct jr_tok {
	enum jr_type type;
	unsigned start, len;	/* the text of a string (without its quotes, escapes kept), number or literal */
	unsigned n;		/* an object's members (key and value each count one) or an array's elements */
	unsigned span;		/* tokens this one covers, itself included: the next sibling is at +span */
};

#define JR_MAX_DEPTH	16

/*
 * Check and cut text[0, len) into at most max tokens (tok[0] is the
 * value). Returns the number of tokens, or -1 with *err saying why
 * ("unexpected character at byte 12", "too many tokens", ...).
 */
int jr_parse(const char *text, size_t len, struct jr_tok *tok, unsigned max, const char **err);

/* String token t of text, unescaped into buf (UTF-8; \u escapes
 * included, surrogate pairs joined, an unpaired one refused). false when it
 * does not fit in len (with its NUL), holds a NUL, or is not a string. */
bool jr_str(const char *text, const struct jr_tok *t, char *buf, size_t len);
/* Whether string token t equals s, unescaped. */
bool jr_eq(const char *text, const struct jr_tok *t, const char *s);
/* Number token t as an integer in [min, max]: no fraction, no exponent. */
bool jr_int(const char *text, const struct jr_tok *t, long long min, long long max, long long *out);

#endif
