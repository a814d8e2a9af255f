// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* xdp-rlctl: replay. The library runs the capture; this reads the rules
 * and prints. */
#include "rlctl.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "text/config.h"

/* "2024-10-20T00:37:36.123456789Z" */
static void utc_format(__u64 ns, char *buf, size_t len)
{
	time_t s = ns / 1000000000ULL;
	struct tm tm;
	char d[32];

	gmtime_r(&s, &tm);
	strftime(d, sizeof(d), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, len, "%s.%09lluZ", d, (unsigned long long)(ns % 1000000000ULL));
}

/* seconds after the first frame, "12.345678" */
static void offset_format(__u64 ns, __u64 first, char *buf, size_t len)
{
	__u64 d = ns - first;

	snprintf(buf, len, "%llu.%06llu", (unsigned long long)(d / 1000000000ULL),
		 (unsigned long long)(d % 1000000000ULL / 1000));
}

/* The rules of the configuration file; its errors as the daemon's --check
 * prints them. */
static int config_rules(const char *path, struct xrl_rule_entry **v, size_t *n)
{
	struct xrl_config_err *errs = NULL;
	struct xrl_config cfg;
	size_t nerrs = 0;
	int err = xrl_config_load(path, &cfg, &errs, &nerrs);

	if (err == -ENOENT || (err && !nerrs)) {
		p_err("cannot read %s: %s", path, strerror(-err));
		free(errs);
		return 1;
	}
	if (err) {
		for (size_t i = 0; i < nerrs; i++)
			p_err("%s:%d:%d: %s", path, errs[i].line, errs[i].col, errs[i].msg);
		free(errs);
		xrl_config_free(&cfg);
		return 1;
	}
	*v = cfg.rules;
	*n = cfg.nrules;
	cfg.rules = NULL;
	xrl_config_free(&cfg);
	return 0;
}

static void print_json(const struct xrl_cmd *c, const char *from,
		       const struct xrl_replay_result *r)
{
	unsigned long long would = 0;
	char a[64];

	for (size_t i = 0; i < r->nrules; i++)
		would += r->rules[i].stats.would_drop_packets;

	jw_obj_start(&jw);
	jw_kstr(&jw, "capture", c->replay.capture);
	jw_kstr(&jw, "rules_from", from);
	jw_kstr(&jw, "linktype", r->linktype_name);
	jw_ku64(&jw, "frames", r->frames);
	jw_ku64(&jw, "run", r->run);
	jw_ku64(&jw, "skipped_short", r->skipped_short);
	jw_ku64(&jw, "truncated", r->truncated);
	jw_ku64(&jw, "cut_in_headers", r->cut_in_headers);
	jw_ku64(&jw, "oversize", r->oversize);
	jw_ku64(&jw, "converted", r->converted);
	jw_ku64(&jw, "clock_backwards", r->clock_backwards);
	jw_ku64(&jw, "first_ns", r->first_ns);
	jw_ku64(&jw, "last_ns", r->last_ns);
	jw_ku64(&jw, "duration_ns", r->last_ns - r->first_ns);
	if (r->stopped[0])
		jw_kstr(&jw, "stopped", r->stopped);
	jw_ku64(&jw, "passed_packets", r->passed);
	jw_ku64(&jw, "dropped_packets", r->dropped);
	jw_ku64(&jw, "answered_packets", r->answered);
	jw_ku64(&jw, "would_drop_packets", would);
	jw_ku64(&jw, "unmatched_packets", r->global.unmatched_packets);
	jw_ku64(&jw, "non_ip_packets", r->global.non_ip_packets);
	jw_ku64(&jw, "malformed_packets", r->global.malformed_packets);
	jw_key(&jw, "rules");
	jw_arr_start(&jw);
	for (size_t i = 0; i < r->nrules; i++) {
		const struct xrl_rule_stats *s = &r->rules[i].stats;

		jw_obj_start(&jw);
		xrl_rule_json(&jw, &r->rules[i].rule);
		jw_ku64(&jw, "passed_packets", s->passed_packets);
		jw_ku64(&jw, "dropped_packets", s->dropped_packets);
		jw_ku64(&jw, "passed_bytes", s->passed_bytes);
		jw_ku64(&jw, "dropped_bytes", s->dropped_bytes);
		/* passed although the rule said drop: its dry-run */
		jw_ku64(&jw, "would_drop_packets", s->would_drop_packets);
		jw_ku64(&jw, "would_drop_bytes", s->would_drop_bytes);
		jw_ku64(&jw, "new_keys", s->new_keys);
		if (r->rules[i].rule.r.syncookies) {
			const struct xrl_sc_stats *sc = &r->rules[i].sc;

			jw_ku64(&jw, "syn_cookies_sent", sc->cookies_sent);
			jw_ku64(&jw, "syn_cookie_acks_valid", sc->acks_valid);
			jw_ku64(&jw, "syn_cookie_acks_invalid", sc->acks_invalid);
			jw_ku64(&jw, "syn_cookie_sources_verified", sc->verified);
			jw_ku64(&jw, "syn_cookie_unverified_dropped", sc->unverified_dropped);
		}
		jw_ku64(&jw, "slipped_packets", s->slipped_packets);
		jw_obj_end(&jw);
	}
	jw_arr_end(&jw);
	jw_key(&jw, "limited_keys");
	jw_arr_start(&jw);
	for (size_t i = 0; i < r->nkeys; i++) {
		const struct xrl_replay_key *k = &r->keys[i];
		char key[80];

		xrl_addr_format(k->family, k->addr, a, sizeof(a));
		snprintf(key, sizeof(key), "%s/%u", a, k->key_len);
		jw_obj_start(&jw);
		jw_kstr(&jw, "key", key);
		jw_ku64(&jw, "rule", k->rule_id);
		jw_ku64(&jw, "dropped_packets", k->dropped);
		jw_kbool(&jw, "dry_run", k->dry_run);	/* its drops were would-drops */
		jw_ku64(&jw, "first_drop_ns", k->first_drop_ns);
		jw_ku64(&jw, "last_drop_ns", k->last_drop_ns);
		/* after the first frame: exact even as a double */
		jw_ku64(&jw, "first_drop_offset_ns", k->first_drop_ns - r->first_ns);
		jw_ku64(&jw, "last_drop_offset_ns", k->last_drop_ns - r->first_ns);
		jw_obj_end(&jw);
	}
	jw_arr_end(&jw);
	jw_obj_end(&jw);
	jw_finish(&jw);
}

