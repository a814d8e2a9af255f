// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xdp-rlctl: the operator's command line. Parsing is in cmd.c, every map
 * and attach operation in libxrl; this file only runs and prints.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "grammar.h"
#include "json.h"
#include "libxrl.h"
#include "xrl_meter.h"

#define EXIT_USAGE 2

static struct {
	bool json;
	bool pretty;
	const char *pin_dir;
} opt;

static struct jw jw;

/* One message on stderr: {"error": ...} under -j, else "Error: ...". */
static void p_msg(const char *kind, const char *label, const char *fmt, va_list ap)
{
	char msg[600];

	if (vsnprintf(msg, sizeof(msg), fmt, ap) >= (int)sizeof(msg))
		xrl_utf8_trim(msg);	/* never cut a character in two */
	if (opt.json) {
		struct jw e;

		jw_init(&e, stderr, false);
		jw_obj_start(&e);
		jw_kstr(&e, kind, msg);
		jw_obj_end(&e);
		jw_finish(&e);
	} else {
		fprintf(stderr, "%s: %s\n", label, msg);
	}
}

__attribute__((format(printf, 1, 2)))
static void p_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	p_msg("error", "Error", fmt, ap);
	va_end(ap);
}

__attribute__((format(printf, 1, 2)))
static void p_note(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	p_msg("note", "Note", fmt, ap);
	va_end(ap);
}

/* Warnings of libxrl come while the lock is held: kept, printed after.
 * Debug lines (libbpf's, with XRL_DEBUG=1) go out at once. */
static char warnings[1024];

static void cli_log(enum xrl_log_level level, const char *msg)
{
	size_t l = strlen(warnings);

	if (level > XRL_LOG_WARN) {
		fprintf(stderr, "%s\n", msg);
		return;
	}
	snprintf(warnings + l, sizeof(warnings) - l, "%s%s", l ? "\n" : "", msg);
}

static void print_warnings(void)
{
	char *line = warnings, *nl;

	while (*line) {
		nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		if (opt.json) {
			struct jw e;

			jw_init(&e, stderr, false);
			jw_obj_start(&e);
			jw_kstr(&e, "warning", line);
			jw_obj_end(&e);
			jw_finish(&e);
		} else {
			fprintf(stderr, "Warning: %s\n", line);
		}
		if (!nl)
			break;
		line = nl + 1;
	}
	warnings[0] = '\0';
}

static void usage(FILE *f)
{
	fprintf(f, "Usage: xdp-rlctl [-j|--json] [-p|--pretty] [--pin-dir DIR] COMMAND ...\n"
		   "Commands:\n");
	xrl_usage(f, XRL_IN_CLI, NULL);
	fprintf(f, "See xdp-rlctl(8).\n");
}

/* Readers (status, rule list, stats, show, top) take no lock: each map
 * element is read atomically, and a reader stuck on a full pipe must not
 * stall the daemon or a writer. */
static int open_reader(struct xrl **x)
{
	struct xrl_open_opts o = { .pin_dir = opt.pin_dir, .no_lock = true };

	if (xrl_open(&o, x)) {
		p_err("%s", xrl_errmsg());
		return -1;
	}
	return 0;
}

/* Writers return from here with the lock held; they do their map and pin
 * operations, then unlock() before they print anything. */
static int open_writer(struct xrl **x, bool create, __u32 keys)
{
	struct xrl_open_opts o = { .pin_dir = opt.pin_dir, .create = create, .keys = keys };

	if (xrl_open(&o, x)) {
		p_err("%s", xrl_errmsg());
		return -1;
	}
	return 0;
}

/* A writer's failure, kept until the lock is released. */
static char emsg[1024];

__attribute__((format(printf, 1, 2)))
static int set_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (vsnprintf(emsg, sizeof(emsg), fmt, ap) >= (int)sizeof(emsg))
		xrl_utf8_trim(emsg);
	va_end(ap);
	return -1;
}

