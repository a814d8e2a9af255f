// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * libxrl, the deciders: a CrowdSec stream answer, checked and parsed
 * (crowdsec.h says what is taken, skipped and refused). No I/O.
 */
#include "deciders/crowdsec.h"

#define XRL_STR_(x)	#x
#define XRL_STR(x)	XRL_STR_(x)
#include "base/jsonr.h"
#include "base/log.h"
#include "base/strict.h"
#include "model/addr.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

bool xrl_go_duration_ms(const char *s, long long *ms)
{
	/* as Go's time.ParseDuration: [-+]?([0-9]*(\.[0-9]*)?unit)+ or "0" */
	static const struct { const char *unit; double ns; } units[] = {
		{ "ns", 1 }, { "us", 1e3 }, { "\xc2\xb5s", 1e3 }, { "\xce\xbcs", 1e3 },
		{ "ms", 1e6 }, { "s", 1e9 }, { "m", 60e9 }, { "h", 3600e9 },
	};
	long double total = 0;
	bool neg = false;

	if (*s == '-' || *s == '+')
		neg = *s++ == '-';
	if (!strcmp(s, "0")) {
		*ms = 0;
		return true;
	}
	if (!*s)
		return false;
	while (*s) {
		long double v = 0, scale = 1;
		bool digits = false;
		size_t best = 0;
		double unit = 0;

		while (*s >= '0' && *s <= '9') {
			v = v * 10 + (*s++ - '0');
			digits = true;
			if (v > 1e30)
				return false;
		}
		if (*s == '.') {
			s++;
			while (*s >= '0' && *s <= '9') {
				scale /= 10;
				v += (*s++ - '0') * scale;
				digits = true;
			}
		}
		if (!digits)
			return false;
		/* the longest unit that matches: "ms" before "m" */
		for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
			size_t l = strlen(units[i].unit);

			if (l > best && !strncmp(s, units[i].unit, l)) {
				best = l;
				unit = units[i].ns;
			}
		}
		if (!best)
			return false;
		s += best;
		total += v * unit;
		if (total > 9223372036854775807.0L)
			return false;
	}
	*ms = (long long)(total / 1e6L);
	if (neg)
		*ms = -*ms;
	return true;
}

void xrl_cs_answer_free(struct xrl_cs_answer *a)
{
	free(a->v);
	a->v = NULL;
	a->n = 0;
}

static void invalid(struct xrl_cs_answer *a, const char *fmt, const char *what)
{
	if (!a->invalid++)
		snprintf(a->why, sizeof(a->why), fmt, what);
}

/* one element of "new" or "deleted", at tok[i]: -1 for a wrong shape, 0
 * with *d filled or *take false (ignored, counted) */
static int element(const char *s, const struct jr_tok *tok, unsigned i, struct xrl_cs_answer *a,
		   struct xrl_cs_decision *d, bool *take)
{
	char scope[32] = "", type[32] = "", dur[64] = "";
	bool has_value = false, has_dur = false;
	unsigned k = i + 1;

