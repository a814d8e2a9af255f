// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * libxrl, pure values: set names, durations, ranges as prefixes, and the
 * formats of a set file (setfile.h).
 */
#include "model/setfile.h"
#include "model/addr.h"
#include "model/ban.h"
#include "base/log.h"
#include "base/strict.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The message so far, after a prefix said by fmt (xrl_fail() cannot take
 * xrl_errmsg() as its own argument: one buffer). */
__attribute__((format(printf, 2, 3)))
static int refail(int err, const char *fmt, ...)
{
	char pre[256], msg[sizeof(xrl__errbuf)];
	va_list ap;

	snprintf(msg, sizeof(msg), "%s", xrl_errmsg());
	va_start(ap, fmt);
	vsnprintf(pre, sizeof(pre), fmt, ap);
	va_end(ap);
	return xrl_fail(err, "%s%s", pre, msg);
}

void xrl_set_list_free(struct xrl_set_list *l)
{
	free(l->v);
	l->v = NULL;
	l->n = l->cap = 0;
}

int xrl_set_list_push(struct xrl_set_list *l, const struct xrl_set_item *it)
{
	if (l->n == l->cap) {
		size_t nc = l->cap ? l->cap * 2 : 256;
		void *nv = realloc(l->v, nc * sizeof(*l->v));

		if (!nv)
			return xrl_fail(ENOMEM, "out of memory");
		l->v = nv;
		l->cap = nc;
	}
	l->v[l->n++] = *it;
	return 0;
}

int xrl_set_name_check(const char *name)
{
	size_t n = strlen(name);

	if (!n || n > XRL_SET_NAME_MAX)
		return xrl_fail(EINVAL, "invalid set name '%s': 1 to %d characters", name, XRL_SET_NAME_MAX);
	if (!isalpha((unsigned char)name[0]))
		return xrl_fail(EINVAL, "invalid set name '%s': it begins with a letter", name);
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)name[i]) && !strchr("_.-", name[i]))
			return xrl_fail(EINVAL, "invalid set name '%s': letters, digits, '_', '.' and '-' only", name);
	return 0;
}

int xrl_set_timeout_parse(const char *s, __u64 *ns)
{
	__u64 secs;

	if (xrl_duration_parse(s, 365ULL * 86400, &secs))
		return -EINVAL;
	*ns = secs * 1000000000ULL;
	return 0;
}

/* Addresses as 128-bit numbers (IPv4 in the low 32 bits). */
typedef unsigned __int128 u128;

static u128 to_num(int family, const __u8 *a)
{
	u128 v = 0;

	for (int i = 0; i < (family == 6 ? 16 : 4); i++)
		v = v << 8 | a[i];
	return v;
}

static void from_num(int family, u128 v, __u8 *a)
{
	int bytes = family == 6 ? 16 : 4;

	memset(a, 0, 16);
	for (int i = bytes - 1; i >= 0; i--, v >>= 8)
		a[i] = (__u8)v;
}

int xrl_range_to_prefixes(int family, const __u8 *lo, const __u8 *hi, struct xrl_set_list *l)
{
	int bits = family == 6 ? 128 : 32;
	u128 max = bits == 128 ? ~(u128)0 : ((u128)1 << 32) - 1;
	u128 a = to_num(family, lo), b = to_num(family, hi);

	if (a > b)
		return xrl_fail(EINVAL, "the range's first address is above its last");
	for (;;) {
		struct xrl_set_item it = { .family = family };
		int k = bits;
		u128 mask;

		/* the largest aligned block from a that ends at or before b */
		for (;; k--) {
			mask = k == 128 ? ~(u128)0 : ((u128)1 << k) - 1;
			if (!(a & mask) && mask <= b - a)
				break;
		}
		it.prefix_len = bits - k;
		from_num(family, a, it.addr);
		if (xrl_set_list_push(l, &it))
			return -ENOMEM;
		if ((a | mask) >= b || (a | mask) == max)
			return 0;
		a = (a | mask) + 1;
	}
}

/* A prefix or a bare address. */
static int parse_prefix(const char *s, struct xrl_set_item *it)
{
	struct xrl_rule_entry e = {};

	if (xrl_prefix_parse(s, &e))
		return -EINVAL;
	it->family = e.family;
	it->prefix_len = e.prefix_len;
	memcpy(it->addr, e.addr, 16);
	return 0;
}

int xrl_set_elem_parse(const char *s, struct xrl_set_list *l)
{
	struct xrl_set_item it = {};
	const char *dash = strchr(s, '-');

	if (dash) {
		struct xrl_rule_entry lo = {}, hi = {};
		char a[64];
		size_t n = dash - s;

		if (n >= sizeof(a))
			return xrl_fail(EINVAL, "invalid range '%s'", s);
		memcpy(a, s, n);
		a[n] = '\0';
		if (strchr(a, '/') || strchr(dash + 1, '/'))
			return xrl_fail(EINVAL, "invalid range '%s': two addresses, no prefix length", s);
		if (xrl_prefix_parse(a, &lo) || xrl_prefix_parse(dash + 1, &hi))
			return refail(EINVAL, "invalid range '%s': ", s);
		if (lo.family != hi.family)
			return xrl_fail(EINVAL, "invalid range '%s': an IPv4 and an IPv6 address", s);
		if (xrl_range_to_prefixes(lo.family, lo.addr, hi.addr, l))
			return refail(EINVAL, "invalid range '%s': ", s);
		return 0;
	}
	if (parse_prefix(s, &it))
		return -EINVAL;
	return xrl_set_list_push(l, &it);
}