/* End of a writer's locked part. A failed command changes nothing: a new
 * instance that xrl_open() created for it goes away again. */
static void unlock(struct xrl *x, int err)
{
	if (err && xrl_created(x) && xrl_discard(x)) {
		size_t l = strlen(emsg);

		snprintf(emsg + l, sizeof(emsg) - l, "; and the new instance could not be removed: %s",
			 xrl_errmsg());
	}
	xrl_unlock(x);
	print_warnings();
}

static void rule_fields(const struct xrl_rule_entry *e, char *pfx, size_t plen,
			char *rate, size_t rlen)
{
	xrl_prefix_format(e, pfx, plen);
	if (e->r.action == XRL_ACT_LIMIT)
		xrl_rate_format(e->r.rate_count, e->r.rate_period_ns, rate, rlen);
	else
		snprintf(rate, rlen, "-");
}

/* ---- commands ---- */

static int do_attach(struct xrl_cmd *c)
{
	enum xrl_xdp_mode got;
	struct xrl *x;
	int err;

	/* checked before anything is created */
	if (!if_nametoindex(c->ifname)) {
		p_err("unknown interface '%s'", c->ifname);
		return 1;
	}
	if (open_writer(&x, true, c->keys))
		return 1;
	err = xrl_attach(x, c->ifname, c->xdp_mode, &got);
	if (err)
		set_err("%s", xrl_errmsg());
	unlock(x, err);
	if (err) {
		p_err("%s", emsg);
	} else if (opt.json) {
		jw_obj_start(&jw);
		jw_kstr(&jw, "ifname", c->ifname);
		jw_kstr(&jw, "mode", xrl_xdp_mode_name(got));
		jw_obj_end(&jw);
		jw_finish(&jw);
	} else {
		printf("attached to %s (%s mode)\n", c->ifname, xrl_xdp_mode_name(got));
	}
	xrl_close(x);
	return err ? 1 : 0;
}

static int do_detach(struct xrl_cmd *c)
{
	struct xrl_attachment *a = NULL;
	bool purged = false, detached = true;
	struct xrl *x;
	size_t n = 0;
	int err;

	if (open_writer(&x, false, 0))
		return 1;
	err = xrl_detach(x, c->ifname);
	if (err == -ENOENT && c->purge) {
		/* Not attached there. With nothing attached anywhere, purge
		 * still removes the pins: a leftover instance is removable. */
		set_err("%s", xrl_errmsg());
		if (xrl_attachments(x, &a, &n) == 0 && n == 0) {
			detached = false;
			err = 0;
		}
	} else if (err) {
		set_err("%s", xrl_errmsg());
	}
	if (!err && c->purge) {
		free(a);
		a = NULL;
		err = xrl_attachments(x, &a, &n);
		if (!err && n == 0) {
			err = xrl_purge(x);
			purged = !err;
		}
		if (err && detached)
			set_err("detached from %s, but %s", c->ifname, xrl_errmsg());
		else if (err)
			set_err("%s", xrl_errmsg());
	}
	unlock(x, err);
	if (err) {
		p_err("%s", emsg);
		goto out;
	}
	if (opt.json) {
		jw_obj_start(&jw);
		jw_kstr(&jw, "ifname", c->ifname);
		jw_kbool(&jw, "detached", detached);
		jw_kbool(&jw, "purged", purged);
		jw_ku64(&jw, "still_attached", n);
		jw_obj_end(&jw);
		jw_finish(&jw);
	} else {
		if (detached)
			printf("detached from %s\n", c->ifname);
		else
			printf("not attached to %s, and nothing else is attached either\n", c->ifname);
		if (purged)
			printf("removed the pins under %s\n", opt.pin_dir ? opt.pin_dir : XRL_DEFAULT_PIN_DIR);
		else if (c->purge)
			printf("pins kept: still attached to %zu interface(s)\n", n);
	}
out:
	free(a);
	xrl_close(x);
	return err ? 1 : 0;
}

