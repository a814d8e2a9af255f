// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * libxrl, plain helpers: the strict JSON reader (jsonr.h says what it
 * accepts). A recursive descent whose depth is bounded by JR_MAX_DEPTH, so
 * that a reply of deep brackets costs neither the stack nor time.
 */
#include "base/jsonr.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct jr {
	const char *s;
	size_t len, p;
	struct jr_tok *tok;
	unsigned max, n;
	const char *err;
	char msg[64];
};

static int fail(struct jr *j, const char *what)
{
	if (!j->err) {
		snprintf(j->msg, sizeof(j->msg), "%s at byte %zu", what, j->p);
		j->err = j->msg;
	}
	return -1;
}

static void skip_ws(struct jr *j)
{
	while (j->p < j->len && (j->s[j->p] == ' ' || j->s[j->p] == '\t' || j->s[j->p] == '\n' ||
				 j->s[j->p] == '\r'))
		j->p++;
}

static int new_tok(struct jr *j, enum jr_type type)
{
	if (j->n >= j->max) {
		j->err = "too many tokens";
		return -1;
	}
	j->tok[j->n] = (struct jr_tok){ .type = type, .start = (unsigned)j->p, .span = 1 };
	return (int)j->n++;
}

static bool is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static int parse_string(struct jr *j)
{
	int t;

	j->p++;		/* the quote */
	t = new_tok(j, JR_STRING);
	if (t < 0)
		return -1;
	while (j->p < j->len) {
		unsigned char c = (unsigned char)j->s[j->p];

		if (c == '"') {
			j->tok[t].len = (unsigned)(j->p - j->tok[t].start);
			j->p++;
			return t;
		}
		if (c < 0x20)
			return fail(j, "control character in a string");
		if (c == '\\') {
			if (j->p + 1 >= j->len)
				break;
			c = (unsigned char)j->s[j->p + 1];
			if (c == 'u') {
				if (j->p + 6 > j->len)
					break;
				for (int i = 2; i < 6; i++)
					if (!is_hex(j->s[j->p + i]))
						return fail(j, "bad \\u escape");
				j->p += 6;
				continue;
			}
			if (!strchr("\"\\/bfnrt", c) || !c)
				return fail(j, "bad escape");
			j->p += 2;
			continue;
		}
		j->p++;
	}
	return fail(j, "unterminated string");
}

static bool digit(struct jr *j)
{
	return j->p < j->len && j->s[j->p] >= '0' && j->s[j->p] <= '9';
}

static int parse_number(struct jr *j)
{
	int t = new_tok(j, JR_NUMBER);

	if (t < 0)
		return -1;
	if (j->s[j->p] == '-')
		j->p++;
	if (!digit(j))
		return fail(j, "bad number");
	if (j->s[j->p] == '0') {
		j->p++;
		if (digit(j))
			return fail(j, "leading zero");
	} else {
		while (digit(j))
			j->p++;
	}
	if (j->p < j->len && j->s[j->p] == '.') {
		j->p++;
		if (!digit(j))
			return fail(j, "bad fraction");
		while (digit(j))
			j->p++;
	}
	if (j->p < j->len && (j->s[j->p] == 'e' || j->s[j->p] == 'E')) {
		j->p++;
		if (j->p < j->len && (j->s[j->p] == '+' || j->s[j->p] == '-'))
			j->p++;
		if (!digit(j))
			return fail(j, "bad exponent");
		while (digit(j))
			j->p++;
	}
	j->tok[t].len = (unsigned)(j->p - j->tok[t].start);
	return t;
}

static int parse_value(struct jr *j, int depth);

static int parse_container(struct jr *j, int depth, bool object)
{
	char close = object ? '}' : ']';
	int t;

	if (depth >= JR_MAX_DEPTH)
		return fail(j, "nested too deep");
	t = new_tok(j, object ? JR_OBJECT : JR_ARRAY);
	if (t < 0)
		return -1;
	j->p++;
	skip_ws(j);
	if (j->p < j->len && j->s[j->p] == close) {
		j->p++;
		return t;
	}
	for (;;) {
		skip_ws(j);
		if (object) {
			if (j->p >= j->len || j->s[j->p] != '"')
				return fail(j, "expected a key");
			if (parse_string(j) < 0)
				return -1;
			j->tok[t].n++;
			skip_ws(j);
			if (j->p >= j->len || j->s[j->p] != ':')
				return fail(j, "expected ':'");
			j->p++;
		}
		if (parse_value(j, depth + 1) < 0)
			return -1;
		j->tok[t].n++;
		skip_ws(j);
		if (j->p >= j->len)
			return fail(j, "unterminated container");
		if (j->s[j->p] == close) {
			j->p++;
			break;
		}
		if (j->s[j->p] != ',')
			return fail(j, "expected ',' or a close");
		j->p++;
	}
	j->tok[t].span = j->n - (unsigned)t;
	return t;
}

