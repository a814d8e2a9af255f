// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * libxrl, plain helpers: strict decimal numbers and UTF-8-safe truncation.
 */
#include "base/strict.h"

#include <string.h>

const char *xrl_dec_parse(const char *s, __u64 min, __u64 max, __u64 *out)
{
	__u64 v = 0;

	if (!s || !*s)
		return "empty";
	if (*s == '+' || *s == '-')
		return "no sign allowed";
	if (s[0] == '0' && s[1])
		return "no leading zeros allowed";
	for (const char *p = s; *p; p++) {
		if (*p == ' ' || (*p >= '\t' && *p <= '\r'))
			return "no spaces allowed";
		if (*p < '0' || *p > '9')
			return "not a decimal number";
	}
	for (; *s; s++) {
		if (v > (~0ULL - (*s - '0')) / 10)
			return "out of range";
		v = v * 10 + (*s - '0');
	}
	if (v < min || v > max)
		return "out of range";
	*out = v;
	return NULL;
}

void xrl_utf8_trim(char *s)
{
	size_t len = strlen(s), i = len, need;

	/* back to the last lead byte, at most 3 continuation bytes away */
	while (i > 0 && len - i < 4 && ((unsigned char)s[i - 1] & 0xc0) == 0x80)
		i--;
	if (i == 0 || ((unsigned char)s[i - 1] & 0x80) == 0)
		return;
	i--;
	need = ((unsigned char)s[i] & 0xe0) == 0xc0 ? 2 :
	       ((unsigned char)s[i] & 0xf0) == 0xe0 ? 3 :
	       ((unsigned char)s[i] & 0xf8) == 0xf0 ? 4 : 1;
	if (len - i < need)
		s[i] = '\0';
}