static int do_status(struct xrl_cmd *c)
{
	struct xrl_attachment *a = NULL;
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	long long hb_age;
	unsigned long long keys4 = 0, keys6 = 0;
	__u64 wd;
	struct xrl *x;
	size_t n = 0;

	(void)c;
	if (open_reader(&x))
		return 1;
	/* each family has its own table: tracked and capacity per family */
	if (xrl_attachments(x, &a, &n) || xrl_keys_tracked_family(x, 4, &keys4) ||
	    xrl_keys_tracked_family(x, 6, &keys6)) {
		p_err("%s", xrl_errmsg());
		xrl_close(x);
		return 1;
	}
	bpf_obj_get_info_by_fd(xrl_prog_fd(x), &info, &len);
	hb_age = xrl_heartbeat_age(x);
	wd = xrl_control(x)->watchdog_ns;
	if (opt.json) {
		jw_obj_start(&jw);
		jw_kstr(&jw, "pin_dir", xrl_pin_dir(x));
		jw_ku64(&jw, "prog_id", info.id);
		jw_kstr(&jw, "mode", xrl_mode_name(xrl_mode_get(x)));
		jw_ku64(&jw, "rules", xrl_control(x)->rules);
		jw_key(&jw, "keys_tracked");
		jw_obj_start(&jw);
		jw_ku64(&jw, "ipv4", keys4);
		jw_ku64(&jw, "ipv6", keys6);
		jw_obj_end(&jw);
		jw_key(&jw, "keys_capacity");
		jw_obj_start(&jw);
		jw_ku64(&jw, "ipv4", xrl_keys_capacity_family(x, 4));
		jw_ku64(&jw, "ipv6", xrl_keys_capacity_family(x, 6));
		jw_obj_end(&jw);
		jw_key(&jw, "daemon");
		jw_obj_start(&jw);
		jw_kbool(&jw, "heartbeating", xrl_heartbeating(x));
		jw_key(&jw, "heartbeat_age_ms");
		if (hb_age >= 0)
			jw_u64(&jw, hb_age / 1000000);
		else
			jw_null(&jw);
		jw_ku64(&jw, "heartbeat_interval_ms", xrl_control(x)->heartbeat_interval_ms);
		jw_ku64(&jw, "watchdog_ms", wd / 1000000);
		jw_kbool(&jw, "watchdog_fired", hb_age >= 0 && wd && (__u64)hb_age > wd);
		jw_obj_end(&jw);
		jw_key(&jw, "interfaces");
		jw_arr_start(&jw);
		for (size_t i = 0; i < n; i++) {
			jw_obj_start(&jw);
			jw_kstr(&jw, "ifname", a[i].ifname);
			jw_ku64(&jw, "ifindex", a[i].ifindex);
			jw_kstr(&jw, "xdp_mode", xrl_xdp_mode_name(a[i].mode));
			jw_ku64(&jw, "prog_id", a[i].prog_id);
			jw_kbool(&jw, "link_up", a[i].ifindex != 0);
			jw_obj_end(&jw);
		}
		jw_arr_end(&jw);
		jw_obj_end(&jw);
		jw_finish(&jw);
	} else {
		printf("pin dir:     %s\n", xrl_pin_dir(x));
		printf("program id:  %u\n", info.id);
		printf("mode:        %s\n", xrl_mode_name(xrl_mode_get(x)));
		printf("rules:       %u\n", xrl_control(x)->rules);
		printf("keys IPv4:   %llu tracked / %u capacity\n", keys4,
		       xrl_keys_capacity_family(x, 4));
		printf("keys IPv6:   %llu tracked / %u capacity\n", keys6,
		       xrl_keys_capacity_family(x, 6));
		if (hb_age < 0)
			printf("daemon:      none has heartbeated\n");
		else
			printf("daemon:      %s, last heartbeat %.1f s ago (watchdog %s%s)\n",
			       xrl_heartbeating(x) ? "heartbeating" : "not heartbeating", hb_age / 1e9,
			       wd ? "" : "off", !wd ? "" : (__u64)hb_age > wd ? "fired: rules follow on-failure" : "armed");
		printf("interfaces:  %s\n", n ? "" : "none");
		for (size_t i = 0; i < n; i++) {
			if (a[i].ifindex)
				printf("  %-16s %-8s ifindex %u\n", a[i].ifname,
				       xrl_xdp_mode_name(a[i].mode), a[i].ifindex);
			else
				printf("  %-16s gone (link detached; 'detach dev %s' to clean up)\n",
				       a[i].ifname, a[i].ifname);
		}
	}
	free(a);
	xrl_close(x);
	return 0;
}

