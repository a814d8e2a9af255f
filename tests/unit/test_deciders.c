// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The deciders' parsers, without root and without a network (make check):
 * the strict JSON reader, Go's durations, CrowdSec's stream answers (what
 * is taken, skipped and counted, what refuses the whole answer), the Local
 * API's URL. The HTTP client and the follower run against the real LAPI
 * and a lying one in tests/e2e/test_crowdsec.sh.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testlib.h"
#include "base/jsonr.h"
#include "base/url.h"
#include "base/log.h"
#include "deciders/crowdsec.h"
#include "text/config.h"

static int parse(const char *s)
{
	struct jr_tok tok[64];
	const char *err = NULL;

	return jr_parse(s, strlen(s), tok, 64, &err);
}

static void test_json_accepts(void)
{
	static const char *const ok[] = {
		"{}", "[]", "null", "0", "-0.5e+3", "\"a\\u00e9\\n\"", " {\"a\" : [1, true, false, null, {}]} ",
		"{\"new\":null,\"deleted\":[]}", "[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]",
	};

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		CHECK(parse(ok[i]) > 0, "refused: %s", ok[i]);
}

static void test_json_refuses(void)
{
	static const char *const bad[] = {
		"", " ", "{", "}", "[1,]", "{\"a\":1,}", "{a:1}", "{'a':1}", "[01]", "[1.]", "[.5]", "[1e]",
		"[+1]", "[NaN]", "[tru]", "nul", "\"abc", "\"a\x01\"", "\"\\x\"", "\"\\u12g4\"", "[1] x",
		"{\"a\" 1}", "{\"a\":}", "[1 2]", "// c\n{}", "{} {}",
		"[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]",	/* 17 deep */
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK(parse(bad[i]) < 0, "accepted: '%s'", bad[i]);
}

static void test_json_bounds(void)
{
	struct jr_tok tok[4];
	const char *err = NULL, *s = "[1,2,3,4]";
	char buf[8];
	long long v;
	int n;

	CHECK(jr_parse(s, strlen(s), tok, 4, &err) < 0 && err && strstr(err, "too many"), "err %s", err);
	CHECK_EQ(jr_parse(s, strlen(s) - 2, tok, 4, &err), (unsigned long long)-1, "a cut text");
	s = "[\"\\ud83d\\ude00\", \"\\udc00\", \"a\\u0000b\", -12, 1.5, 99999999999999999999]";
	{
		struct jr_tok t[16];

		n = jr_parse(s, strlen(s), t, 16, &err);
		CHECK_EQ(n, 7);
		CHECK(jr_str(s, &t[1], buf, sizeof(buf)) && !strcmp(buf, "\xf0\x9f\x98\x80"), "a surrogate pair");
		CHECK(!jr_str(s, &t[2], buf, sizeof(buf)), "a lone low surrogate");
		CHECK(!jr_str(s, &t[3], buf, sizeof(buf)), "a NUL inside");
		CHECK(jr_int(s, &t[4], -100, 100, &v) && v == -12, "an integer");
		CHECK(!jr_int(s, &t[5], -100, 100, &v), "a fraction is no integer");
		CHECK(!jr_int(s, &t[6], 0, 1LL << 62, &v), "past the range");
		CHECK(!jr_str(s, &t[4], buf, sizeof(buf)), "a number is no string");
		CHECK(t[0].span == 7 && t[0].n == 6, "the array spans its elements");
	}
	s = "\"abcdefgh\"";
	n = jr_parse(s, strlen(s), tok, 4, &err);
	CHECK(n == 1 && !jr_str(s, &tok[0], buf, sizeof(buf)), "a string longer than its buffer");
}

static void test_go_durations(void)
{
	static const struct { const char *s; long long ms; } ok[] = {
		{ "0", 0 }, { "0s", 0 }, { "1h59m58.3s", 7198300 }, { "-9.601674ms", -9 },
		{ "4m59.169025456s", 299169 }, { "2m", 120000 }, { "1.5h", 5400000 }, { "300us", 0 },
		{ "1500\xc2\xb5s", 1 }, { "+3s", 3000 }, { ".5s", 500 }, { "1h1ns", 3600000 },
		{ "168h", 604800000LL },
	};
	static const char *const bad[] = {
		"", "-", "1", "s", "1x", "1 s", "1s ", "1.s.", "h1", "--1s", "1d", "1e3s", "999999999999h",
		"1S", ".s",
	};
	long long ms;

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		CHECK(xrl_go_duration_ms(ok[i].s, &ms) && ms == ok[i].ms, "%s: %lld, not %lld", ok[i].s, ms,
		      ok[i].ms);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK(!xrl_go_duration_ms(bad[i], &ms), "accepted: '%s'", bad[i]);
}

/* what the LAPI of Debian 12 sends (checked against it) */
static const char lapi_answer[] =
	"{\"deleted\":[{\"duration\":\"-9.601674ms\",\"id\":1,\"origin\":\"cscli\","
	"\"scenario\":\"manual 'ban' from 'tester'\",\"scope\":\"Ip\",\"type\":\"ban\",\"value\":\"198.18.5.5\"}],"
	"\"new\":[{\"duration\":\"2m56.061299657s\",\"id\":2,\"origin\":\"cscli\",\"scenario\":\"manual 'captcha' from 'tester'\","
	"\"scope\":\"Range\",\"type\":\"captcha\",\"value\":\"198.18.64.0/24\"},"
	"{\"duration\":\"4m59.061298495s\",\"id\":4,\"origin\":\"cscli\",\"scenario\":\"manual 'ban' from 'tester'\","
	"\"scope\":\"Ip\",\"type\":\"ban\",\"value\":\"2001:db8::5\"},"
	"{\"duration\":\"1h\",\"id\":5,\"origin\":\"crowdsec\",\"scenario\":\"crowdsecurity/ssh-bf\","
	"\"scope\":\"Range\",\"type\":\"ban\",\"value\":\"198.51.100.0/24\",\"simulated\":false,\"until\":{\"x\":[1]}},"
	"{\"duration\":\"1h\",\"id\":6,\"origin\":\"crowdsec\",\"scenario\":\"x\",\"scope\":\"Country\",\"type\":\"ban\",\"value\":\"FR\"}]}";

static void test_cs_answer(void)
{
	struct xrl_cs_answer a;

	CHECK_EQ(xrl_cs_parse(lapi_answer, strlen(lapi_answer), &a), 0);
	CHECK_EQ(a.n, 3, "bans taken");
	CHECK_EQ(a.ignored_type, 1, "the captcha");
	CHECK_EQ(a.ignored_scope, 1, "the country");
	CHECK_EQ(a.invalid, 0);
	if (a.n == 3) {
		CHECK(a.v[0].deleted && a.v[0].family == 4 && a.v[0].prefix_len == 32 && a.v[0].ms == -9 &&
		      a.v[0].addr[0] == 198 && a.v[0].addr[3] == 5 && a.v[0].id == 1, "the deleted one");
		CHECK(!a.v[1].deleted && a.v[1].family == 6 && a.v[1].prefix_len == 128 && a.v[1].ms == 299061 &&
		      a.v[1].addr[0] == 0x20 && a.v[1].addr[15] == 5, "the IPv6 ban");
		CHECK(a.v[2].family == 4 && a.v[2].prefix_len == 24 && a.v[2].ms == 3600000 &&
		      !strcmp(a.v[2].scenario, "crowdsecurity/ssh-bf") && !strcmp(a.v[2].origin, "crowdsec"),
		      "the range");
	}
	xrl_cs_answer_free(&a);
	CHECK_EQ(xrl_cs_parse("{\"deleted\":null,\"new\":null}", 27, &a), 0);
	CHECK_EQ(a.n, 0);
	xrl_cs_answer_free(&a);
	CHECK_EQ(xrl_cs_parse("{}", 2, &a), 0, "no member: nothing to do");
	xrl_cs_answer_free(&a);
}

static void test_cs_invalid_elements(void)
{
	/* the right shape, values that are none: skipped, counted, the rest taken */
	static const char s[] = "{\"new\":["
		"{\"type\":\"ban\",\"scope\":\"Ip\",\"value\":\"198.18.300.1\",\"duration\":\"1h\"},"
		"{\"type\":\"ban\",\"scope\":\"Ip\",\"value\":\"198.18.0.0/16\",\"duration\":\"1h\"},"
		"{\"type\":\"ban\",\"scope\":\"Range\",\"value\":\"198.18.0.0/33\",\"duration\":\"1h\"},"
		"{\"type\":\"ban\",\"scope\":\"Ip\",\"value\":\"198.18.0.1\",\"duration\":\"1 hour\"},"
		"{\"type\":\"ban\",\"scope\":\"Ip\",\"value\":\"198.18.0.1\"},"
		"{\"type\":\"ban\",\"scope\":\"Ip\",\"value\":\"::ffff:198.18.0.1\",\"duration\":\"1h\"},"
		"{\"type\":\"BAN\",\"scope\":\"ip\",\"value\":\"198.18.0.2\",\"duration\":\"876000h\"}"
		"]}";
	struct xrl_cs_answer a;

	CHECK_EQ(xrl_cs_parse(s, strlen(s), &a), 0);
	CHECK_EQ(a.invalid, 6);
	CHECK_EQ(a.n, 1);
	CHECK(strstr(a.why, "198.18.300.1"), "the first one is told: %s", a.why);
	if (a.n == 1)
		CHECK(a.v[0].ms == XRL_CS_MAX_DURATION_MS && a.v[0].addr[3] == 2, "cut to the longest: %lld",
		      a.v[0].ms);
	xrl_cs_answer_free(&a);
}

/* a Range wider than /8 (IPv4) or /32 (IPv6) bans nearly everyone: refused */
static void test_cs_wide_ranges(void)
{
	static const char s[] = "{\"new\":["
		"{\"type\":\"ban\",\"scope\":\"Range\",\"value\":\"0.0.0.0/0\",\"duration\":\"1h\"},"
		"{\"type\":\"ban\",\"scope\":\"Range\",\"value\":\"198.0.0.0/7\",\"duration\":\"1h\"},"
		"{\"type\":\"ban\",\"scope\":\"Range\",\"value\":\"::/0\",\"duration\":\"1h\"},"
		"{\"type\":\"ban\",\"scope\":\"Range\",\"value\":\"2001:d00::/31\",\"duration\":\"1h\"},"
		"{\"type\":\"ban\",\"scope\":\"Range\",\"value\":\"198.0.0.0/8\",\"duration\":\"1h\"},"
		"{\"type\":\"ban\",\"scope\":\"Range\",\"value\":\"2001:db8::/32\",\"duration\":\"1h\"}"
		"]}";
	struct xrl_cs_answer a;

	CHECK_EQ(xrl_cs_parse(s, strlen(s), &a), 0);
	CHECK_EQ(a.invalid, 4);
	CHECK_EQ(a.n, 2);
	CHECK(strstr(a.why, "'0.0.0.0/0' is wider than /8"), "told: %s", a.why);
	if (a.n == 2)
		CHECK(a.v[0].prefix_len == 8 && a.v[1].prefix_len == 32, "/%u /%u", a.v[0].prefix_len,
		      a.v[1].prefix_len);
	xrl_cs_answer_free(&a);
}

static void test_cs_refused(void)
{
	static const char *const bad[] = {
		"", "garbage", "[]", "null", "\"new\"", "{\"new\":{}}", "{\"new\":\"x\"}", "{\"deleted\":5}",
		"{\"new\":[1]}", "{\"new\":[[]]}", "{\"new\":[{\"value\":5,\"type\":\"ban\"}]}",
		"{\"new\":[{\"type\":true}]}", "{\"new\":[{\"duration\":null}]}", "{\"new\":[{\"id\":\"1\"}]}",
		"{\"new\":[{\"id\":-1}]}", "{\"new\":[{\"id\":1.5}]}", "{\"new\":[]", "{\"new\":[]}x",
		"<html><body>502 Bad Gateway</body></html>",
	};
	struct xrl_cs_answer a;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int err = xrl_cs_parse(bad[i], strlen(bad[i]), &a);

		CHECK(err == -EPROTO, "'%s': %d", bad[i], err);
		CHECK(!a.v && !a.n, "nothing left");
	}
	/* over the cap: refused before it is read */
	CHECK_EQ(xrl_cs_parse("{}", XRL_CS_MAX_BODY_MAX + 1ull, &a), (unsigned long long)-EMSGSIZE);
}

