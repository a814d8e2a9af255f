// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Sets, root-free: names, durations, ranges as the fewest prefixes that
 * cover them exactly (checked against the range bit by bit where it is
 * small enough), and every format of a set file with its errors at
 * FILE:LINE, the bounds, the file reader's refusals.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/stat.h>

#include "testlib.h"
#include "model/setfile.h"
#include "model/addr.h"
#include "text/setload.h"
#include "base/log.h"

static const char *fmt(const struct xrl_set_item *it)
{
	static char buf[8][64];
	static int k;
	struct xrl_rule_entry e = { .family = it->family, .prefix_len = it->prefix_len };

	memcpy(e.addr, it->addr, 16);
	k = (k + 1) % 8;
	xrl_prefix_format(&e, buf[k], sizeof(buf[k]));
	return buf[k];
}

/* The range A-B as prefixes, joined by spaces ("" on error). */
static const char *range(const char *s, int *err)
{
	static char out[4096];
	struct xrl_set_list l = {};

	out[0] = '\0';
	*err = xrl_set_elem_parse(s, &l);
	for (size_t i = 0; !*err && i < l.n; i++) {
		strcat(out, i ? " " : "");
		strcat(out, fmt(&l.v[i]));
	}
	xrl_set_list_free(&l);
	return out;
}

static void test_ranges(void)
{
	static const struct { const char *in, *out; } cases[] = {
		{ "0.0.0.0-255.255.255.255", "0.0.0.0/0" },
		{ "198.18.0.1-198.18.0.1", "198.18.0.1/32" },
		{ "0.0.0.0-0.0.0.0", "0.0.0.0/32" },
		{ "255.255.255.255-255.255.255.255", "255.255.255.255/32" },
		{ "255.255.255.0-255.255.255.255", "255.255.255.0/24" },
		{ "198.18.0.0-198.18.0.255", "198.18.0.0/24" },
		{ "198.18.0.1-198.18.0.9", "198.18.0.1/32 198.18.0.2/31 198.18.0.4/30 198.18.0.8/31" },
		{ "198.18.0.0-198.19.255.255", "198.18.0.0/15" },
		{ "198.17.255.255-198.18.0.0", "198.17.255.255/32 198.18.0.0/32" },
		{ "0.0.0.1-255.255.255.254",
		  "0.0.0.1/32 0.0.0.2/31 0.0.0.4/30 0.0.0.8/29 0.0.0.16/28 0.0.0.32/27 0.0.0.64/26 0.0.0.128/25 "
		  "0.0.1.0/24 0.0.2.0/23 0.0.4.0/22 0.0.8.0/21 0.0.16.0/20 0.0.32.0/19 0.0.64.0/18 0.0.128.0/17 "
		  "0.1.0.0/16 0.2.0.0/15 0.4.0.0/14 0.8.0.0/13 0.16.0.0/12 0.32.0.0/11 0.64.0.0/10 0.128.0.0/9 "
		  "1.0.0.0/8 2.0.0.0/7 4.0.0.0/6 8.0.0.0/5 16.0.0.0/4 32.0.0.0/3 64.0.0.0/2 128.0.0.0/2 "
		  "192.0.0.0/3 224.0.0.0/4 240.0.0.0/5 248.0.0.0/6 252.0.0.0/7 254.0.0.0/8 255.0.0.0/9 "
		  "255.128.0.0/10 255.192.0.0/11 255.224.0.0/12 255.240.0.0/13 255.248.0.0/14 255.252.0.0/15 "
		  "255.254.0.0/16 255.255.0.0/17 255.255.128.0/18 255.255.192.0/19 255.255.224.0/20 "
		  "255.255.240.0/21 255.255.248.0/22 255.255.252.0/23 255.255.254.0/24 255.255.255.0/25 "
		  "255.255.255.128/26 255.255.255.192/27 255.255.255.224/28 255.255.255.240/29 "
		  "255.255.255.248/30 255.255.255.252/31 255.255.255.254/32" },
		{ "::-ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "::/0" },
		{ "::-::", "::/128" },
		{ "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff-ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
		  "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff/128" },
		{ "2001:db8::-2001:db8::ffff", "2001:db8::/112" },
		{ "2001:db8::1-2001:db8::2", "2001:db8::1/128 2001:db8::2/128" },
		{ "2001:db8::-2001:db8:ffff:ffff:ffff:ffff:ffff:ffff", "2001:db8::/32" },
		{ "2001:db7:ffff:ffff:ffff:ffff:ffff:ffff-2001:db8::", "2001:db7:ffff:ffff:ffff:ffff:ffff:ffff/128 2001:db8::/128" },
	};
	static const struct { const char *in, *msg; } bad[] = {
		{ "198.18.0.9-198.18.0.1", "first address is above its last" },
		{ "2001:db8::2-2001:db8::1", "first address is above its last" },
		{ "198.18.0.1-2001:db8::1", "an IPv4 and an IPv6 address" },
		{ "198.18.0.0/24-198.18.1.0", "no prefix length" },
		{ "198.18.0.1-", "invalid range" },
		{ "-198.18.0.1", "invalid range" },
		{ "198.18.0.1-x", "invalid range" },
	};
	int err;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *got = range(cases[i].in, &err);

		CHECK(!err, "%s: %s", cases[i].in, xrl_errmsg());
		CHECK(!strcmp(got, cases[i].out), "%s: got '%s', not '%s'", cases[i].in, got, cases[i].out);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		range(bad[i].in, &err);
		CHECK(err == -EINVAL, "%s: refused", bad[i].in);
		CHECK(strstr(xrl_errmsg(), bad[i].msg), "%s: '%s' says '%s'", bad[i].in, xrl_errmsg(), bad[i].msg);
	}
}