/* A daemon heartbeats into the control block: its next reload puts the
 * file's rule set and mode back (see xdp-rld(8)). */
static void note_daemon(struct xrl *x)
{
	if (xrl_heartbeating(x))
		p_note("xdp-rld is running; this change lasts until its next reload");
}

/* Read the rule set, let `edit` change it, commit it as one transaction. */
static int edit_rules(struct xrl_cmd *c, bool create,
		      int (*edit)(struct xrl_cmd *c, struct xrl_rule_entry **v, size_t *n))
{
	struct xrl_rule_entry *v = NULL;
	struct xrl *x;
	size_t n = 0;
	int err;

	if (open_writer(&x, create, 0))
		return 1;
	err = xrl_rules_get(x, &v, &n);
	if (err)
		set_err("%s", xrl_errmsg());
	if (!err)
		err = edit(c, &v, &n);	/* sets its own message */
	if (!err && (err = xrl_rules_commit(x, v, n)))
		set_err("%s", xrl_errmsg());
	unlock(x, err);
	if (err)
		p_err("%s", emsg);
	else
		note_daemon(x);
	free(v);
	xrl_close(x);
	return err ? 1 : 0;
}

static int edit_add(struct xrl_cmd *c, struct xrl_rule_entry **v, size_t *n)
{
	struct xrl_rule_entry *nv = realloc(*v, (*n + 1) * sizeof(**v));

	if (!nv)
		return set_err("out of memory");
	*v = nv;
	nv[(*n)++] = c->rule;
	return 0;
}

static int edit_del(struct xrl_cmd *c, struct xrl_rule_entry **v, size_t *n)
{
	char pfx[64];

	for (size_t i = 0; i < *n; i++) {
		struct xrl_rule_entry *e = &(*v)[i];
		bool hit = c->del_id ? e->r.id == c->del_id :
			   e->family == c->rule.family && e->prefix_len == c->rule.prefix_len &&
			   !memcmp(e->addr, c->rule.addr, 16);

		if (hit) {
			memmove(e, e + 1, (*n - i - 1) * sizeof(*e));
			(*n)--;
			return 0;
		}
	}
	if (c->del_id)
		return set_err("no rule with id %u", c->del_id);
	xrl_prefix_format(&c->rule, pfx, sizeof(pfx));
	return set_err("no rule for prefix %s", pfx);
}

static int edit_flush(struct xrl_cmd *c, struct xrl_rule_entry **v, size_t *n)
{
	(void)c;
	(void)v;
	*n = 0;
	return 0;
}

static int do_rule_add(struct xrl_cmd *c)
{
	return edit_rules(c, true, edit_add);
}

static int do_rule_del(struct xrl_cmd *c)
{
	return edit_rules(c, false, edit_del);
}

static int do_rule_flush(struct xrl_cmd *c)
{
	return edit_rules(c, false, edit_flush);
}

