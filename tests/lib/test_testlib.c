// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The harness's own cases, for tests/lib/test_testlib.sh: one test that
 * passes, one that skips; with XRL_TESTLIB_FAIL set, one that fails.
 */
#include "testlib.h"

static void test_passes(void)
{
	CHECK_EQ(1 + 1, 2, "one plus one");
}

static void test_skips(void)
{
	SKIP("nothing to run here");
	CHECK(0, "not reached after SKIP");
}

static void test_fails(void)
{
	if (!getenv("XRL_TESTLIB_FAIL"))
		return;
	CHECK_EQ(1 + 1, 3, "a planted failure");
}

int main(int argc, char **argv)
{
	tl_init(argc, argv);
	RUN(test_passes);
	RUN(test_skips);
	RUN(test_fails);
	return tl_summary();
}