/* Ranges of IPv4, exhaustively on small spans: the prefixes cover lo..hi
 * exactly, in order, each aligned, and no two neighbours could be one
 * (the greedy cover is the fewest: a merge would be a larger aligned
 * block inside the range). */
static void test_ranges_exact(void)
{
	unsigned seed = 1;

	for (int t = 0; t < 20000; t++) {
		__u32 lo, hi, next;
		__u8 a[16] = {}, b[16] = {};
		struct xrl_set_list l = {};

		seed = seed * 1103515245 + 12345;
		lo = seed ^ (seed >> 7);
		seed = seed * 1103515245 + 12345;
		hi = lo + (seed % (t % 2 ? 70000 : 600));
		if (hi < lo)
			hi = 0xffffffff;
		{
			__u32 nlo = htonl(lo), nhi = htonl(hi);

			memcpy(a, &nlo, 4);
			memcpy(b, &nhi, 4);
		}
		if (xrl_range_to_prefixes(4, a, b, &l)) {
			CHECK(0, "range %u-%u: %s", lo, hi, xrl_errmsg());
			return;
		}
		next = lo;
		for (size_t i = 0; i < l.n; i++) {
			__u32 p, size = l.v[i].prefix_len ? 1u << (32 - l.v[i].prefix_len) : 0;

			memcpy(&p, l.v[i].addr, 4);	/* the items' addr is unaligned */
			p = ntohl(p);

			if (p != next || (size && (p & (size - 1)))) {
				CHECK(0, "range %u-%u: prefix %zu %s not at %u or not aligned", lo, hi, i, fmt(&l.v[i]), next);
				goto next;
			}
			if (i && l.v[i].prefix_len == l.v[i - 1].prefix_len &&
			    !((p - size) & ((size << 1) - 1)) && size < 0x80000000u) {
				CHECK(0, "range %u-%u: %s and %s make one prefix", lo, hi, fmt(&l.v[i - 1]), fmt(&l.v[i]));
				goto next;
			}
			next = p + size;
		}
		CHECK(next == hi + 1, "range %u-%u covered to %u", lo, hi, next - 1);
next:
		xrl_set_list_free(&l);
	}
}