static int do_rule_list(struct xrl_cmd *c)
{
	struct xrl_rule_entry *v = NULL;
	struct xrl *x;
	size_t n = 0;

	(void)c;
	if (open_reader(&x))
		return 1;
	if (xrl_rules_get(x, &v, &n)) {
		p_err("%s", xrl_errmsg());
		xrl_close(x);
		return 1;
	}
	if (opt.json) {
		jw_arr_start(&jw);
		for (size_t i = 0; i < n; i++) {
			jw_obj_start(&jw);
			xrl_rule_json(&jw, &v[i]);
			jw_obj_end(&jw);
		}
		jw_arr_end(&jw);
		jw_finish(&jw);
	} else {
		printf("%-6s %-28s %-7s %-12s %-10s %-5s %s\n", "ID", "PREFIX", "ACTION",
		       "RATE", "BURST", "PER", "ON-FAILURE");
		for (size_t i = 0; i < n; i++) {
			char pfx[64], rate[32], burst[16];

			rule_fields(&v[i], pfx, sizeof(pfx), rate, sizeof(rate));
			snprintf(burst, sizeof(burst), "%u", v[i].r.burst);
			printf("%-6u %-28s %-7s %-12s %-10s /%-4u %s\n", v[i].r.id, pfx,
			       xrl_action_name(v[i].r.action), rate,
			       v[i].r.action == XRL_ACT_LIMIT ? burst : "-", v[i].r.key_len,
			       xrl_word_name(xrl_on_failure_words, v[i].r.on_failure));
		}
	}
	free(v);
	xrl_close(x);
	return 0;
}

static int do_mode_set(struct xrl_cmd *c)
{
	struct xrl *x;
	int err;

	if (open_writer(&x, true, 0))
		return 1;
	err = xrl_mode_set(x, c->mode);
	if (err)
		set_err("%s", xrl_errmsg());
	unlock(x, err);
	if (err) {
		p_err("%s", emsg);
	} else if (opt.json) {
		jw_obj_start(&jw);
		jw_kstr(&jw, "mode", xrl_mode_name(c->mode));
		jw_obj_end(&jw);
		jw_finish(&jw);
	} else {
		printf("mode %s\n", xrl_mode_name(c->mode));
	}
	if (!err)
		note_daemon(x);
	xrl_close(x);
	return err ? 1 : 0;
}

