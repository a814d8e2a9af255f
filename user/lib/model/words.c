// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * libxrl, pure values: the vocabulary (the enum words of rules, modes and
 * attach modes) and which word was meant (exact, a prefix on the CLI, or a
 * "did you mean" hint), for the grammar and every printer alike.
 */
#include "model/words.h"
#include "xdp_rl_common.h"
#include "xrl_meter.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

const struct xrl_word xrl_xdp_mode_words[] = {
	{ "native", XRL_XDP_NATIVE }, { "generic", XRL_XDP_GENERIC }, { "auto", XRL_XDP_AUTO },
	{ NULL, 0 },
};

const struct xrl_word xrl_hook_words[] = {
	{ "xdp", XRL_HOOK_XDP }, { "tc", XRL_HOOK_TC },
	{ NULL, 0 },
};

const struct xrl_word xrl_action_words[] = {
	{ "limit", XRL_ACT_LIMIT }, { "allow", XRL_ACT_ALLOW }, { "deny", XRL_ACT_DENY },
	{ NULL, 0 },
};

const struct xrl_word xrl_mode_words[] = {
	{ "enforce", XRL_MODE_ENFORCE }, { "dry-run", XRL_MODE_DRY_RUN },
	{ "fail-open", XRL_MODE_FAIL_OPEN }, { "fail-closed", XRL_MODE_FAIL_CLOSED },
	{ NULL, 0 },
};

const struct xrl_word xrl_on_failure_words[] = {
	{ "open", XRL_FAIL_OPEN }, { "closed", XRL_FAIL_CLOSED },
	{ NULL, 0 },
};

const struct xrl_word xrl_scope_words[] = {
	{ "host", XRL_SCOPE_HOST }, { "fleet", XRL_SCOPE_FLEET },
	{ NULL, 0 },
};

const struct xrl_word xrl_algo_words[] = {
	{ "token-bucket", XRL_ALGO_GCRA }, { "fixed-window", XRL_ALGO_FIXED_WINDOW },
	{ "sliding-window", XRL_ALGO_SLIDING_WINDOW },
	{ NULL, 0 },
};

const struct xrl_word xrl_proto_words[] = {
	{ "tcp", 6 }, { "udp", 17 }, { "icmp", 1 }, { "icmpv6", 58 },
	{ NULL, 0 },
};

const struct xrl_word xrl_rate_unit_words[] = {
	{ "s", XRL_PERIOD_SEC }, { "min", XRL_PERIOD_MIN }, { "h", XRL_PERIOD_HOUR },
	{ "sec", XRL_PERIOD_SEC }, { "second", XRL_PERIOD_SEC },
	{ "minute", XRL_PERIOD_MIN }, { "hour", XRL_PERIOD_HOUR },
	{ NULL, 0 },
};

int xrl_word_parse(const struct xrl_word *w, const char *s, long long *value)
{
	for (; w->name; w++) {
		if (!strcmp(w->name, s)) {
			*value = w->value;
			return 0;
		}
	}
	return -EINVAL;
}

const char *xrl_word_name(const struct xrl_word *w, long long value)
{
	for (; w->name; w++)
		if (w->value == value)
			return w->name;
	return "unknown";
}

void xrl_words_join(const struct xrl_word *w, const char *sep, char *buf, size_t len)
{
	size_t l = 0;

	buf[0] = '\0';
	for (const struct xrl_word *p = w; p->name && l < len; p++) {
		if (strcmp(xrl_word_name(w, p->value), p->name))
			continue;	/* an alias */
		l += snprintf(buf + l, len - l, "%s%s", l ? sep : "", p->name);
	}
}

/* ---- which word was meant: exact, a prefix (CLI), or a hint ---- */

/* len: of name, up to a space ("rule" of "rule add") */
void xrl_names_addn(struct xrl_names *ns, const char *name, size_t len, bool ok, long long key)
{
	for (size_t i = 0; i < ns->n; i++) {
		if (!strncmp(ns->v[i], name, len) && !ns->v[i][len]) {
			ns->ok[i] |= ok;
			return;
		}
	}
	if (ns->n < XRL_MAX_NAMES && len < sizeof(ns->v[0])) {
		memcpy(ns->v[ns->n], name, len);
		ns->v[ns->n][len] = '\0';
		ns->ok[ns->n] = ok;
		ns->pref[ns->n] = false;
		ns->late[ns->n] = false;
		ns->key[ns->n++] = key;
	}
}

void xrl_names_add(struct xrl_names *ns, const char *name, bool ok, long long key)
{
	xrl_names_addn(ns, name, strlen(name), ok, key);
}