static void test_cs_many(void)
{
	/* 20,000 decisions: one allocation each way, linear */
	size_t n = 20000, cap = n * 120 + 32, o = 0;
	char *s = malloc(cap);
	struct xrl_cs_answer a;

	o += snprintf(s + o, cap - o, "{\"new\":[");
	for (size_t i = 0; i < n; i++)
		o += snprintf(s + o, cap - o, "%s{\"type\":\"ban\",\"scope\":\"Ip\",\"value\":\"198.18.%zu.%zu\",\"duration\":\"1h\"}",
			      i ? "," : "", i / 250, i % 250);
	o += snprintf(s + o, cap - o, "]}");
	CHECK_EQ(xrl_cs_parse(s, o, &a), 0);
	CHECK_EQ(a.n, n);
	xrl_cs_answer_free(&a);
	free(s);
}

static void test_url(void)
{
	static const struct { const char *url; const char *host; int port; } ok[] = {
		{ "http://127.0.0.1:8080", "127.0.0.1", 8080 }, { "http://127.0.0.1:8080/", "127.0.0.1", 8080 },
		{ "http://[::1]:1", "::1", 1 }, { "http://198.18.0.1:65535", "198.18.0.1", 65535 },
	};
	static const char *const bad[] = {
		"127.0.0.1:8080", "https://127.0.0.1:8080", "http://localhost:8080", "http://127.0.0.1",
		"http://127.0.0.1:0", "http://127.0.0.1:65536", "http://127.0.0.1:80/v1", "http://u@127.0.0.1:80",
		"http://[::1]", "http://::1:80", "http://127.0.0.1:+80", "http://:80", "http://127.0.0.1:80?x",
	};
	char host[64], why[160];
	int port;

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		CHECK(!xrl_http_url_parse(ok[i].url, host, sizeof(host), &port, why, sizeof(why)) &&
		      !strcmp(host, ok[i].host) && port == ok[i].port, "%s", ok[i].url);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK(xrl_http_url_parse(bad[i], host, sizeof(host), &port, why, sizeof(why)) == -EINVAL && why[0],
		      "accepted: %s", bad[i]);
	xrl_http_url_parse("https://127.0.0.1:1", host, sizeof(host), &port, why, sizeof(why));
	CHECK(strstr(why, "https is not supported"), "%s", why);
}