static void print_text(const struct xrl_cmd *c, const char *from,
		       const struct xrl_replay_result *r)
{
	char t0[40], t1[40], off[32];

	utc_format(r->first_ns, t0, sizeof(t0));
	utc_format(r->last_ns, t1, sizeof(t1));
	offset_format(r->last_ns, r->first_ns, off, sizeof(off));
	printf("capture %s: %llu frames (%s), %s .. %s (%s s)\n", c->replay.capture,
	       (unsigned long long)r->frames, r->linktype_name, t0, t1, off);
	printf("rules from %s\n", from);
	if (r->stopped[0])
		printf("note: the capture ends early (%s): the frames before it are replayed\n",
		       r->stopped);
	if (r->skipped_short)
		printf("note: %llu frames shorter than an Ethernet header (14 bytes) skipped: "
		       "the kernel cannot run them\n", (unsigned long long)r->skipped_short);
	if (r->truncated)
		printf("note: %llu frames cut by the snaplen: run zero-filled to their length on the wire "
		       "(the verdict reads the headers only)\n", (unsigned long long)r->truncated);
	if (r->cut_in_headers)
		printf("note: %llu frames cut inside their headers: run as captured (malformed)\n",
		       (unsigned long long)r->cut_in_headers);
	if (r->oversize)
		printf("note: %llu frames over %d bytes: run cut to %d (same verdict; bytes counted as run)\n",
		       (unsigned long long)r->oversize, XRL_REPLAY_MAX_FRAME, XRL_REPLAY_MAX_FRAME);
	if (r->converted)
		printf("note: %llu frames given an Ethernet header (%s)\n",
		       (unsigned long long)r->converted, r->linktype_name);
	if (r->clock_backwards)
		printf("note: %llu frames stamped earlier than the frame before them: run in file order\n",
		       (unsigned long long)r->clock_backwards);
	printf("%-6s %-28s %-7s %-9s %10s %12s %12s %14s %14s %10s\n", "ID", "PREFIX", "ACTION",
	       "RATE", "BURST", "PASSED", "DROPPED", "PASSED_BYTES", "DROPPED_BYTES", "NEW_KEYS");
	for (size_t i = 0; i < r->nrules; i++) {
		const struct xrl_rule_entry *e = &r->rules[i].rule;
		const struct xrl_rule_stats *s = &r->rules[i].stats;
		char pfx[64], rate[32], burst[16];

		rule_fields(e, pfx, sizeof(pfx), rate, sizeof(rate));
		xrl_rule_burst_format(&e->r, burst, sizeof(burst));	/* "-": none */
		printf("%-6u %-28s %-7s %-9s %10s %12llu %12llu %14llu %14llu %10llu\n",
		       e->r.id, pfx, xrl_action_name(e->r.action), rate, burst,
		       (unsigned long long)s->passed_packets, (unsigned long long)s->dropped_packets,
		       (unsigned long long)s->passed_bytes, (unsigned long long)s->dropped_bytes,
		       (unsigned long long)s->new_keys);
	}
	printf("unmatched %llu, non-ip %llu, malformed %llu; passed %llu, dropped %llu\n",
	       (unsigned long long)r->global.unmatched_packets,
	       (unsigned long long)r->global.non_ip_packets,
	       (unsigned long long)r->global.malformed_packets,
	       (unsigned long long)r->passed, (unsigned long long)r->dropped);
	if (r->answered)
		printf("answered %llu (DNS slip, SYN cookies: an answer sent back, neither passed nor dropped)\n",
		       (unsigned long long)r->answered);
	for (size_t i = 0; i < r->nrules; i++) {
		const struct xrl_sc_stats *sc = &r->rules[i].sc;

		if (r->rules[i].rule.r.syncookies)
			printf("rule %u syn-cookies: sent %llu, ACKs valid %llu, invalid %llu, sources verified %llu, other unverified dropped %llu\n",
			       r->rules[i].rule.r.id, (unsigned long long)sc->cookies_sent,
			       (unsigned long long)sc->acks_valid, (unsigned long long)sc->acks_invalid,
			       (unsigned long long)sc->verified, (unsigned long long)sc->unverified_dropped);
	}
	for (size_t i = 0; i < r->nrules; i++)
		if (r->rules[i].stats.slipped_packets)
			printf("rule %u slip %u: answered %llu\n", r->rules[i].rule.r.id,
			       r->rules[i].rule.r.slip,
			       (unsigned long long)r->rules[i].stats.slipped_packets);
	for (size_t i = 0; i < r->nrules; i++)	/* passed, but the rule said drop */
		if (r->rules[i].stats.would_drop_packets)
			printf("rule %u dry-run: would have dropped %llu packets, %llu bytes\n",
			       r->rules[i].rule.r.id,
			       (unsigned long long)r->rules[i].stats.would_drop_packets,
			       (unsigned long long)r->rules[i].stats.would_drop_bytes);
	printf("limited keys: %zu\n", r->nkeys);
	if (!r->nkeys)
		return;
	printf("%-44s %-6s %12s %-14s %-30s %s\n", "KEY", "RULE", "DROPPED", "FIRST_DROP_S",
	       "FIRST_DROP", "LAST_DROP_S");
	for (size_t i = 0; i < r->nkeys; i++) {
		const struct xrl_replay_key *k = &r->keys[i];
		char a[64], key[80], first[40], o1[32], o2[32];

		xrl_addr_format(k->family, k->addr, a, sizeof(a));
		snprintf(key, sizeof(key), "%s/%u", a, k->key_len);
		utc_format(k->first_drop_ns, first, sizeof(first));
		offset_format(k->first_drop_ns, r->first_ns, o1, sizeof(o1));
		offset_format(k->last_drop_ns, r->first_ns, o2, sizeof(o2));
		printf("%-44s %-6u %12llu %-14s %-30s %s%s\n", key, k->rule_id,
		       (unsigned long long)k->dropped, o1, first, o2,
		       k->dry_run ? " (dry-run: would-drops)" : "");
	}
}

