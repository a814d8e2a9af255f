// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The minimum kernel: the message a load on an older kernel gives (from
 * the probe's results to the words), the list of needs held to what bpf/
 * uses, and the probe on this kernel. Without root (make check): the probe
 * then cannot tell, and counts every need as present.
 */
#include <ctype.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testlib.h"
#include "maps/kernel.h"

static int need_index(const char *name)
{
	for (size_t i = 0; i < xrl_kernel_nneeds; i++)
		if (!strcmp(xrl_kernel_needs[i].name, name))
			return (int)i;
	return -1;
}

static void test_lacks_none(void)
{
	bool missing[64] = { false };
	char buf[256] = "untouched";

	CHECK(xrl_kernel_nneeds <= 64, "%zu needs", xrl_kernel_nneeds);
	CHECK_EQ(xrl_kernel_lacks_format(missing, "5.15.0", buf, sizeof(buf)), 0);
	CHECK(!strcmp(buf, "untouched"), "%s", buf);
}

static void test_lacks_one(void)
{
	bool missing[64] = { false };
	char buf[256];
	int i = need_index("bpf_loop");

	CHECK(i >= 0, "bpf_loop is a need");
	if (i < 0)
		return;
	missing[i] = true;
	CHECK_EQ(xrl_kernel_lacks_format(missing, NULL, buf, sizeof(buf)), 1);
	CHECK(!strcmp(buf, "this kernel lacks bpf_loop (Linux 5.17+); xdp-rl needs Linux 6.0 or later"),
	      "%s", buf);
	CHECK_EQ(xrl_kernel_lacks_format(missing, "5.15.0-91-generic", buf, sizeof(buf)), 1);
	CHECK(!strcmp(buf, "this kernel (Linux 5.15.0-91-generic) lacks bpf_loop (Linux 5.17+); "
			   "xdp-rl needs Linux 6.0 or later"), "%s", buf);
}

static void test_lacks_several(void)
{
	bool missing[64] = { false };
	char buf[512];

	missing[need_index("bpf_loop")] = true;
	missing[need_index("bpf_map_lookup_percpu_elem")] = true;
	CHECK_EQ(xrl_kernel_lacks_format(missing, "5.16.0", buf, sizeof(buf)), 2);
	CHECK(!strcmp(buf, "this kernel (Linux 5.16.0) lacks bpf_map_lookup_percpu_elem (Linux 5.19+) and "
			   "bpf_loop (Linux 5.17+); xdp-rl needs Linux 6.0 or later"), "%s", buf);
	missing[need_index("bpf_check_mtu")] = true;
	CHECK_EQ(xrl_kernel_lacks_format(missing, NULL, buf, sizeof(buf)), 3);
	CHECK(!strcmp(buf, "this kernel lacks bpf_map_lookup_percpu_elem (Linux 5.19+), bpf_loop (Linux 5.17+) "
			   "and bpf_check_mtu (Linux 5.12+); xdp-rl needs Linux 6.0 or later"), "%s", buf);
	/* a buffer too small is cut, never overrun */
	memset(buf, 'x', sizeof(buf));
	xrl_kernel_lacks_format(missing, NULL, buf, 40);
	CHECK(strlen(buf) == 39, "%zu", strlen(buf));
}

static int cmp_release(const char *a, const char *b)
{
	int ma = 0, na = 0, mb = 0, nb = 0;

	sscanf(a, "%d.%d", &ma, &na);
	sscanf(b, "%d.%d", &mb, &nb);
	return ma != mb ? ma - mb : na - nb;
}

/* Newest first, and the minimum is the newest need's release. */
static void test_needs_order(void)
{
	CHECK(!strcmp(xrl_kernel_needs[0].since, XRL_KERNEL_MIN), "%s", xrl_kernel_needs[0].since);
	for (size_t i = 1; i < xrl_kernel_nneeds; i++)
		CHECK(cmp_release(xrl_kernel_needs[i - 1].since, xrl_kernel_needs[i].since) >= 0,
		      "%s before %s", xrl_kernel_needs[i - 1].name, xrl_kernel_needs[i].name);
}

/* Not helpers: bpf_endian.h's macros. */
static bool not_a_helper(const char *name)
{
	static const char *const macros[] = { "bpf_htons", "bpf_ntohs", "bpf_htonl", "bpf_ntohl" };

	for (size_t i = 0; i < sizeof(macros) / sizeof(macros[0]); i++)
		if (!strcmp(name, macros[i]))
			return true;
	return false;
}

/* Every bpf_NAME( call and BPF_MAP_TYPE_NAME of the program's sources is a
 * need: a helper added to bpf/ without its line here fails. */
static void test_needs_cover_sources(void)
{
	const char *pats[] = { "bpf/*.c", "bpf/*.h" };
	size_t files = 0, found = 0;

	for (size_t p = 0; p < 2; p++) {
		glob_t g;

		if (glob(pats[p], 0, NULL, &g))
			continue;
		for (size_t f = 0; f < g.gl_pathc; f++) {
			FILE *fp = fopen(g.gl_pathv[f], "r");
			char line[1024];

			if (!fp)
				continue;
			files++;
			while (fgets(line, sizeof(line), fp)) {
				for (char *s = line; (s = strstr(s, "bpf_")); s++) {
					char name[64];
					size_t n = 0;

					if (s > line && (isalnum((unsigned char)s[-1]) || s[-1] == '_'))
						continue;
					while (n < sizeof(name) - 1 && (isalnum((unsigned char)s[n]) || s[n] == '_'))
						name[n] = s[n], n++;
					name[n] = '\0';
					if (s[n] != '(' || not_a_helper(name))
						continue;
					found++;
					CHECK(need_index(name) >= 0, "%s: %s is not in xrl_kernel_needs", g.gl_pathv[f], name);
				}
				for (char *s = line; (s = strstr(s, "BPF_MAP_TYPE_")); s++) {
					char name[64];
					size_t n = 0;

					while (n < sizeof(name) - 1 && (isalnum((unsigned char)s[n]) || s[n] == '_'))
						name[n] = s[n], n++;
					name[n] = '\0';
					CHECK(need_index(name) >= 0, "%s: %s is not in xrl_kernel_needs", g.gl_pathv[f], name);
				}
			}
			fclose(fp);
		}
		globfree(&g);
	}
	CHECK(files > 0 && found > 0, "read %zu files of bpf/ (run from the tree's top)", files);
}

/* This kernel runs the program: nothing missing, as root or not (without
 * CAP_BPF every probe answers "missing", which the probe takes as "cannot
 * tell": nothing is said). */
static void test_probe_here(void)
{
	char buf[512];

	CHECK_EQ(xrl_kernel_probe(buf, sizeof(buf)), 0);
	CHECK(!buf[0], "%s", buf);
}

int main(int argc, char **argv)
{
	tl_init(argc, argv);
	RUN(test_lacks_none);
	RUN(test_lacks_one);
	RUN(test_lacks_several);
	RUN(test_needs_order);
	RUN(test_needs_cover_sources);
	RUN(test_probe_here);
	return tl_summary();
}
