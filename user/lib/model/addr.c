// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * libxrl, pure values: addresses and prefixes.
 */
#include "model/addr.h"
#include "base/log.h"
#include "base/strict.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* Addresses                                                           */

static bool v4mapped(const __u8 *a)
{
	static const __u8 pfx[12] = { [10] = 0xff, [11] = 0xff };

	return !memcmp(a, pfx, sizeof(pfx));
}

/* inet_pton() only: no message */
static int addr_pton(const char *s, int *family, __u8 *addr)
{
	memset(addr, 0, 16);
	if (strchr(s, ':')) {
		if (inet_pton(AF_INET6, s, addr) != 1)
			return -EINVAL;
		*family = 6;
		return 0;
	}
	if (inet_pton(AF_INET, s, addr) != 1)
		return -EINVAL;
	*family = 4;
	return 0;
}

int xrl_addr_parse(const char *s, int *family, __u8 *addr)
{
	char v4[INET_ADDRSTRLEN];

	if (addr_pton(s, family, addr))
		return xrl_fail(EINVAL, "invalid address '%s'", s);
	if (*family == 6 && v4mapped(addr)) {
		inet_ntop(AF_INET, addr + 12, v4, sizeof(v4));
		return xrl_fail(EINVAL, "'%s' is an IPv4-mapped IPv6 address, which no packet carries: did you mean %s?",
			    s, v4);
	}
	return 0;
}

void xrl_addr_format(int family, const __u8 *addr, char *buf, size_t len)
{
	inet_ntop(family == 6 ? AF_INET6 : AF_INET, addr, buf, len);
}

void xrl__mask_bits(__u8 *out, int bits, int bytes)
{
	for (int i = 0; i < bytes; i++) {
		int b = bits - 8 * i;

		out[i] = b >= 8 ? 0xff : b <= 0 ? 0 : (__u8)(0xff << (8 - b));
	}
}

int xrl_prefix_parse(const char *s, struct xrl_rule_entry *e)
{
	char buf[INET6_ADDRSTRLEN + 8], *slash, v4[INET_ADDRSTRLEN];
	int family, maxlen, bytes;
	const char *why;
	__u8 mask[16];
	__u64 len;

	if (strlen(s) >= sizeof(buf))
		return xrl_fail(EINVAL, "invalid prefix '%s'", s);
	strcpy(buf, s);
	slash = strchr(buf, '/');
	if (slash)
		*slash = '\0';
	if (addr_pton(buf, &family, e->addr))
		return xrl_fail(EINVAL, "invalid prefix '%s': not an IPv4 or IPv6 address", s);
	maxlen = family == 6 ? 128 : 32;
	len = maxlen;
	if (slash && (why = xrl_dec_parse(slash + 1, 0, maxlen, &len)))
		return xrl_fail(EINVAL, "invalid prefix '%s': length must be 0..%d (%s)",
			    s, maxlen, why);
	bytes = maxlen / 8;
	xrl__mask_bits(mask, len, bytes);
	for (int i = 0; i < bytes; i++) {
		if (e->addr[i] & ~mask[i]) {
			char net[INET6_ADDRSTRLEN];
			__u8 a[16] = {};

			for (int j = 0; j < bytes; j++)
				a[j] = e->addr[j] & mask[j];
			xrl_addr_format(family, a, net, sizeof(net));
			return xrl_fail(EINVAL, "invalid prefix '%s': host bits set (did you mean %s/%u?)",
				    s, net, (unsigned int)len);
		}
	}
	/* ::ffff:0:0/96 and inside it; a shorter prefix holds real IPv6 too */
	if (family == 6 && len >= 96 && v4mapped(e->addr)) {
		inet_ntop(AF_INET, e->addr + 12, v4, sizeof(v4));
		if (len == 128)
			return xrl_fail(EINVAL, "invalid prefix '%s': an IPv4-mapped IPv6 address never matches (IPv4 packets are IPv4): did you mean %s?",
				    s, v4);
		return xrl_fail(EINVAL, "invalid prefix '%s': IPv4-mapped IPv6 addresses never match (IPv4 packets are IPv4): did you mean %s/%u?",
			    s, v4, (unsigned int)(len - 96));
	}
	e->family = family;
	e->prefix_len = len;
	return 0;
}

void xrl_prefix_format(const struct xrl_rule_entry *e, char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN];

	if (xrl_rule_is_set(e)) {
		snprintf(buf, len, "@%s", e->set);
		return;
	}
	xrl_addr_format(e->family, e->addr, a, sizeof(a));
	snprintf(buf, len, "%s/%u", a, e->prefix_len);
}
