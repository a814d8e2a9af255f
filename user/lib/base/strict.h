/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * libxrl, plain helpers (strict.c): text read and cut strictly.
 */
#ifndef XRL_BASE_STRICT_H
#define XRL_BASE_STRICT_H

#include <stdlib.h>
#include <linux/types.h>

/* A strict decimal number in [min, max]: digits only, no sign, no spaces,
 * not empty. NULL on success, else what is wrong ("no sign allowed", ...). */
const char *xrl_dec_parse(const char *s, __u64 min, __u64 max, __u64 *out);
/* Cut an incomplete UTF-8 sequence off the end of s (after a truncating
 * snprintf), so a message never ends mid-character. */
void xrl_utf8_trim(char *s);

/* qsort() of n elements, n possibly 0 with v NULL (which qsort() itself
 * must not be given: its pointer is declared non-null; UBSan says so). */
static inline void xrl_sort(void *v, size_t n, size_t size,
			    int (*cmp)(const void *, const void *))
{
	if (n > 1)
		qsort(v, n, size, cmp);
}

#endif