	*take = false;
	if (tok[i].type != JR_OBJECT)
		return xrl_fail(EPROTO, "a decision that is not an object");
	memset(d, 0, sizeof(*d));
	for (unsigned m = 0; m < tok[i].n / 2; m++) {
		const struct jr_tok *key = &tok[k], *val = &tok[k + 1];
		char *str = NULL;
		size_t cap = 0;

		if (jr_eq(s, key, "id")) {
			if (!jr_int(s, val, 0, 1LL << 62, &d->id))
				return xrl_fail(EPROTO, "a decision's id is not a whole number");
		} else if (jr_eq(s, key, "value")) {
			str = d->value, cap = sizeof(d->value);
			has_value = true;
		} else if (jr_eq(s, key, "scope")) {
			str = scope, cap = sizeof(scope);
		} else if (jr_eq(s, key, "type")) {
			str = type, cap = sizeof(type);
		} else if (jr_eq(s, key, "duration")) {
			str = dur, cap = sizeof(dur);
			has_dur = true;
		} else if (jr_eq(s, key, "origin")) {
			str = d->origin, cap = sizeof(d->origin);
		} else if (jr_eq(s, key, "scenario")) {
			str = d->scenario, cap = sizeof(d->scenario);
		}
		if (str) {
			if (val->type != JR_STRING)
				return xrl_fail(EPROTO, "a decision's member is not a string");
			/* too long for its field: the origin and scenario are
			 * cut (they are only told), the others make it invalid */
			if (!jr_str(s, val, str, cap)) {
				if (str == d->origin || str == d->scenario) {
					snprintf(str, cap, "(too long)");
				} else {
					invalid(a, "a decision's %s is too long or holds a NUL", "member");
					k += 1 + val->span;
					*take = false;
					return 1;
				}
			}
		}
		k += 1 + val->span;
	}
	if (strcasecmp(type, "ban")) {
		a->ignored_type++;
		return 0;
	}
	if (!strcasecmp(scope, "ip")) {
		int fam;

		if (!has_value || strchr(d->value, '/') || xrl_addr_parse(d->value, &fam, d->addr) < 0) {
			invalid(a, "'%s' is no IP address", d->value);
			return 0;
		}
		d->family = (__u8)fam;
		d->prefix_len = fam == 6 ? 128 : 32;
	} else if (!strcasecmp(scope, "range")) {
		/* ADDR/LEN; host bits set are cleared (the range's network is
		 * what it bans), which the rule grammar would refuse */
		char ip[64], *slash;
		__u8 mask[16];
		__u64 len;
		int fam;

		snprintf(ip, sizeof(ip), "%s", d->value);
		slash = strchr(ip, '/');
		if (slash)
			*slash = '\0';
		if (!has_value || !slash || xrl_addr_parse(ip, &fam, d->addr) < 0 ||
		    xrl_dec_parse(slash + 1, 0, fam == 6 ? 128 : 32, &len)) {
			invalid(a, "'%s' is no prefix", d->value);
			return 0;
		}
		/* a range that wide bans everyone, the operator's own
		 * connection included: never from a decider */
		if (len < (fam == 6 ? XRL_CS_MIN_RANGE6 : XRL_CS_MIN_RANGE4)) {
			invalid(a, fam == 6 ? "'%s' is wider than /" XRL_STR(XRL_CS_MIN_RANGE6) ": refused" :
				"'%s' is wider than /" XRL_STR(XRL_CS_MIN_RANGE4) ": refused", d->value);
			return 0;
		}
		d->family = (__u8)fam;
		d->prefix_len = (__u8)len;
		xrl__mask_bits(mask, (int)len, 16);
		for (int i = 0; i < 16; i++)
			d->addr[i] &= mask[i];
	} else {
		a->ignored_scope++;
		return 0;
	}
	if (!has_dur || !xrl_go_duration_ms(dur, &d->ms)) {
		invalid(a, "'%s' is no duration", dur);
		return 0;
	}
	if (d->ms > XRL_CS_MAX_DURATION_MS)
		d->ms = XRL_CS_MAX_DURATION_MS;
	*take = true;
	return 0;
}

int xrl_cs_parse(const char *body, size_t len, struct xrl_cs_answer *a)
{
	size_t tmax = (size_t)XRL_CS_MAX_TOKENS * (len / XRL_CS_MAX_BODY + 1);
	unsigned max = len / 2 + 2 < tmax ? (unsigned)(len / 2 + 2) : (unsigned)tmax;
	struct jr_tok *tok = NULL;
	const char *err;
	size_t cap = 0;
	unsigned k;
	int n, ret;

	memset(a, 0, sizeof(*a));
	if (len > XRL_CS_MAX_BODY_MAX)
		return xrl_fail(EMSGSIZE, "the answer is over %u bytes", XRL_CS_MAX_BODY_MAX);
	tok = malloc(sizeof(*tok) * max);
	if (!tok)
		return xrl_fail(ENOMEM, "out of memory");
	n = jr_parse(body, len, tok, max, &err);
	if (n < 0) {
		ret = xrl_fail(EPROTO, "the answer is not JSON: %s", err);
		goto cleanup;
	}
	if (tok[0].type != JR_OBJECT) {
		ret = xrl_fail(EPROTO, "the answer is not a JSON object");
		goto cleanup;
	}
	/* every element of both arrays counts toward the one allocation */
	k = 1;
	for (unsigned m = 0; m < tok[0].n / 2; m++) {
		const struct jr_tok *key = &tok[k], *val = &tok[k + 1];
		bool del = jr_eq(body, key, "deleted");

		if (del || jr_eq(body, key, "new")) {
			if (val->type == JR_ARRAY) {
				struct xrl_cs_decision *nv;

				if (a->n + val->n > cap) {
					cap = a->n + val->n;
					nv = realloc(a->v, cap * sizeof(*nv));
					if (!nv) {
						ret = xrl_fail(ENOMEM, "out of memory");
						goto cleanup;
					}
					a->v = nv;
				}
				for (unsigned e = 0, at = k + 2; e < val->n; e++, at += tok[at].span) {
					bool take;

					if (element(body, tok, at, a, &a->v[a->n], &take) < 0) {
						ret = -EPROTO;
						goto cleanup;
					}
					if (take)
						a->v[a->n++].deleted = del;
				}
			} else if (val->type != JR_NULL) {
				ret = xrl_fail(EPROTO, "the answer's \"%s\" is neither an array nor null",
					       del ? "deleted" : "new");
				goto cleanup;
			}
		}
		k += 1 + val->span;
	}
	ret = 0;
cleanup:
	free(tok);
	if (ret)
		xrl_cs_answer_free(a);
	return ret;
}
