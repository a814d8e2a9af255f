/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * A very small test harness: CHECK*() record failures with file:line, and
 * RUN() counts a test as passed when none of its checks failed. The closing
 * line is "N passed, N failed".
 */
#ifndef XRL_TESTLIB_H
#define XRL_TESTLIB_H

#include <stdio.h>
#include <string.h>

static int tl_passed, tl_failed, tl_cur_failed;

#define CHECK(cond, fmt, ...)							\
	do {									\
		if (!(cond)) {							\
			tl_cur_failed++;					\
			fprintf(stderr, "    %s:%d: %s: " fmt "\n", __FILE__,	\
				__LINE__, #cond, ##__VA_ARGS__);		\
		}								\
	} while (0)

#define CHECK_EQ(a, b)								\
	do {									\
		unsigned long long _a = (a), _b = (b);				\
		CHECK(_a == _b, "%llu != %llu", _a, _b);			\
	} while (0)

#define RUN(fn)									\
	do {									\
		tl_cur_failed = 0;						\
		fn();								\
		if (tl_cur_failed) {						\
			tl_failed++;						\
			printf("FAIL %s\n", #fn);				\
		} else {							\
			tl_passed++;						\
			printf("ok   %s\n", #fn);				\
		}								\
		fflush(stdout);							\
	} while (0)

static inline int tl_summary(void)
{
	printf("%d passed, %d failed\n", tl_passed, tl_failed);
	return tl_failed ? 1 : 0;
}

#endif