static int do_stats(struct xrl_cmd *c)
{
	struct xrl_rule_entry *v = NULL;
	struct xrl_rule_stats *rs = NULL;
	struct xrl_global_stats g;
	struct xrl *x;
	size_t n = 0;
	int err = 0;

	(void)c;
	if (open_reader(&x))
		return 1;
	if (xrl_rules_get(x, &v, &n) || xrl_global_stats_get(x, &g) ||
	    !(rs = calloc(n + 1, sizeof(*rs)))) {
		p_err("%s", xrl_errmsg());
		err = 1;
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		if (xrl_rule_stats_get(x, v[i].r.slot, &rs[i])) {
			p_err("%s", xrl_errmsg());
			err = 1;
			goto out;
		}
	}
	if (opt.json) {
		jw_obj_start(&jw);
		jw_kstr(&jw, "mode", xrl_mode_name(xrl_mode_get(x)));
		jw_key(&jw, "rules");
		jw_arr_start(&jw);
		for (size_t i = 0; i < n; i++) {
			jw_obj_start(&jw);
			xrl_rule_json(&jw, &v[i]);
			jw_ku64(&jw, "passed_packets", rs[i].passed_packets);
			jw_ku64(&jw, "dropped_packets", rs[i].dropped_packets);
			jw_ku64(&jw, "passed_bytes", rs[i].passed_bytes);
			jw_ku64(&jw, "dropped_bytes", rs[i].dropped_bytes);
			jw_ku64(&jw, "new_keys", rs[i].new_keys);
			jw_ku64(&jw, "failure_passed_packets", rs[i].failure_passed);
			jw_ku64(&jw, "failure_dropped_packets", rs[i].failure_dropped);
			jw_obj_end(&jw);
		}
		jw_arr_end(&jw);
		jw_key(&jw, "global");
		jw_obj_start(&jw);
		jw_ku64(&jw, "unmatched_packets", g.unmatched_packets);
		jw_ku64(&jw, "non_ip_packets", g.non_ip_packets);
		jw_ku64(&jw, "malformed_packets", g.malformed_packets);
		jw_key(&jw, "passed_packets");
		jw_obj_start(&jw);
		for (int m = 0; m < XRL_MODE_MAX; m++)
			jw_ku64(&jw, xrl_mode_name(m), g.passed_packets[m]);
		jw_obj_end(&jw);
		jw_key(&jw, "dropped_packets");
		jw_obj_start(&jw);
		for (int m = 0; m < XRL_MODE_MAX; m++)
			jw_ku64(&jw, xrl_mode_name(m), g.dropped_packets[m]);
		jw_obj_end(&jw);
		jw_obj_end(&jw);
		jw_obj_end(&jw);
		jw_finish(&jw);
	} else {
		printf("mode %s\n", xrl_mode_name(xrl_mode_get(x)));
		printf("%-6s %-28s %-7s %12s %12s %14s %14s %10s\n", "ID", "PREFIX", "ACTION",
		       "PASSED", "DROPPED", "PASSED_BYTES", "DROPPED_BYTES", "NEW_KEYS");
		for (size_t i = 0; i < n; i++) {
			char pfx[64];

			xrl_prefix_format(&v[i], pfx, sizeof(pfx));
			printf("%-6u %-28s %-7s %12llu %12llu %14llu %14llu %10llu\n",
			       v[i].r.id, pfx, xrl_action_name(v[i].r.action),
			       (unsigned long long)rs[i].passed_packets,
			       (unsigned long long)rs[i].dropped_packets,
			       (unsigned long long)rs[i].passed_bytes,
			       (unsigned long long)rs[i].dropped_bytes,
			       (unsigned long long)rs[i].new_keys);
		}
		for (size_t i = 0; i < n; i++)
			if (rs[i].failure_passed || rs[i].failure_dropped)
				printf("rule %u on failure: passed %llu, dropped %llu\n", v[i].r.id,
				       (unsigned long long)rs[i].failure_passed,
				       (unsigned long long)rs[i].failure_dropped);
		printf("unmatched %llu, non-ip %llu, malformed %llu\n",
		       (unsigned long long)g.unmatched_packets,
		       (unsigned long long)g.non_ip_packets,
		       (unsigned long long)g.malformed_packets);
		for (int m = 0; m < XRL_MODE_MAX; m++)
			if (g.passed_packets[m] || g.dropped_packets[m])
				printf("%s: passed %llu, dropped %llu\n", xrl_mode_name(m),
				       (unsigned long long)g.passed_packets[m],
				       (unsigned long long)g.dropped_packets[m]);
	}
out:
	free(rs);
	free(v);
	xrl_close(x);
	return err;
}

static void key_format(const struct xrl_key *k, __u8 key_len, char *buf, size_t len)
{
	char a[64];

	xrl_addr_format(k->family, k->addr, a, sizeof(a));
	snprintf(buf, len, "%s/%u", a, key_len);
}