static void test_names_durations(void)
{
	static const char *good[] = { "a", "bogons", "fire_hol.level-1", "a234567890123456789012345678901", };
	static const char *badn[] = { "", "1st", "_x", "-x", "a b", "a/b", "a@b", "abcdefghijabcdefghijabcdefghijab" };
	__u64 ns;

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		CHECK(!xrl_set_name_check(good[i]), "'%s' is a name: %s", good[i], xrl_errmsg());
	for (size_t i = 0; i < sizeof(badn) / sizeof(badn[0]); i++)
		CHECK(xrl_set_name_check(badn[i]) == -EINVAL, "'%s' is refused", badn[i]);
	CHECK(!xrl_set_timeout_parse("90", &ns) && ns == 90000000000ULL, "90: seconds");
	CHECK(!xrl_set_timeout_parse("5m", &ns) && ns == 300000000000ULL, "5m");
	CHECK(!xrl_set_timeout_parse("2h", &ns) && ns == 7200000000000ULL, "2h");
	CHECK(!xrl_set_timeout_parse("365d", &ns), "365d is the most");
	CHECK(xrl_set_timeout_parse("366d", &ns), "366d is refused");
	CHECK(xrl_set_timeout_parse("0", &ns), "0 is refused");
	CHECK(xrl_set_timeout_parse("-1s", &ns), "a sign is refused");
	CHECK(xrl_set_timeout_parse("1w", &ns), "an unknown unit is refused");
	CHECK(xrl_set_timeout_parse("s", &ns), "a unit alone is refused");
}

/* Parse text as file "f.txt"; the count, or -errno with the message. */
static int parse(const char *text, size_t max, struct xrl_set_list *l)
{
	xrl_set_list_free(l);
	return xrl_set_parse(text, strlen(text), "f.txt", max, l) ?: (int)l->n;
}

static void test_formats(void)
{
	struct xrl_set_list l = {};

	/* one prefix a line, comments, blanks, CRLF, no final newline */
	CHECK(parse("# bogons\n\n198.18.0.0/15\r\n  2001:db8::/32  # doc\n\t198.51.100.7\n198.18.0.1-198.18.0.2", 100, &l) == 5,
	      "plain lines: %s", xrl_errmsg());
	CHECK(!strcmp(fmt(&l.v[2]), "198.51.100.7/32") && !strcmp(fmt(&l.v[4]), "198.18.0.2/32"), "a bare address, a range");
	/* FireHOL .netset */
	CHECK(parse("#\n# firehol_level1\n#\n# ipv4 hash:net ipset\n#\n# Maintainer : FireHOL\n"
		    "# Entries    : 3 subnets\n#\n198.18.0.0/16\n198.51.100.0/24\n203.0.113.0/24\n", 100, &l) == 3,
	      "a FireHOL netset: %s", xrl_errmsg());
	/* ipset save */
	CHECK(parse("create bl hash:net family inet hashsize 1024 maxelem 65536 timeout 600\n"
		    "add bl 198.18.0.0/16 timeout 300\nadd bl 198.51.100.9\nadd bl 198.18.9.0-198.18.9.3 timeout 5\n", 100, &l) == 3,
	      "ipset save: %s", xrl_errmsg());
	CHECK(l.v[0].timeout_ns == 300000000000ULL && l.v[1].timeout_ns == 0 && l.v[2].timeout_ns == 5000000000ULL,
	      "ipset's timeouts are the elements'");
	CHECK(parse("create bl6 hash:net family inet6\nadd bl6 2001:db8::/48\n", 100, &l) == 1, "ipset save, IPv6");
	/* ipset save of a set with every option: the create line's options
	 * are not read, however many */
	CHECK(parse("create bl hash:net family inet hashsize 1024 maxelem 65536 timeout 300 counters comment "
		    "skbinfo bucketsize 12 initval 0x4ad6b5c3\nadd bl 198.18.0.0/16 timeout 30\n", 100, &l) == 1,
	      "ipset save, a long create line: %s", xrl_errmsg());
	/* Spamhaus DROP: ';' comments, whole lines and after the prefix */
	CHECK(parse("; Spamhaus DROP List 2026/01/01 - (c) 2026 The Spamhaus Project SLT\n"
		    "; Last-Modified: Thu, 01 Jan 2026 00:00:00 GMT\n198.18.0.0/20 ; SBL256894\n"
		    "198.51.100.0/24 ; SBL1\n", 100, &l) == 2 && !strcmp(fmt(&l.v[1]), "198.51.100.0/24"),
	      "a Spamhaus DROP list: %s", xrl_errmsg());
	/* a header's comment longer than a line may be */
	{
		char text[2048];

		memset(text, 'x', sizeof(text));
		memcpy(text, "  # ", 4);
		memcpy(text + 1500, "\n198.18.0.1\n", 13);
		text[1513] = '\0';
		CHECK(parse(text, 100, &l) == 1, "a long comment line: %s", xrl_errmsg());
	}
	CHECK(parse("", 100, &l) == 0, "an empty file: an empty set");
	CHECK(parse("# only comments\n\n", 100, &l) == 0, "comments only: an empty set");
}

