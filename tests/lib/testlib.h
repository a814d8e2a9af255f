/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * A very small test harness for the C test binaries.
 *
 * A test is a void function. It is registered either with RUN(fn) in main()
 * (the unit tests) or defined with TEST(name) { ... } and listed by the
 * build (tests/bpf: the Makefile writes the list from the TEST( lines), then
 * run by tl_main(). Inside a test:
 *   CHECK(cond, fmt, ...)          fails the test with file:line and a message
 *   CHECK_EQ(got, want, "label")   fails it when got != want (unsigned), printing
 *                                  the label, the expression and both values
 *   SKIP("reason")                 ends the test as skipped
 *
 * Every binary takes the same options (tl_init()):
 *   -t GLOB   run only the tests whose name matches (fnmatch); may repeat
 *   -l        list the test names, run nothing
 * Its output: "ok   NAME", "FAIL NAME" or "skip NAME: reason" per test, then
 * "N passed, N failed, N skipped" (runners grep "^[0-9]+ passed, [0-9]+ failed").
 * The exit status is 1 when a test failed, 2 on a usage error.
 */
#ifndef XRL_TESTLIB_H
#define XRL_TESTLIB_H

#include <fnmatch.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TL_MAX_FILTERS	32

/* The harness's state: weak definitions, so that a binary of several
 * files (tests/bpf) shares one copy and a binary of one file needs nothing
 * more than this header. */
#define TL_SHARED __attribute__((weak))
TL_SHARED int tl_passed, tl_failed, tl_skipped, tl_cur_failed;
TL_SHARED const char *tl_skip_reason;
TL_SHARED const char *tl_filters[TL_MAX_FILTERS];
TL_SHARED int tl_nfilters;
TL_SHARED bool tl_list;

#define CHECK(cond, fmt, ...)							\
	do {									\
		if (!(cond)) {							\
			tl_cur_failed++;					\
			fprintf(stderr, "    %s:%d: %s: " fmt "\n", __FILE__,	\
				__LINE__, #cond, ##__VA_ARGS__);		\
		}								\
	} while (0)

/* The label is a string literal; "" __VA_ARGS__ makes it optional. */
#define CHECK_EQ(a, b, ...)							\
	do {									\
		unsigned long long _a = (a), _b = (b);				\
		const char *_l = "" __VA_ARGS__;				\
		if (_a != _b) {							\
			tl_cur_failed++;					\
			fprintf(stderr, "    %s:%d: %s%s%s == %s: %llu != %llu\n",	\
				__FILE__, __LINE__, _l, *_l ? ": " : "",	\
				#a, #b, _a, _b);				\
		}								\
	} while (0)

/* End the current test as skipped (from the test function itself). */
#define SKIP(reason)								\
	do {									\
		tl_skip_reason = (reason);					\
		return;								\
	} while (0)

static inline void tl_usage(const char *prog)
{
	fprintf(stderr, "usage: %s [-l] [-t GLOB]...\n"
		"  -t GLOB  run only the tests whose name matches GLOB (several allowed)\n"
		"  -l       list the test names\n", prog);
}

/* The options every test binary takes; exits on a usage error. */
static inline void tl_init(int argc, char **argv)
{
	int opt;

	while ((opt = getopt(argc, argv, "t:lh")) != -1) {
		switch (opt) {
		case 't':
			if (tl_nfilters == TL_MAX_FILTERS) {
				fprintf(stderr, "Error: more than %d -t\n", TL_MAX_FILTERS);
				exit(2);
			}
			tl_filters[tl_nfilters++] = optarg;
			break;
		case 'l':
			tl_list = true;
			break;
		case 'h':
			tl_usage(argv[0]);
			exit(0);
		default:
			tl_usage(argv[0]);
			exit(2);
		}
	}
	if (optind < argc) {
		fprintf(stderr, "Error: unexpected argument '%s'\n", argv[optind]);
		tl_usage(argv[0]);
		exit(2);
	}
}

static inline bool tl_selected(const char *name)
{
	if (!tl_nfilters)
		return true;
	for (int i = 0; i < tl_nfilters; i++)
		if (fnmatch(tl_filters[i], name, 0) == 0)
			return true;
	return false;
}

/* Run one test (or list it), when the filters select it. */
static inline void tl_run(const char *name, void (*fn)(void))
{
	if (!tl_selected(name))
		return;
	if (tl_list) {
		printf("%s\n", name);
		return;
	}
	tl_cur_failed = 0;
	tl_skip_reason = NULL;
	fn();
	if (tl_cur_failed) {
		tl_failed++;
		printf("FAIL %s\n", name);
	} else if (tl_skip_reason) {
		tl_skipped++;
		printf("skip %s: %s\n", name, tl_skip_reason);
	} else {
		tl_passed++;
		printf("ok   %s\n", name);
	}
	fflush(stdout);
}

#define RUN(fn)	tl_run(#fn, fn)

/* The closing line; the exit status of the binary. Nothing when listing. */
static inline int tl_summary(void)
{
	if (tl_list)
		return 0;
	printf("%d passed, %d failed, %d skipped\n", tl_passed, tl_failed, tl_skipped);
	return tl_failed ? 1 : 0;
}

/* A test defined with TEST(name) { ... }: a function test_name, listed by
 * the build as TL_TEST(name). */
#define TEST(name)	void test_##name(void)

struct tl_test {
	const char *name;
	void (*fn)(void);
};

/* Run the listed tests in order, then the closing line. */
static inline int tl_main(int argc, char **argv, const struct tl_test *tests, size_t n)
{
	tl_init(argc, argv);
	for (size_t i = 0; i < n; i++)
		tl_run(tests[i].name, tests[i].fn);
	return tl_summary();
}

#endif