static int do_show(struct xrl_cmd *c)
{
	struct xrl_rule_entry e;
	struct xrl_key k;
	struct xrl_bucket b;
	char addr[64], key[80], pfx[64];
	bool tracked = false;
	__u64 tokens = 0, now;
	struct xrl *x;

	if (open_reader(&x))
		return 1;
	xrl_addr_format(c->family, c->addr, addr, sizeof(addr));
	if (xrl_rule_match(x, c->family, c->addr, &e)) {
		if (opt.json) {
			jw_obj_start(&jw);
			jw_kstr(&jw, "address", addr);
			jw_key(&jw, "rule");
			jw_null(&jw);
			jw_obj_end(&jw);
			jw_finish(&jw);
		} else {
			printf("%s: no rule matches (passed, counted as unmatched)\n", addr);
		}
		xrl_close(x);
		return 0;
	}
	xrl_key_of(&k, &e.r, c->family, c->addr);
	key_format(&k, e.r.key_len, key, sizeof(key));
	xrl_prefix_format(&e, pfx, sizeof(pfx));
	now = xrl_now_ns(x);
	if (e.r.action == XRL_ACT_LIMIT) {
		tracked = xrl_bucket_get(x, &k, &b) == 0;
		tokens = tracked ? xrl_gcra_tokens(b.tat, xrl_ns_to_tu(now), e.r.interval, e.r.limit)
				 : e.r.burst;
	}
	if (opt.json) {
		jw_obj_start(&jw);
		jw_kstr(&jw, "address", addr);
		jw_kstr(&jw, "key", key);
		jw_ku64(&jw, "rule", e.r.id);
		jw_kstr(&jw, "prefix", pfx);
		jw_kstr(&jw, "action", xrl_action_name(e.r.action));
		jw_kbool(&jw, "tracked", tracked);
		if (e.r.action == XRL_ACT_LIMIT) {
			jw_ku64(&jw, "tokens", tokens);
			jw_ku64(&jw, "burst", e.r.burst);
		}
		if (tracked) {
			jw_ku64(&jw, "dropped_packets", b.dropped);
			jw_ku64(&jw, "last_seen_ms_ago", now > b.last_ns ? (now - b.last_ns) / 1000000 : 0);
		}
		jw_obj_end(&jw);
		jw_finish(&jw);
	} else {
		printf("address:   %s\nkey:       %s\nrule:      %u (%s, %s)\n", addr, key,
		       e.r.id, pfx, xrl_action_name(e.r.action));
		if (e.r.action != XRL_ACT_LIMIT)
			printf("bucket:    none (%s rules are not metered)\n", xrl_action_name(e.r.action));
		else if (!tracked)
			printf("bucket:    not tracked (full: %llu of %u tokens)\n",
			       (unsigned long long)tokens, e.r.burst);
		else
			printf("tokens:    %llu of %u\ndropped:   %llu\nlast seen: %.3f s ago\n",
			       (unsigned long long)tokens, e.r.burst, (unsigned long long)b.dropped,
			       now > b.last_ns ? (now - b.last_ns) / 1e9 : 0.0);
	}
	xrl_close(x);
	return 0;
}

struct top_ctx {
	struct xrl_rule_entry *rules;
	size_t nrules;
	struct top_item {
		struct xrl_key k;
		__u64 dropped;
		size_t rule;
	} *items;
	size_t n, cap;
};

static int top_cb(const struct xrl_key *k, const struct xrl_bucket *b, void *ctx)
{
	struct top_ctx *t = ctx;

	if (!b->dropped)
		return 0;
	for (size_t i = 0; i < t->nrules; i++) {
		if (t->rules[i].r.gen != k->gen)
			continue;	/* a stale bucket of a changed rule is skipped */
		if (t->n == t->cap) {
			size_t nc = t->cap ? t->cap * 2 : 256;
			void *ni = realloc(t->items, nc * sizeof(*t->items));

			if (!ni)
				return -ENOMEM;
			t->items = ni;
			t->cap = nc;
		}
		t->items[t->n++] = (struct top_item){ *k, b->dropped, i };
		break;
	}
	return 0;
}

static int cmp_dropped(const void *a, const void *b)
{
	const struct top_item *x = a, *y = b;

	return x->dropped > y->dropped ? -1 : x->dropped < y->dropped;
}