static int literal(struct jr *j, const char *word, enum jr_type type)
{
	size_t l = strlen(word);
	int t;

	if (j->len - j->p < l || memcmp(j->s + j->p, word, l))
		return fail(j, "unexpected word");
	t = new_tok(j, type);
	if (t < 0)
		return -1;
	j->tok[t].len = (unsigned)l;
	j->p += l;
	return t;
}

static int parse_value(struct jr *j, int depth)
{
	skip_ws(j);
	if (j->p >= j->len)
		return fail(j, "expected a value");
	switch (j->s[j->p]) {
	case '{':
		return parse_container(j, depth, true);
	case '[':
		return parse_container(j, depth, false);
	case '"':
		return parse_string(j);
	case 't':
		return literal(j, "true", JR_TRUE);
	case 'f':
		return literal(j, "false", JR_FALSE);
	case 'n':
		return literal(j, "null", JR_NULL);
	default:
		if (j->s[j->p] == '-' || (j->s[j->p] >= '0' && j->s[j->p] <= '9'))
			return parse_number(j);
		return fail(j, "unexpected character");
	}
}

int jr_parse(const char *text, size_t len, struct jr_tok *tok, unsigned max, const char **err)
{
	struct jr j = { .s = text, .len = len, .tok = tok, .max = max };

	/* offsets are unsigned: a text past 4 GiB is no reply we take */
	if (len >= 0xffffffffu) {
		*err = "text too long";
		return -1;
	}
	if (parse_value(&j, 0) < 0)
		goto bad;
	skip_ws(&j);
	if (j.p != len) {
		fail(&j, "text after the value");
		goto bad;
	}
	return (int)j.n;
bad:
	*err = j.err;
	return -1;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return c - 'A' + 10;
}

static unsigned hex4(const char *s)
{
	return (unsigned)(hexval(s[0]) << 12 | hexval(s[1]) << 8 | hexval(s[2]) << 4 | hexval(s[3]));
}

/* the escapes were checked by jr_parse(): each is whole */
bool jr_str(const char *text, const struct jr_tok *t, char *buf, size_t len)
{
	const char *s = text + t->start, *end = s + t->len;
	size_t o = 0;

	if (t->type != JR_STRING || !len)
		return false;
	while (s < end) {
		unsigned cp;

		if (*s != '\\') {
			if (o + 1 >= len)
				return false;
			buf[o++] = *s++;
			continue;
		}
		s++;
		switch (*s) {
		case 'b': cp = '\b'; break;
		case 'f': cp = '\f'; break;
		case 'n': cp = '\n'; break;
		case 'r': cp = '\r'; break;
		case 't': cp = '\t'; break;
		case 'u':
			cp = hex4(s + 1);
			s += 4;
			if (cp >= 0xdc00 && cp <= 0xdfff)
				return false;
			if (cp >= 0xd800 && cp <= 0xdbff) {
				unsigned lo;

				if (end - s < 7 || s[1] != '\\' || s[2] != 'u')
					return false;
				lo = hex4(s + 3);
				if (lo < 0xdc00 || lo > 0xdfff)
					return false;
				cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
				s += 6;
			}
			break;
		default: cp = (unsigned char)*s; break;	/* " \ / */
		}
		s++;
		if (!cp)
			return false;
		if (cp < 0x80) {
			if (o + 1 >= len)
				return false;
			buf[o++] = (char)cp;
		} else if (cp < 0x800) {
			if (o + 2 >= len)
				return false;
			buf[o++] = (char)(0xc0 | cp >> 6);
			buf[o++] = (char)(0x80 | (cp & 0x3f));
		} else if (cp < 0x10000) {
			if (o + 3 >= len)
				return false;
			buf[o++] = (char)(0xe0 | cp >> 12);
			buf[o++] = (char)(0x80 | ((cp >> 6) & 0x3f));
			buf[o++] = (char)(0x80 | (cp & 0x3f));
		} else {
			if (o + 4 >= len)
				return false;
			buf[o++] = (char)(0xf0 | cp >> 18);
			buf[o++] = (char)(0x80 | ((cp >> 12) & 0x3f));
			buf[o++] = (char)(0x80 | ((cp >> 6) & 0x3f));
			buf[o++] = (char)(0x80 | (cp & 0x3f));
		}
	}
	buf[o] = '\0';
	return true;
}

bool jr_eq(const char *text, const struct jr_tok *t, const char *s)
{
	char buf[256];

	if (strlen(s) >= sizeof(buf) || !jr_str(text, t, buf, sizeof(buf)))
		return false;
	return strcmp(buf, s) == 0;
}

bool jr_int(const char *text, const struct jr_tok *t, long long min, long long max, long long *out)
{
	char buf[32], *end;
	long long v;

	if (t->type != JR_NUMBER || t->len >= sizeof(buf))
		return false;
	memcpy(buf, text + t->start, t->len);
	buf[t->len] = '\0';
	if (strpbrk(buf, ".eE"))
		return false;
	errno = 0;
	v = strtoll(buf, &end, 10);
	if (errno || *end || v < min || v > max)
		return false;
	*out = v;
	return true;
}