void xrl_names_from_words(struct xrl_names *ns, const struct xrl_word *w)
{
	ns->n = 0;
	for (; w->name; w++)
		xrl_names_add(ns, w->name, true, w->value);
}

/* The index of the name s means: the one it equals (ok or not: the caller
 * says why a name is out of place), else, with prefix, the only meaning of
 * the ok names it begins. */
int xrl_names_match(const struct xrl_names *ns, const char *s, bool prefix)
{
	size_t sl = strlen(s);
	int hit = XRL_NM_UNKNOWN, pref = XRL_NM_UNKNOWN;
	bool ambiguous = false, late_too = true, prefs = false;

	for (size_t i = 0; i < ns->n; i++)
		if (!strcmp(ns->v[i], s))
			return i;
	if (!prefix || !sl)
		return XRL_NM_UNKNOWN;
	/* a prefix that some earlier name begins never means a late one: a
	 * keyword added later does not change what a shortened line meant */
	for (size_t i = 0; i < ns->n; i++) {
		if (ns->ok[i] && !ns->late[i] && !strncmp(ns->v[i], s, sl)) {
			late_too = false;
			break;
		}
	}
	for (size_t i = 0; i < ns->n; i++) {
		if (!ns->ok[i] || strncmp(ns->v[i], s, sl) || (ns->late[i] && !late_too))
			continue;
		if (ns->pref[i] && pref >= 0 && ns->key[pref] != ns->key[i])
			prefs = true;	/* two preferred: no winner */
		if (ns->pref[i] && pref < 0)
			pref = i;
		if (hit >= 0 && ns->key[hit] != ns->key[i])
			ambiguous = true;
		if (hit < 0)
			hit = i;
	}
	if (ambiguous)
		return pref >= 0 && !prefs ? pref : XRL_NM_AMBIGUOUS;
	return hit;
}

int xrl_word_match(const struct xrl_word *w, const char *s, bool prefix, long long *value)
{
	struct xrl_names ns;
	int k;

	xrl_names_from_words(&ns, w);
	k = xrl_names_match(&ns, s, prefix);
	if (k < 0)
		return k == XRL_NM_AMBIGUOUS ? -ENOTUNIQ : -EINVAL;
	*value = ns.key[k];
	return 0;
}

/* The ok names that s begins: "status, stats, show" (for XRL_NM_AMBIGUOUS). */
void xrl_names_prefixed(const struct xrl_names *ns, const char *s, char *buf, size_t len)
{
	size_t sl = strlen(s), l = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < ns->n && l < len; i++)
		if (ns->ok[i] && !strncmp(ns->v[i], s, sl))
			l += snprintf(buf + l, len - l, "%s%s", l ? ", " : "", ns->v[i]);
}

int xrl_edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	int d[33][33];

	if (la > 32 || lb > 32)
		return 99;
	for (size_t i = 0; i <= la; i++)
		d[i][0] = i;
	for (size_t j = 0; j <= lb; j++)
		d[0][j] = j;
	for (size_t i = 1; i <= la; i++) {
		for (size_t j = 1; j <= lb; j++) {
			int cost = a[i - 1] != b[j - 1], v = d[i - 1][j - 1] + cost;

			if (d[i - 1][j] + 1 < v)
				v = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < v)
				v = d[i][j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    d[i - 2][j - 2] + 1 < v)
				v = d[i - 2][j - 2] + 1;	/* a transposition */
			d[i][j] = v;
		}
	}
	return d[la][lb];
}

/* "; did you mean 'burst'?" when ok names are close to s (one edit for
 * short words, two for longer ones), else "". */
void xrl_names_hint(const struct xrl_names *ns, const char *s, char *buf, size_t len)
{
	int best = 3, dist[XRL_MAX_NAMES];
	size_t l = 0, sl = strlen(s);

	buf[0] = '\0';
	for (size_t i = 0; i < ns->n; i++) {
		size_t nl = strlen(ns->v[i]);
		int max = (sl > nl ? sl : nl) <= 4 ? 1 : 2;

		dist[i] = ns->ok[i] ? xrl_edit_distance(s, ns->v[i]) : 99;
		if (dist[i] > max)
			dist[i] = 99;
		if (dist[i] < best)
			best = dist[i];
	}
	if (best > 2)
		return;
	l = snprintf(buf, len, "; did you mean ");
	for (size_t i = 0, k = 0; i < ns->n && l < len; i++)
		if (dist[i] == best)
			l += snprintf(buf + l, len - l, "%s'%s'", k++ ? " or " : "", ns->v[i]);
	if (l < len)
		snprintf(buf + l, len - l, "?");
}


const char *xrl_action_name(int action)
{
	return xrl_word_name(xrl_action_words, action);
}