int do_replay(struct xrl_cmd *c)
{
	struct xrl_replay_result r;
	struct xrl_rule_entry *v = NULL;
	char from[PATH_MAX + 32];
	size_t n = 0;
	bool walk;
	int err;

	if (c->replay.config[0]) {
		if (config_rules(c->replay.config, &v, &n))
			return 1;
		snprintf(from, sizeof(from), "%s", c->replay.config);
	} else {
		struct xrl *x;

		/* the running instance's rule set, read without a lock and
		 * without changing anything */
		if (open_reader(&x))
			return 1;
		err = xrl_rules_get(x, &v, &n);
		snprintf(from, sizeof(from), "the pins (%s)", xrl_pin_dir(x));
		xrl_close(x);
		if (err) {
			p_err("%s", xrl_errmsg());
			return 1;
		}
	}
	/* XRL_REPLAY_WALK=1: the first, slow way of finding the keys
	 * limited, to check the default one against (docs/replay.md) */
	walk = getenv("XRL_REPLAY_WALK") && !strcmp(getenv("XRL_REPLAY_WALK"), "1");
	err = xrl_replay_flags(c->replay.capture, v, n, walk ? XRL_REPLAY_WALK : 0, &r);
	free(v);
	print_warnings();
	if (err) {
		p_err("%s", xrl_errmsg());
		xrl_replay_free(&r);
		return 1;
	}
	if (opt.json)
		print_json(c, from, &r);
	else
		print_text(c, from, &r);
	xrl_replay_free(&r);
	return 0;
}
