// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The XDP program, run through BPF_PROG_TEST_RUN on crafted frames with the
 * test clock, its rules applied through libxrl and the CLI grammar. Each
 * test loads a fresh, unpinned instance (harness.h).
 *
 * The tests live one file per feature, tests/bpf/t_*.c, each defined with
 * TEST(name) { ... }; the build writes their list (test_prog_list.h, one
 * TL_TEST(name) per TEST( line), so that a new test is only its definition.
 *   test_prog [-l] [-t GLOB]...
 */
#include "harness.h"

/* each test, run on the CPUs the process started with */
#define TL_TEST(name) TEST(name); static void run_##name(void) { cpus_restore(); test_##name(); }
#include "test_prog_list.h"
#undef TL_TEST

static const struct tl_test tests[] = {
#define TL_TEST(name) { "test_" #name, run_##name },
#include "test_prog_list.h"
#undef TL_TEST
};

int main(int argc, char **argv)
{
	cpus_save();
	if (!getenv("XRL_DEBUG"))
		libbpf_set_print(NULL);
	return tl_main(argc, argv, tests, sizeof(tests) / sizeof(tests[0]));
}