static int do_top(struct xrl_cmd *c)
{
	struct top_ctx t = {};
	struct xrl *x;
	int err = 0;

	if (open_reader(&x))
		return 1;
	if (xrl_rules_get(x, &t.rules, &t.nrules) || xrl_buckets_walk(x, top_cb, &t)) {
		p_err("%s", xrl_errmsg());
		err = 1;
		goto out;
	}
	qsort(t.items, t.n, sizeof(*t.items), cmp_dropped);
	if (t.n > c->count)
		t.n = c->count;
	if (opt.json)
		jw_arr_start(&jw);
	else
		printf("%-44s %-6s %12s\n", "KEY", "RULE", "DROPPED");
	for (size_t i = 0; i < t.n; i++) {
		const struct xrl_rule_entry *e = &t.rules[t.items[i].rule];
		char key[80];

		key_format(&t.items[i].k, e->r.key_len, key, sizeof(key));
		if (opt.json) {
			jw_obj_start(&jw);
			jw_kstr(&jw, "key", key);
			jw_ku64(&jw, "rule", e->r.id);
			jw_ku64(&jw, "dropped_packets", t.items[i].dropped);
			jw_obj_end(&jw);
		} else {
			printf("%-44s %-6u %12llu\n", key, e->r.id,
			       (unsigned long long)t.items[i].dropped);
		}
	}
	if (opt.json) {
		jw_arr_end(&jw);
		jw_finish(&jw);
	}
out:
	free(t.items);
	free(t.rules);
	xrl_close(x);
	return err;
}

static int do_help(struct xrl_cmd *c)
{
	if (xrl_usage(stdout, XRL_IN_CLI, c->topic[0] ? c->topic : NULL)) {
		p_err("unknown command '%s'", c->topic);
		return EXIT_USAGE;
	}
	return 0;
}

static int (*const handlers[])(struct xrl_cmd *c) = {
	[XRL_CMD_ATTACH] = do_attach,
	[XRL_CMD_DETACH] = do_detach,
	[XRL_CMD_STATUS] = do_status,
	[XRL_CMD_RULE_ADD] = do_rule_add,
	[XRL_CMD_RULE_DEL] = do_rule_del,
	[XRL_CMD_RULE_LIST] = do_rule_list,
	[XRL_CMD_RULE_FLUSH] = do_rule_flush,
	[XRL_CMD_MODE_SET] = do_mode_set,
	[XRL_CMD_STATS] = do_stats,
	[XRL_CMD_SHOW] = do_show,
	[XRL_CMD_TOP] = do_top,
	[XRL_CMD_HELP] = do_help,
};

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "pretty", no_argument, NULL, 'p' },
		{ "pin-dir", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	struct xrl_parse_err e;
	char bad[300] = "";
	struct xrl_cmd c;
	int ch;

	/* options stop at the command: "rule add ... per /24" is not an option;
	 * getopt stays quiet: an error is told once, as JSON under -j */
	opterr = 0;
	while ((ch = getopt_long(argc, argv, "+:jphd:", longopts, NULL)) != -1) {
		const char *w = argv[optind - 1];	/* the word that went wrong */

		switch (ch) {
		case 'j':
			opt.json = true;
			break;
		case 'p':
			opt.json = opt.pretty = true;
			break;
		case 'd':
			opt.pin_dir = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case ':':
			if (!bad[0])
				snprintf(bad, sizeof(bad), "option '%s' needs an argument", w);
			break;
		default:
			if (bad[0])
				break;
			if (optopt && !strncmp(w, "--", 2))	/* --json=x */
				snprintf(bad, sizeof(bad), "option '%s' takes no argument", w);
			else if (optopt)
				snprintf(bad, sizeof(bad), "unknown option '-%c'", optopt);
			else
				snprintf(bad, sizeof(bad), "unknown option '%s'", w);
			break;
		}
	}
	jw_init(&jw, stdout, opt.pretty);
	xrl_log_set(cli_log, getenv("XRL_DEBUG") ? XRL_LOG_DEBUG : XRL_LOG_WARN);

	if (bad[0] || optind >= argc) {
		p_err("%s", bad[0] ? bad : "missing command");
		if (!opt.json)
			usage(stderr);
		return EXIT_USAGE;
	}
	if (xrl_cmd_parse(argc - optind, argv + optind, XRL_IN_CLI, &c, &e)) {
		p_err("%s", e.msg);
		return EXIT_USAGE;
	}
	return handlers[c.kind](&c);
}