static void test_format_errors(void)
{
	static const struct { const char *text, *msg; } bad[] = {
		{ "198.18.0.0/15\n198.18.0.0/33\n", "f.txt:2: invalid prefix" },
		{ "198.18.0.0/15\n\n# x\nbogus\n", "f.txt:4: invalid prefix 'bogus'" },
		{ "198.18.0.1 198.18.0.2\n", "f.txt:1: '198.18.0.2': one prefix" },
		{ "198.18.0.1 - 198.18.0.2\n", "f.txt:1: a range is written A-B" },
		{ "198.18.0.1/15\n", "f.txt:1: invalid prefix '198.18.0.1/15': host bits set" },
		{ "::ffff:198.18.0.1\n", "f.txt:1: invalid prefix '::ffff:198.18.0.1': an IPv4-mapped" },
		{ "1.1.1.1\n198.18.0.9-198.18.0.1\n", "f.txt:2: invalid range '198.18.0.9-198.18.0.1': the range's first" },
		{ "create bl hash:ip,port\n", "f.txt:1: ipset type 'hash:ip,port' is not a set of prefixes" },
		{ "create bl hash:net\ncreate b2 hash:net\n", "f.txt:2: a second 'create'" },
		{ "create bl hash:net\nadd other 198.18.0.0/16\n", "f.txt:2: 'add other': the file's set is 'bl'" },
		{ "add bl 198.18.0.0/16 packets 5\n", "f.txt:1: 'packets' after the element" },
		{ "add bl 198.18.0.0/16 packets 5 bytes 9\n", "f.txt:1: too many words" },
		{ "add bl 198.18.0.0/16 timeout x\n", "f.txt:1: invalid timeout 'x'" },
		{ "add bl\n", "f.txt:1: 'add' needs a set name and an element" },
		{ "create bl\n", "f.txt:1: 'create' needs a set name and a type" },
		{ "198.18.0.1\0x\n", "f.txt:1: a NUL byte" },
	};
	struct xrl_set_list l = {};
	char longline[600];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		size_t len = strlen(bad[i].text);

		if (i == sizeof(bad) / sizeof(bad[0]) - 1)
			len = 13;	/* past the NUL */
		xrl_set_list_free(&l);
		CHECK(xrl_set_parse(bad[i].text, len, "f.txt", 100, &l) == -EINVAL, "'%s' is refused", bad[i].text);
		CHECK(strstr(xrl_errmsg(), bad[i].msg), "'%s': '%s' says '%s'", bad[i].text, xrl_errmsg(), bad[i].msg);
	}
	memset(longline, '1', sizeof(longline) - 1);
	longline[sizeof(longline) - 1] = '\0';
	CHECK(parse(longline, 100, &l) == -EINVAL && strstr(xrl_errmsg(), "f.txt:1: line too long"), "a line too long: %s",
	      xrl_errmsg());
	/* the bound counts prefixes, a range's too */
	CHECK(parse("198.18.0.0/24\n198.18.1.1-198.18.1.6\n", 3, &l) == -E2BIG &&
	      strstr(xrl_errmsg(), "f.txt:2: more than 3 prefixes"), "over the bound: %s", xrl_errmsg());
	xrl_set_list_free(&l);
}

