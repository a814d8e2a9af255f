// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * libxrl, pure values: a ban as written, its duration, reason and origin.
 */
#include "model/ban.h"
#include "base/log.h"
#include "base/strict.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static const struct { char unit; __u64 secs; } units[] = {
	{ 'd', 86400 }, { 'h', 3600 }, { 'm', 60 }, { 's', 1 },
};

int xrl_duration_parse(const char *s, __u64 max_s, __u64 *secs)
{
	char num[24];
	size_t l = strlen(s);
	__u64 mul = 1, v;
	const char *why;

	if (!l || l >= sizeof(num))
		return xrl_fail(EINVAL, "invalid duration '%s' (N, Ns, Nm, Nh or Nd)", s);
	memcpy(num, s, l + 1);
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (num[l - 1] == units[i].unit) {
			mul = units[i].secs;
			num[--l] = '\0';
			break;
		}
	if ((why = xrl_dec_parse(num, 1, max_s, &v)) || v > max_s / mul)
		return xrl_fail(EINVAL, "invalid duration '%s': %s (1s .. %llud; N, Ns, Nm, Nh or Nd)",
				s, why ? why : "too long", (unsigned long long)max_s / 86400);
	*secs = v * mul;
	return 0;
}

void xrl_duration_format(__u64 secs, char *buf, size_t len)
{
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (secs && secs % units[i].secs == 0) {
			snprintf(buf, len, "%llu%c", (unsigned long long)(secs / units[i].secs),
				 units[i].unit);
			return;
		}
	snprintf(buf, len, "%llus", (unsigned long long)secs);
}

void xrl_left_format(__u64 ns, char *buf, size_t len)
{
	__u64 s = (ns + 999999999ULL) / 1000000000ULL;
	size_t l = 0;
	int parts = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]) && parts < 2 && l < len; i++) {
		__u64 n = s / units[i].secs;

		if (!n && !(parts == 0 && units[i].unit == 's'))
			continue;
		l += snprintf(buf + l, len - l, "%llu%c", (unsigned long long)n, units[i].unit);
		s -= n * units[i].secs;
		parts++;
		if (!s)
			break;
	}
}

int xrl_ban_reason_check(const char *s)
{
	size_t l = strlen(s);

	if (l >= XRL_BAN_REASON_LEN)
		return xrl_fail(EINVAL, "reason is too long (%zu bytes, at most %d)", l,
				XRL_BAN_REASON_LEN - 1);
	for (size_t i = 0; i < l; i++)
		if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] > 0x7e)
			return xrl_fail(EINVAL, "reason holds a byte 0x%02x at %zu: printable ASCII only",
					(unsigned char)s[i], i + 1);
	return 0;
}

int xrl_ban_who_check(const char *s)
{
	size_t l = strlen(s);

	if (!l || l >= XRL_BAN_WHO_LEN)
		return xrl_fail(EINVAL, "invalid decider name '%s': 1 .. %d characters", s,
				XRL_BAN_WHO_LEN - 1);
	for (size_t i = 0; i < l; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') ||
		      s[i] == '-' || s[i] == '_' || s[i] == '.'))
			return xrl_fail(EINVAL, "invalid decider name '%s': a-z, 0-9, '-', '_' and '.' only", s);
	return 0;
}

int xrl_ban_spec_check(const struct xrl_ban_spec *s)
{
	int maxlen = s->family == 6 ? 128 : 32, bytes = maxlen / 8;

	if (s->family != 4 && s->family != 6)
		return xrl_fail(EINVAL, "a ban's family is 4 or 6, not %u", s->family);
	if (s->prefix_len > maxlen)
		return xrl_fail(EINVAL, "a ban's prefix length is 0 .. %d, not %u", maxlen, s->prefix_len);
	for (int i = 0; i < bytes; i++) {
		int b = s->prefix_len - 8 * i;
		__u8 m = b >= 8 ? 0xff : b <= 0 ? 0 : (__u8)(0xff << (8 - b));

		if (s->addr[i] & ~m)
			return xrl_fail(EINVAL, "a ban's prefix has host bits set");
	}
	if (s->duration_s > XRL_BAN_MAX_S)
		return xrl_fail(EINVAL, "a ban lasts at most %ud", XRL_BAN_MAX_S / 86400);
	if (s->origin != XRL_BAN_OPERATOR && s->origin != XRL_BAN_CONFIG &&
	    s->origin != XRL_BAN_DECIDER)
		return xrl_fail(EINVAL, "a ban set from userspace is the operator's, the config's or a decider's (origin %u)",
				s->origin);
	if (memchr(s->reason, '\0', sizeof(s->reason)) == NULL ||
	    memchr(s->who, '\0', sizeof(s->who)) == NULL)
		return xrl_fail(EINVAL, "a ban's reason or decider name is not terminated");
	if (xrl_ban_reason_check(s->reason))
		return -EINVAL;
	if (s->origin == XRL_BAN_DECIDER ? xrl_ban_who_check(s->who) : s->who[0] != '\0')
		return s->origin == XRL_BAN_DECIDER ? -EINVAL :
			xrl_fail(EINVAL, "only a decider's ban carries a name");
	return 0;
}

const char *xrl_ban_origin_name(__u32 origin)
{
	static const char *const names[XRL_BAN_ORIGINS] = {
		[XRL_BAN_RULE] = "rule", [XRL_BAN_OPERATOR] = "operator",
		[XRL_BAN_CONFIG] = "config", [XRL_BAN_DECIDER] = "decider",
	};

	return origin < XRL_BAN_ORIGINS && names[origin] ? names[origin] : "?";
}

void xrl_ban_by_format(const struct xrl_ban *b, char *buf, size_t len)
{
	if (b->origin == XRL_BAN_RULE)
		snprintf(buf, len, "rule %u", b->rule_id);
	else if (b->origin == XRL_BAN_DECIDER && b->who[0])
		snprintf(buf, len, "%.*s", XRL_BAN_WHO_LEN, b->who);
	else
		snprintf(buf, len, "%s", xrl_ban_origin_name(b->origin));
}