/* the configuration's lines: a crowdsec URL as the follower would take it,
 * a fleet ban refused (the command line's) */
static void test_config_lines(void)
{
	static const struct { const char *text; int line, col; const char *msg; } bad[] = {
		{ "crowdsec https://127.0.0.1:8080 key-file k\n", 1, 10, "https is not supported" },
		{ "crowdsec http://127.0.0.1:8080 key-file k\ncrowdsec http://127.0.0.1:8081 key-file k\n", 2, 1, "crowdsec" },
		{ "ban add 198.51.100.7 for 1h scope fleet\n", 1, 35, "'scope fleet' is xdp-rlctl's" },
		{ "crowdsec http://127.0.0.1:8080 key-file k max-body 65\n", 1, 52, "1 .. 64" },
	};
	struct xrl_config_err *errs = NULL;
	struct xrl_config c;
	size_t n = 0;

	CHECK_EQ(xrl_config_parse_text("t.conf", "crowdsec http://127.0.0.1:8080 key-file /k poll 500 timeout 100 max-body 20\n",
				       &c, &errs, &n), 0);
	CHECK(!strcmp(c.crowdsec.url, "http://127.0.0.1:8080") && !strcmp(c.crowdsec.key_file, "/k") &&
	      c.crowdsec.poll_ms == 500 && c.crowdsec.timeout_ms == 100 && c.crowdsec.max_body_mb == 20 &&
	      c.crowdsec_line == 1, "the settings");
	xrl_config_free(&c);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		errs = NULL;
		n = 0;
		CHECK(xrl_config_parse_text("t.conf", bad[i].text, &c, &errs, &n) == -EINVAL && n >= 1, "%s", bad[i].text);
		if (n >= 1)
			CHECK(errs[0].line == bad[i].line && errs[0].col == bad[i].col && strstr(errs[0].msg, bad[i].msg),
			      "%s: %d:%d: %s", bad[i].text, errs[0].line, errs[0].col, errs[0].msg);
		free(errs);
		xrl_config_free(&c);
	}
}

int main(int argc, char **argv)
{
	tl_init(argc, argv);
	RUN(test_json_accepts);
	RUN(test_json_refuses);
	RUN(test_json_bounds);
	RUN(test_go_durations);
	RUN(test_cs_answer);
	RUN(test_cs_invalid_elements);
	RUN(test_cs_wide_ranges);
	RUN(test_cs_refused);
	RUN(test_cs_many);
	RUN(test_url);
	RUN(test_config_lines);
	return tl_summary();
}