/* The words of a line: at most `max`, split on blanks; the count. */
static int split(char *line, char **w, int max)
{
	int n = 0;

	for (char *p = line; *p;) {
		while (*p == ' ' || *p == '\t' || *p == '\r')
			*p++ = '\0';
		if (!*p)
			break;
		if (n == max)
			return max + 1;
		w[n++] = p;
		while (*p && *p != ' ' && *p != '\t' && *p != '\r')
			p++;
	}
	return n;
}

/* One line of ipset save: create NAME TYPE ..., add NAME ELEM [timeout N].
 * *ipset_name holds the name of the create line (one set a file). */
static int parse_ipset(char **w, int n, char *ipset_name, size_t isz, struct xrl_set_list *l)
{
	if (!strcmp(w[0], "create")) {
		if (n < 3)
			return xrl_fail(EINVAL, "'create' needs a set name and a type (ipset save: create NAME hash:net ...)");
		if (ipset_name[0])
			return xrl_fail(EINVAL, "a second 'create': the file holds one set");
		if (strcmp(w[2], "hash:net") && strcmp(w[2], "hash:ip"))
			return xrl_fail(EINVAL, "ipset type '%s' is not a set of prefixes (hash:net or hash:ip)", w[2]);
		snprintf(ipset_name, isz, "%s", w[1]);
		return 0;
	}
	/* add NAME ELEM [timeout N] */
	if (n < 3)
		return xrl_fail(EINVAL, "'add' needs a set name and an element (ipset save: add NAME PREFIX)");
	if (ipset_name[0] && strcmp(w[1], ipset_name))
		return xrl_fail(EINVAL, "'add %s': the file's set is '%s'", w[1], ipset_name);
	if (n != 3 && !(n == 5 && !strcmp(w[3], "timeout")))
		return xrl_fail(EINVAL, "'%s' after the element: only 'timeout N' is read", w[3]);
	{
		size_t first = l->n;
		__u64 t = 0, sec;
		const char *why;

		if (n == 5) {
			if ((why = xrl_dec_parse(w[4], 0, 365ULL * 86400, &sec)))
				return xrl_fail(EINVAL, "invalid timeout '%s': seconds, 0 .. 31536000 (%s)", w[4], why);
			t = sec * 1000000000ULL;
		}
		if (xrl_set_elem_parse(w[2], l))
			return -EINVAL;
		for (size_t i = first; i < l->n; i++)
			l->v[i].timeout_ns = t;
	}
	return 0;
}

int xrl_set_parse(const char *buf, size_t len, const char *file, size_t max, struct xrl_set_list *l)
{
	char line[512], ipset_name[64] = "";
	size_t lineno = 0, pos = 0;

	while (pos < len) {
		const char *nl = memchr(buf + pos, '\n', len - pos);
		size_t end = nl ? (size_t)(nl - buf) : len, n = end - pos;
		char *w[17], *hash;
		int nw, err;

		lineno++;
		if (n >= sizeof(line)) {
			size_t b = pos;

			/* a long comment (a list's header) is no element */
			while (b < end && (buf[b] == ' ' || buf[b] == '\t'))
				b++;
			if (b < end && (buf[b] == '#' || buf[b] == ';')) {
				pos = end + 1;
				continue;
			}
			return xrl_fail(EINVAL, "%s:%zu: line too long (at most %zu bytes)", file, lineno,
				    sizeof(line) - 1);
		}
		memcpy(line, buf + pos, n);
		line[n] = '\0';
		pos = end + 1;
		if (memchr(line, '\0', n))
			return xrl_fail(EINVAL, "%s:%zu: a NUL byte: not a text file", file, lineno);
		/* '#' comments, and ';' ones (Spamhaus DROP: "PREFIX ; SBL...") */
		hash = strpbrk(line, "#;");
		if (hash)
			*hash = '\0';
		nw = split(line, w, 16);
		if (nw == 0)
			continue;
		if (!strcmp(w[0], "create"))	/* its options: the elements say their own */
			err = parse_ipset(w, nw > 16 ? 16 : nw, ipset_name, sizeof(ipset_name), l);
		else if (!strcmp(w[0], "add"))
			err = nw > 5 ? xrl_fail(EINVAL, "too many words (ipset save: add NAME PREFIX [timeout N])") :
			      parse_ipset(w, nw, ipset_name, sizeof(ipset_name), l);
		else if (nw == 1)
			err = xrl_set_elem_parse(w[0], l);
		else if (nw == 3 && !strcmp(w[1], "-"))	/* "A - B" */
			err = xrl_fail(EINVAL, "a range is written A-B, without blanks");
		else
			err = xrl_fail(EINVAL, "'%s': one prefix, address or range A-B a line (or ipset save lines)", w[1]);
		if (err)
			return refail(err, "%s:%zu: ", file, lineno);
		if (l->n > max)
			return xrl_fail(E2BIG, "%s:%zu: more than %zu prefixes (a set holds at most %zu)", file, lineno,
				    max, max);
	}
	return 0;
}