/* A file of 2,000,000 lines is refused at the line past the bound. */
static void test_two_million_lines(void)
{
	size_t n = 2000000, len = 0;
	char *buf = malloc(n * 16);
	struct xrl_set_list l = {};
	char want[64];

	CHECK(buf, "memory");
	if (!buf)
		return;
	for (size_t i = 0; i < n; i++)
		len += sprintf(buf + len, "10.%zu.%zu.%zu\n", (i >> 16) & 255, (i >> 8) & 255, i & 255);
	CHECK(xrl_set_parse(buf, len, "big.txt", XRL_SET_MAX_ELEMS, &l) == -E2BIG, "2M lines are refused");
	snprintf(want, sizeof(want), "big.txt:%d: more than %d prefixes", XRL_SET_MAX_ELEMS + 1, XRL_SET_MAX_ELEMS);
	CHECK(strstr(xrl_errmsg(), want), "'%s' says '%s'", xrl_errmsg(), want);
	xrl_set_list_free(&l);
	free(buf);
}

static void test_file_reader(void)
{
	char dir[] = "/tmp/xrl-setfile-XXXXXX", p[128];
	struct xrl_set_list l = {};
	int fd;

	CHECK(mkdtemp(dir), "a temporary directory");
	snprintf(p, sizeof(p), "%s/missing.txt", dir);
	CHECK(xrl_set_file_read(p, &l) == -ENOENT && strstr(xrl_errmsg(), "No such file"), "a missing file: %s",
	      xrl_errmsg());
	CHECK(xrl_set_file_read(dir, &l) == -EISDIR && strstr(xrl_errmsg(), "a directory"), "a directory: %s",
	      xrl_errmsg());
	snprintf(p, sizeof(p), "%s/huge.txt", dir);
	fd = open(p, O_CREAT | O_WRONLY, 0600);
	CHECK(fd >= 0 && !ftruncate(fd, XRL_SET_FILE_MAX + 1), "a sparse file over the bound");
	close(fd);
	CHECK(xrl_set_file_read(p, &l) == -EFBIG && strstr(xrl_errmsg(), "over the 256 MiB"), "a huge file: %s",
	      xrl_errmsg());
	unlink(p);
	snprintf(p, sizeof(p), "%s/ok.netset", dir);
	fd = open(p, O_CREAT | O_WRONLY, 0600);
	CHECK(fd >= 0 && write(fd, "# x\n198.18.0.0/15\nbad\n", 22) == 22, "a file");
	close(fd);
	CHECK(xrl_set_file_read(p, &l) == -EINVAL && strstr(xrl_errmsg(), "ok.netset:3: invalid prefix 'bad'"),
	      "FILE:LINE: %s", xrl_errmsg());
	CHECK(l.n == 0, "nothing kept of a bad file");
	unlink(p);
	CHECK(xrl_set_file_read("/dev/null", &l) == -EINVAL && strstr(xrl_errmsg(), "not a regular file"),
	      "a device: %s", xrl_errmsg());
	rmdir(dir);
}

int main(int argc, char **argv)
{
	tl_init(argc, argv);
	RUN(test_ranges);
	RUN(test_ranges_exact);
	RUN(test_names_durations);
	RUN(test_formats);
	RUN(test_format_errors);
	RUN(test_two_million_lines);
	RUN(test_file_reader);
	return tl_summary();
}
