// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * libxrl, pure values: rates ("100/s"), tc(8)'s byte rates ("10mbit",
 * "2mbps") and sizes ("64kb"), read and written back.
 */
#include "model/units.h"
#include "model/words.h"
#include "base/strict.h"
#include "xdp_rl_common.h"
#include "xrl_meter.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* tc(8)'s rate units: bits per second (SI) and bytes per second */
static const struct xrl_word bit_rate_words[] = {
	{ "tbit", 1000000000000LL }, { "gbit", 1000000000 }, { "mbit", 1000000 },
	{ "kbit", 1000 }, { "bit", 1 },
	{ NULL, 0 },
};

static const struct xrl_word byte_rate_words[] = {
	{ "tbps", 1000000000000LL }, { "gbps", 1000000000 }, { "mbps", 1000000 },
	{ "kbps", 1000 }, { "bps", 1 },
	{ NULL, 0 },
};

/* tc(8)'s sizes: powers of 1024 */
static const struct xrl_word size_words[] = {
	{ "gb", 1LL << 30 }, { "mb", 1 << 20 }, { "kb", 1 << 10 }, { "b", 1 },
	{ "g", 1LL << 30 }, { "m", 1 << 20 }, { "k", 1 << 10 },
	{ NULL, 0 },
};

int xrl_rate_parse(const char *s, __u64 *count, __u64 *period_ns)
{
	const char *slash = strchr(s, '/');
	long long period;
	char num[32];
	size_t len;

	if (!slash || (len = slash - s) == 0 || len >= sizeof(num))
		return -EINVAL;
	memcpy(num, s, len);
	num[len] = '\0';
	if (xrl_dec_parse(num, 0, ~0ULL, count) ||
	    xrl_word_parse(xrl_rate_unit_words, slash + 1, &period))
		return -EINVAL;
	*period_ns = period;
	return 0;
}

void xrl_rate_format(__u64 count, __u64 period_ns, char *buf, size_t len)
{
	snprintf(buf, len, "%llu/%s", (unsigned long long)count,
		 xrl_word_name(xrl_rate_unit_words, period_ns));
}

/* "N<unit>" of a words table (largest unit first): 0 and *v = N * unit. */
static int unit_parse(const struct xrl_word *w, const char *s, __u64 *v)
{
	size_t n = strspn(s, "0123456789");
	long long unit;
	char num[24];
	__u64 x;

	if (!n || n >= sizeof(num) || xrl_word_parse(w, s + n, &unit))
		return -EINVAL;
	memcpy(num, s, n);
	num[n] = '\0';
	if (xrl_dec_parse(num, 1, ~0ULL, &x) || x > ~0ULL / unit)
		return -EINVAL;
	*v = x * unit;
	return 0;
}

/* The largest unit of a table that divides v: "10mbit", "2mbps", "64kb". */
static void unit_format(const struct xrl_word *w, __u64 v, char *buf, size_t len)
{
	for (; w->name; w++)
		if (v && v % w->value == 0)
			break;
	snprintf(buf, len, "%llu%s", (unsigned long long)(w->name ? v / w->value : v),
		 w->name ? w->name : "");
}

int xrl_byte_rate_parse(const char *s, __u64 *count, __u8 *unit)
{
	if (!unit_parse(bit_rate_words, s, count)) {
		*unit = XRL_UNIT_BITS;
		return 0;
	}
	if (!unit_parse(byte_rate_words, s, count)) {
		*unit = XRL_UNIT_BYTES;
		return 0;
	}
	return -EINVAL;
}

int xrl_size_parse(const char *s, __u64 *bytes)
{
	return unit_parse(size_words, s, bytes);
}

void xrl_byte_rate_format(__u64 count, __u8 unit, char *buf, size_t len)
{
	unit_format(unit == XRL_UNIT_BITS ? bit_rate_words : byte_rate_words, count, buf, len);
}

void xrl_size_format(__u64 bytes, char *buf, size_t len)
{
	unit_format(size_words, bytes, buf, len);
}
