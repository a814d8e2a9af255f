// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xdp-rld: what /metrics serves (the data path's counters and the daemon's
 * own, written through prom.c) and where it is served (http.c).
 */
#include "rld.h"
#include "prom.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>

#include "text/grammar.h"

/* ---- the exposition ---- */

/* The live events the daemon read, and those the data path left out since
 * the daemon started (before, nobody read its ring). */
static int events_write(struct prom *p, struct xrl *x, const struct xrl_daemon_stats *ds)
{
	const struct xrl_event_stats *b = &ds->events_base;
	struct xrl_event_stats es;
	int err = xrl_event_stats_get(x, &es);

	if (err)
		return err;
	prom_family(p, "xdp_rl_events_total", "counter",
		    "Live events read by the daemon: keys that became limited, and no longer limited.");
	prom_sample(p, PROM_LABELS("kind", "limited"), "%llu", ds->events[0]);
	prom_sample(p, PROM_LABELS("kind", "unlimited"), "%llu", ds->events[1]);
	prom_family(p, "xdp_rl_events_dropped_total", "counter",
		    "Live events the data path left out since the daemon started: over the global cap, or its ring full.");
	prom_sample(p, PROM_LABELS("reason", "rate_cap"), "%llu",
		    (unsigned long long)(es.dropped_rate - b->dropped_rate));
	prom_sample(p, PROM_LABELS("reason", "ring_full"), "%llu",
		    (unsigned long long)(es.ring_full[0] - b->ring_full[0]));
	prom_family(p, "xdp_rl_events_sampled_total", "counter",
		    "\"limited\" events left out since the daemon started: the key had one less than 10 s before.");
	prom_sample(p, NULL, "%llu", (unsigned long long)(es.sampled - b->sampled));
	prom_family(p, "xdp_rl_events_unlogged_total", "counter",
		    "Live events read but not logged (at most 10 lines a second).");
	prom_sample(p, NULL, "%llu", ds->events_unlogged);
	return 0;
}

/* Bans: the tables' fill and size, what they did, by origin. */
static int bans_write(struct prom *p, struct xrl *x)
{
	static const char *const fam[2] = { "ipv4", "ipv6" };
	struct xrl_ban_totals t;
	struct xrl_ban_stats s;
	__u32 n[2] = {}, cap[2] = {};
	int err;

	if ((err = xrl_ban_totals_get(x, &t)) || (err = xrl_ban_stats_get(x, &s)) ||
	    (err = xrl_bans_fill(x, 4, &n[0], &cap[0])) || (err = xrl_bans_fill(x, 6, &n[1], &cap[1])))
		return err;
	prom_family(p, "xdp_rl_bans", "gauge",
		    "Entries of the ban table (those past their end not yet reclaimed included), per family.");
	for (int f = 0; f < 2; f++)
		prom_sample(p, PROM_LABELS("family", fam[f]), "%u", n[f]);
	prom_family(p, "xdp_rl_bans_capacity", "gauge", "Entries the ban table holds at most, per family.");
	for (int f = 0; f < 2; f++)
		prom_sample(p, PROM_LABELS("family", fam[f]), "%u", cap[f]);
	prom_family(p, "xdp_rl_bans_set_total", "counter", "Bans set, by origin (rule, operator, config, decider).");
	for (__u32 o = XRL_BAN_RULE; o < XRL_BAN_ORIGINS; o++)
		prom_sample(p, PROM_LABELS("origin", xrl_ban_origin_name(o)), "%llu", (unsigned long long)t.set[o]);
	prom_family(p, "xdp_rl_bans_expired_total", "counter", "Bans reclaimed past their end, by origin.");
	for (__u32 o = XRL_BAN_RULE; o < XRL_BAN_ORIGINS; o++)
		prom_sample(p, PROM_LABELS("origin", xrl_ban_origin_name(o)), "%llu",
			    (unsigned long long)t.expired[o]);
	prom_family(p, "xdp_rl_bans_deleted_total", "counter", "Bans lifted (ban del, ban flush, a reload), by origin.");
	for (__u32 o = XRL_BAN_RULE; o < XRL_BAN_ORIGINS; o++)
		prom_sample(p, PROM_LABELS("origin", xrl_ban_origin_name(o)), "%llu",
			    (unsigned long long)t.deleted[o]);
	prom_family(p, "xdp_rl_bans_refused_total", "counter", "Bans not set because the table was full (no ban is evicted).");
	prom_sample(p, NULL, "%llu", (unsigned long long)t.refused_full);
	prom_family(p, "xdp_rl_rule_bans_refused_total", "counter",
		    "Rules' bans not set: the rules hold their most (three quarters of a table; the rest is the operator's).");
	prom_sample(p, NULL, "%llu", (unsigned long long)t.refused_reserve);
	prom_family(p, "xdp_rl_would_bans_total", "counter", "Bans a dry-run rule (or the dry-run mode) would have set.");
	prom_sample(p, NULL, "%llu", (unsigned long long)t.would_ban);
	prom_family(p, "xdp_rl_ban_offences_total", "counter", "Keys of rules that ban becoming limited.");
	prom_sample(p, NULL, "%llu", (unsigned long long)t.offences);
	prom_family(p, "xdp_rl_ban_dropped_packets_total", "counter", "Packets dropped by bans.");
	prom_sample(p, NULL, "%llu", (unsigned long long)s.dropped_packets);
	prom_family(p, "xdp_rl_ban_would_drop_packets_total", "counter",
		    "Packets a ban covered that passed (the dry-run or fail-open mode).");
	prom_sample(p, NULL, "%llu", (unsigned long long)s.would_drop_packets);
	prom_family(p, "xdp_rl_ban_allowed_packets_total", "counter",
		    "Packets of a source an allow rule covers, passed through a rule's ban.");
	prom_sample(p, NULL, "%llu", (unsigned long long)s.allowed_packets);
	return 0;
}

/* Each rule's counters and configuration. */
static void rules_write(struct prom *p, const struct xrl_rule_entry *v, const struct xrl_rule_stats *rs, size_t n)
{
	static const struct {
		const char *name, *help;
		size_t off;
	} per_rule[] = {
		{ "xdp_rl_passed_packets_total", "Packets passed, per rule.",
		  offsetof(struct xrl_rule_stats, passed_packets) },
		{ "xdp_rl_dropped_packets_total", "Packets dropped, per rule (never in dry-run: see would_drop).",
		  offsetof(struct xrl_rule_stats, dropped_packets) },
		{ "xdp_rl_passed_bytes_total", "Bytes passed, per rule.",
		  offsetof(struct xrl_rule_stats, passed_bytes) },
		{ "xdp_rl_dropped_bytes_total", "Bytes dropped, per rule.",
		  offsetof(struct xrl_rule_stats, dropped_bytes) },
		{ "xdp_rl_failure_passed_packets_total", "Packets passed by the rule's on-failure open policy.",
		  offsetof(struct xrl_rule_stats, failure_passed) },
		{ "xdp_rl_failure_dropped_packets_total", "Packets dropped by the rule's on-failure closed policy.",
		  offsetof(struct xrl_rule_stats, failure_dropped) },
		{ "xdp_rl_new_keys_total", "Keys that started a new bucket, per rule.",
		  offsetof(struct xrl_rule_stats, new_keys) },
		{ "xdp_rl_would_drop_packets_total", "Packets passed that the rule would have dropped (its dry-run, or the dry-run mode).",
		  offsetof(struct xrl_rule_stats, would_drop_packets) },
		{ "xdp_rl_would_drop_bytes_total", "Bytes passed that the rule would have dropped.",
		  offsetof(struct xrl_rule_stats, would_drop_bytes) },
		{ "xdp_rl_new_keys_refused_total", "Keys refused a bucket by the rule's new-key budget.",
		  offsetof(struct xrl_rule_stats, nk_refused) },
		{ "xdp_rl_hot_dropped_packets_total", "Drops answered by the hot-key cache (also in dropped).",
		  offsetof(struct xrl_rule_stats, hot_dropped) },
		{ "xdp_rl_aggregate_dropped_packets_total", "Packets refused by the rule's aggregate (also in dropped).",
		  offsetof(struct xrl_rule_stats, agg_dropped) },
		{ "xdp_rl_slipped_packets_total", "Refused DNS queries answered with a truncated response (also in dropped).",
		  offsetof(struct xrl_rule_stats, slipped_packets) },
		{ "xdp_rl_slip_invalid_packets_total", "Refusals due to slip that were not an answerable DNS query (dropped).",
		  offsetof(struct xrl_rule_stats, slip_invalid) },
		{ "xdp_rl_slip_capped_packets_total", "Refusals due to slip over the host's cap of answers (dropped).",
		  offsetof(struct xrl_rule_stats, slip_capped) },
	};

	for (size_t m = 0; m < sizeof(per_rule) / sizeof(per_rule[0]); m++) {
		prom_family(p, per_rule[m].name, "counter", per_rule[m].help);
		for (size_t i = 0; i < n; i++) {
			char id[16], pfx[64];

			snprintf(id, sizeof(id), "%u", v[i].r.id);
			xrl_prefix_format(&v[i], pfx, sizeof(pfx));
			prom_sample(p, PROM_LABELS("rule", id, "prefix", pfx, "action", xrl_action_name(v[i].r.action)),
				    "%llu", *(const unsigned long long *)((const char *)&rs[i] + per_rule[m].off));
		}
	}
	/* what each rule is, as labels to join on rule: the counters' own
	 * label sets stay as they were (alerts and dashboards select them) */
	prom_family(p, "xdp_rl_rule_info", "gauge", "A rule's configuration, as labels; always 1.");
	for (size_t i = 0; i < n; i++) {
		char id[16], pfx[64], rate[32], burst[16], proto[16], ports[16];
		bool limit = v[i].r.action == XRL_ACT_LIMIT;

		snprintf(id, sizeof(id), "%u", v[i].r.id);
		xrl_prefix_format(&v[i], pfx, sizeof(pfx));
		if (limit)
			xrl_rule_rate_format(&v[i].r, rate, sizeof(rate));
		else
			snprintf(rate, sizeof(rate), "-");
		xrl_rule_burst_format(&v[i].r, burst, sizeof(burst));
		xrl_rule_proto_format(&v[i].r, proto, sizeof(proto));
		xrl_rule_ports_format(&v[i].r, ports, sizeof(ports));
		prom_sample(p, PROM_LABELS("rule", id, "prefix", pfx, "action", xrl_action_name(v[i].r.action),
					   "algo", limit ? xrl_word_name(xrl_algo_words, v[i].r.algo) : "",
					   "rate", rate, "burst", burst, "dry_run", v[i].r.dry_run ? "yes" : "no",
					   "proto", proto, "dport", ports, "syn", v[i].r.syn ? "yes" : "no"), "1");
	}
}

/* SYN cookies: per syn-cookies rule, and the verified sources' table. */
static void syncookies_write(struct prom *p, struct xrl *x, const struct xrl_rule_entry *v, size_t n)
{
	static const struct { const char *name, *help; size_t off; } per_rule[] = {
		{ "xdp_rl_syn_cookies_sent_total", "SYNs of unverified sources answered with a cookie SYN-ACK.",
		  offsetof(struct xrl_sc_stats, cookies_sent) },
		{ "xdp_rl_syn_cookie_acks_valid_total", "ACKs whose SYN cookie was valid.",
		  offsetof(struct xrl_sc_stats, acks_valid) },
		{ "xdp_rl_syn_cookie_acks_invalid_total", "ACKs whose SYN cookie was not: dropped.",
		  offsetof(struct xrl_sc_stats, acks_invalid) },
		{ "xdp_rl_syn_cookie_sources_verified_total", "Sources that answered a cookie: verified.",
		  offsetof(struct xrl_sc_stats, verified) },
		{ "xdp_rl_syn_cookie_unverified_dropped_total", "Other packets of unverified sources, dropped.",
		  offsetof(struct xrl_sc_stats, unverified_dropped) },
	};
	struct xrl_sc_table t = {};

	for (size_t m = 0; m < sizeof(per_rule) / sizeof(per_rule[0]); m++) {
		prom_family(p, per_rule[m].name, "counter", per_rule[m].help);
		for (size_t i = 0; i < n; i++) {
			struct xrl_sc_stats sc = {};
			char id[16], pfx[64];

			if (!v[i].r.syncookies)
				continue;
			xrl_sc_stats_get(x, v[i].r.slot, &sc);
			snprintf(id, sizeof(id), "%u", v[i].r.id);
			xrl_prefix_format(&v[i], pfx, sizeof(pfx));
			prom_sample(p, PROM_LABELS("rule", id, "prefix", pfx, "action", xrl_action_name(v[i].r.action)),
				    "%llu", *(const unsigned long long *)((const char *)&sc + per_rule[m].off));
		}
	}
	xrl_sc_table_get(x, &t);
	prom_family(p, "xdp_rl_syn_cookie_verified", "gauge", "Sources in the SYN cookies' verified table.");
	prom_sample(p, NULL, "%llu", (unsigned long long)t.entries);
	prom_family(p, "xdp_rl_syn_cookie_verified_capacity", "gauge", "Size of the verified table.");
	prom_sample(p, NULL, "%llu", (unsigned long long)t.size);
	prom_family(p, "xdp_rl_syn_cookie_verified_evicted_estimate", "gauge",
		    "Verified sources evicted or expired out of the table: verified less present.");
	prom_sample(p, NULL, "%llu", (unsigned long long)t.evicted);
}

/* Verdicts per interface the program is attached to. */
static void interfaces_write(struct prom *p, struct xrl *x, const struct xrl_attachment *att, size_t natt)
{
	prom_family(p, "xdp_rl_interface_packets_total", "counter",
		    "Verdicts on packets received by each interface the program is attached to (counted per ifindex % 256).");
	for (size_t i = 0; i < natt; i++) {
		struct xrl_if_stats is;
		char names[256], idx[16];
		size_t l;
		bool dup = false;

		if (!att[i].ifindex)
			continue;
		/* interfaces whose ifindexes share a slot share counters: one
		 * series, named after all of them */
		for (size_t j = 0; j < i; j++)
			dup |= att[j].ifindex && att[j].ifindex % XRL_IF_SLOTS == att[i].ifindex % XRL_IF_SLOTS;
		if (dup || xrl_if_stats_get(x, att[i].ifindex, &is))
			continue;
		snprintf(names, sizeof(names), "%s", att[i].ifname);
		for (size_t j = i + 1; j < natt; j++) {
			if (att[j].ifindex && att[j].ifindex % XRL_IF_SLOTS == att[i].ifindex % XRL_IF_SLOTS) {
				l = strlen(names);
				snprintf(names + l, sizeof(names) - l, ",%s", att[j].ifname);
			}
		}
		snprintf(idx, sizeof(idx), "%u", att[i].ifindex);
		prom_sample(p, PROM_LABELS("interface", names, "ifindex", idx, "verdict", "pass"), "%llu",
			    (unsigned long long)is.passed_packets);
		prom_sample(p, PROM_LABELS("interface", names, "ifindex", idx, "verdict", "drop"), "%llu",
			    (unsigned long long)is.dropped_packets);
		prom_sample(p, PROM_LABELS("interface", names, "ifindex", idx, "verdict", "answer"), "%llu",
			    (unsigned long long)is.answered_packets);
	}
}

/* The daemon's own: reloads, interfaces, pins, the log, live events. */
static int daemon_write(struct prom *p, struct xrl *x, const struct xrl_daemon_stats *ds)
{
	prom_family(p, "xdp_rl_keys_tracked_age_seconds", "gauge",
		    "How long ago xdp_rl_keys_tracked was counted (at most every 10 s, outside the reload lock).");
	prom_sample(p, NULL, "%.3f", ds->keys_age_s);
	prom_family(p, "xdp_rl_last_reload_success_timestamp_seconds", "gauge",
		    "Unix time of the last configuration applied (the start's included).");
	prom_sample(p, NULL, "%lld", (long long)ds->last_reload_success);
	prom_family(p, "xdp_rl_config_info", "gauge",
		    "The configuration applied: its file and SHA-256 (sha256sum FILE); always 1.");
	prom_sample(p, PROM_LABELS("file", ds->config_path, "sha256", ds->config_sha256), "1");
	prom_family(p, "xdp_rl_reloads_total", "counter", "Configuration reloads applied.");
	prom_sample(p, NULL, "%llu", ds->reloads);
	prom_family(p, "xdp_rl_reload_failures_total", "counter", "Reloads refused (invalid file), old rules kept.");
	prom_sample(p, NULL, "%llu", ds->reload_failures);
	prom_family(p, "xdp_rl_interfaces_attached", "gauge", "Interfaces the program is attached to.");
	prom_sample(p, NULL, "%u", ds->interfaces_attached);
	prom_family(p, "xdp_rl_interface_attached", "gauge",
		    "1 when the program is attached to the configured interface; 0 when it is not (the interface missing, or the attach failed: see the log).");
	for (size_t i = 0; i < ds->nifaces; i++)
		prom_sample(p, PROM_LABELS("interface", ds->ifaces[i].name), "%u", ds->ifaces[i].attached);
	prom_family(p, "xdp_rl_interface_mode_mismatch", "gauge",
		    "1 when the program is attached to the interface in another XDP mode than configured (attaching in that mode failed: see the log).");
	for (size_t i = 0; i < ds->nifaces; i++)
		prom_sample(p, PROM_LABELS("interface", ds->ifaces[i].name), "%u", ds->ifaces[i].mode_mismatch);
	prom_family(p, "xdp_rl_interface_hook", "gauge",
		    "1 when the program is attached to the interface at the hook of the label (xdp or tc, as configured); 0 when it is not.");
	for (size_t i = 0; i < ds->nifaces; i++)
		prom_sample(p, PROM_LABELS("interface", ds->ifaces[i].name, "hook", xrl_hook_name(ds->ifaces[i].hook)),
			    "%u", ds->ifaces[i].attached && !ds->ifaces[i].hook_mismatch);
	prom_family(p, "xdp_rl_interface_tc_position", "gauge",
		    "At tc: the program's place in the interface's tcx ingress chain, 1 first; more: another program runs before it and what it passes skips the limiter.");
	for (size_t i = 0; i < ds->nifaces; i++)
		if (ds->ifaces[i].tc_position)
			prom_sample(p, PROM_LABELS("interface", ds->ifaces[i].name), "%u", ds->ifaces[i].tc_position);
	prom_family(p, "xdp_rl_tc_reorders_total", "counter",
		    "Times a program attached before xdp-rl in a tcx chain was found and xdp-rl put first again (interface ... hook tc first).");
	prom_sample(p, NULL, "%llu", ds->tc_reorders);
	prom_family(p, "xdp_rl_link_repairs_total", "counter",
		    "Interfaces found without the program (a link pin removed) and attached again.");
	prom_sample(p, NULL, "%llu", ds->link_repairs);
	prom_family(p, "xdp_rl_log_lines_dropped_total", "counter", "Log lines dropped because stderr did not drain.");
	prom_sample(p, NULL, "%llu", ds->log_dropped);
	prom_family(p, "xdp_rl_program_run_stats_enabled", "gauge",
		    "1 while the daemon holds the kernel's BPF run-time statistics enabled; 0: they could not be enabled.");
	prom_sample(p, NULL, "%u", ds->runtime_stats);
	prom_family(p, "xdp_rl_pins_ok", "gauge",
		    "1 when every pin is in place; 0 when they were removed and could not be restored.");
	prom_sample(p, NULL, "%u", ds->pins_ok);
	prom_family(p, "xdp_rl_pin_restores_total", "counter",
		    "Times the pins were found removed and restored (links re-attached).");
	prom_sample(p, NULL, "%llu", ds->pin_restores);
	if (bans_write(p, x))
		return -EIO;
	return events_write(p, x, ds);
}

/* The named sets: prefixes and the kernel's count of their memory. */
static void sets_write(struct prom *p, struct xrl *x)
{
	struct xrl_set_view *v = NULL;
	size_t n = 0;

	if (xrl_sets_list(x, &v, &n))
		return;	/* said by the next command that touches them */
	prom_family(p, "xdp_rl_set_prefixes", "gauge", "Prefixes in a named set (expired ones until swept).");
	for (size_t i = 0; i < n; i++)
		prom_sample(p, PROM_LABELS("set", v[i].name), "%u", v[i].count);
	prom_family(p, "xdp_rl_set_memory_bytes", "gauge",
		    "A named set's trie as the kernel counts its memory (its elements, not the trie's inner nodes).");
	for (size_t i = 0; i < n; i++)
		prom_sample(p, PROM_LABELS("set", v[i].name), "%llu", (unsigned long long)v[i].mem_bytes);
	free(v);
}

int xrl_metrics_write(struct prom *p, struct xrl *x, const struct xrl_daemon_stats *ds)
{
	struct xrl_rule_entry *v = NULL;
	struct xrl_rule_stats *rs = NULL;
	struct xrl_global_stats g;
	struct xrl_prog_runtime rt;
	struct xrl_attachment *att = NULL;
	size_t natt = 0;
	unsigned long long keys[2] = {};
	char libbpf[16];
	long long age;
	size_t n = 0;
	int err;

	err = xrl_rules_get(x, &v, &n);
	if (!err)
		err = xrl_global_stats_get(x, &g);
	if (!err && !(rs = calloc(n + 1, sizeof(*rs))))
		err = -ENOMEM;
	for (size_t i = 0; !err && i < n; i++)
		err = xrl_rule_stats_get(x, v[i].r.slot, &rs[i]);
	/* the daemon counts keys outside its lock (see keys_refresh) */
	for (int i = 0; !err && i < 2; i++) {
		if (ds)
			keys[i] = ds->keys[i];
		else
			err = xrl_keys_tracked_family(x, i ? 6 : 4, &keys[i]);
	}
	if (!err)
		err = xrl_attachments(x, &att, &natt);
	if (err)
		goto out;

	prom_family(p, "xdp_rl_build_info", "gauge", "The running xdp-rld's version; always 1.");
	snprintf(libbpf, sizeof(libbpf), "%u.%u", libbpf_major_version(), libbpf_minor_version());
	prom_sample(p, PROM_LABELS("version", xrl_version(), "libbpf", libbpf), "1");
	rules_write(p, v, rs, n);
	syncookies_write(p, x, v, n);
	prom_family(p, "xdp_rl_unmatched_packets_total", "counter", "IP packets that matched no rule (passed).");
	prom_sample(p, NULL, "%llu", (unsigned long long)g.unmatched_packets);
	prom_family(p, "xdp_rl_non_ip_packets_total", "counter", "Non-IP frames (passed untouched).");
	prom_sample(p, NULL, "%llu", (unsigned long long)g.non_ip_packets);
	prom_family(p, "xdp_rl_malformed_packets_total", "counter", "Malformed IP packets (dropped in enforce).");
	prom_sample(p, NULL, "%llu", (unsigned long long)g.malformed_packets);
	prom_family(p, "xdp_rl_verdict_packets_total", "counter", "Verdicts of the data path, by mode.");
	for (int m = 0; m < XRL_MODE_MAX; m++) {
		prom_sample(p, PROM_LABELS("mode", xrl_mode_name(m), "verdict", "pass"), "%llu",
			    (unsigned long long)g.passed_packets[m]);
		prom_sample(p, PROM_LABELS("mode", xrl_mode_name(m), "verdict", "drop"), "%llu",
			    (unsigned long long)g.dropped_packets[m]);
	}
	/* answers are only ever sent while enforcing */
	prom_sample(p, PROM_LABELS("mode", xrl_mode_name(XRL_MODE_ENFORCE), "verdict", "answer"), "%llu",
		    (unsigned long long)g.answered_packets);
	prom_family(p, "xdp_rl_slip_cap_per_second", "gauge",
		    "The host's cap of DNS slip answers a second (its burst: xdp_rl_slip_cap_burst).");
	prom_sample(p, NULL, "%u", XRL_SLIP_CAP_RATE);
	prom_family(p, "xdp_rl_slip_cap_burst", "gauge", "The burst of the host's cap of DNS slip answers.");
	prom_sample(p, NULL, "%u", XRL_SLIP_CAP_BURST);
	prom_family(p, "xdp_rl_mode", "gauge", "The data path's mode: 1 for the current one.");
	for (int m = 0; m < XRL_MODE_MAX; m++)
		prom_sample(p, PROM_LABELS("mode", xrl_mode_name(m)), "%d", xrl_mode_get(x) == (enum xrl_mode)m);
	age = xrl_heartbeat_age(x);
	prom_family(p, "xdp_rl_heartbeat_age_seconds", "gauge",
		    "Seconds since the last heartbeat, as the data path sees it.");
	prom_sample(p, NULL, "%.3f", age < 0 ? 0 : age / 1e9);
	prom_family(p, "xdp_rl_watchdog_seconds", "gauge", "The watchdog time (0: off).");
	prom_sample(p, NULL, "%.3f", xrl_control(x)->watchdog_ns / 1e9);
	interfaces_write(p, x, att, natt);
	sets_write(p, x);
	prom_family(p, "xdp_rl_keys_tracked", "gauge", "Keys with a bucket, per address family.");
	prom_sample(p, PROM_LABELS("family", "ipv4"), "%llu", keys[0]);
	prom_sample(p, PROM_LABELS("family", "ipv6"), "%llu", keys[1]);
	prom_family(p, "xdp_rl_keys_inserted_total", "counter",
		    "Buckets created since the program was loaded, every rule.");
	prom_sample(p, NULL, "%llu", (unsigned long long)g.keys_inserted);
	prom_family(p, "xdp_rl_keys_evicted_estimate", "gauge",
		    "Buckets evicted or deleted since the program was loaded: inserted less tracked.");
	prom_sample(p, NULL, "%llu", xrl_keys_evicted_estimate(&g, keys[0] + keys[1]));
	prom_family(p, "xdp_rl_keys_capacity", "gauge", "Size of the family's bucket table.");
	prom_sample(p, PROM_LABELS("family", "ipv4"), "%u", xrl_keys_capacity_family(x, 4));
	prom_sample(p, PROM_LABELS("family", "ipv6"), "%u", xrl_keys_capacity_family(x, 6));
	/* the kernel's run-time statistics: ns per packet is
	 * rate(run_seconds_total) / rate(runs_total) */
	if (xrl_prog_runtime_get(x, false, &rt) == 0) {
		prom_family(p, "xdp_rl_program_runs_total", "counter",
			    "Runs of the XDP program the kernel counted (only while run-time statistics are enabled).");
		prom_sample(p, NULL, "%llu", (unsigned long long)rt.run_cnt);
		prom_family(p, "xdp_rl_program_run_seconds_total", "counter",
			    "Time the kernel counted in the XDP program over those runs.");
		prom_sample(p, NULL, "%.9f", rt.run_time_ns / 1e9);
	}
	prom_family(p, "xdp_rl_rules_loaded", "gauge", "Rules in the active rule set.");
	prom_sample(p, NULL, "%zu", n);
	if (ds)
		err = daemon_write(p, x, ds);
out:
	free(att);
	free(rs);
	free(v);
	return err;
}

/* ---- the daemon's scrape ---- */

/*
 * Keys tracked: a walk of both bucket tables (up to 2 x 1M entries, some
 * hundreds of ms). Done here, outside the daemon's lock, at most every
 * KEYS_REFRESH_MS, so that neither a scrape nor a scraper that scrapes
 * back to back can hold up a reload. The bucket maps' descriptors do not
 * change while the daemon runs (restored pins reuse them).
 */
static void keys_refresh(struct rld *r)
{
	struct rld_metrics *m = &r->metrics;
	unsigned long long k[2];

	pthread_mutex_lock(&m->keys_lock);
	if (!m->keys_at_ms || now_ms() - m->keys_at_ms >= KEYS_REFRESH_MS) {
		if (!xrl_keys_tracked_family(r->x, 4, &k[0]) && !xrl_keys_tracked_family(r->x, 6, &k[1])) {
			m->keys[0] = k[0];
			m->keys[1] = k[1];
			m->keys_at_ms = now_ms();
		}
	}
	pthread_mutex_unlock(&m->keys_lock);
}

/* GET /metrics (and the API's pages: api.c), on the server's thread: ctx
 * is the struct rld. */
static int metrics_fill(FILE *f, enum xrl_http_page page, void *ctx)
{
	struct rld *r = ctx;
	struct rld_metrics *m = &r->metrics;
	struct prom p = { .f = f };
	unsigned long long keys[2];
	double keys_age_s;
	int err;

	if (page != XRL_PAGE_METRICS) {
		caps_effective(true);
		err = api_fill(r, f, page);
		caps_effective(false);
		return err;
	}

	/* the metrics thread: HTTP with no effective capability, the maps with
	 * its permitted ones */
	caps_effective(true);
	keys_refresh(r);
	/* the keys' count read before the daemon's lock is taken: keys_lock
	 * is held for whole table walks (xdp-rld --suggest's sampler walks
	 * once a second), and a scrape waiting for one with the daemon's lock
	 * held would make a reload wait for it too */
	pthread_mutex_lock(&m->keys_lock);
	keys[0] = m->keys[0];
	keys[1] = m->keys[1];
	keys_age_s = m->keys_at_ms ? (now_ms() - m->keys_at_ms) / 1e3 : -1;
	pthread_mutex_unlock(&m->keys_lock);
	pthread_mutex_lock(&r->lock);
	r->stats.log_dropped = __atomic_load_n(&r->log.dropped_total, __ATOMIC_RELAXED);
	r->stats.keys[0] = keys[0];
	r->stats.keys[1] = keys[1];
	r->stats.keys_age_s = keys_age_s;
	r->stats.last_reload_success = r->applied.at;
	snprintf(r->stats.config_sha256, sizeof(r->stats.config_sha256), "%s", r->applied.sha256);
	snprintf(r->stats.config_path, sizeof(r->stats.config_path), "%s", r->opt.config);
	err = xrl_metrics_write(&p, r->x, &r->stats);
	if (!err)
		fleet_metrics(r, &p);
	if (!err)
		crowdsec_metrics(r, &p);
	if (!err)
		suggest_metrics(r, &p);
	pthread_mutex_unlock(&r->lock);
	caps_effective(false);
	return err;
}

void metrics_set(struct rld *r, const char *file, const char *why)
{
	struct rld_metrics *ms = &r->metrics;
	const char *want = r->opt.metrics ? r->opt.metrics : file[0] ? file : DEFAULT_METRICS;
	bool first = !ms->addr[0] && !ms->file_line[0];
	struct xrl_metrics *m = NULL;
	char was[120] = "";
	int err;

	if (r->opt.metrics && !first && strcmp(file[0] ? file : "-", ms->file_line))
		xrl_log(XRL_LOG_WARN, "%s: the file's metrics line (%s) is not applied: --metrics %s overrides it",
			why, file[0] ? file : "none", r->opt.metrics);
	snprintf(ms->file_line, sizeof(ms->file_line), "%s", file[0] ? file : "-");
	if (!strcmp(want, ms->addr))
		return;
	if (ms->server)
		snprintf(was, sizeof(was), " (was http://%s/metrics)", ms->addr);
	if (!strcmp(want, "off")) {
		xrl_metrics_stop(ms->server);
		ms->server = NULL;
		snprintf(ms->addr, sizeof(ms->addr), "off");
		xrl_log(XRL_LOG_INFO, "%s: metrics off%s", why, was);
		return;
	}
	/* the server's thread starts with an empty effective set */
	caps_effective(false);
	err = xrl_metrics_start(want, metrics_fill, r, &m);
	caps_effective(true);
	if (err == -EADDRINUSE && ms->server) {
		/* the old listener may hold the port (0.0.0.0:P -> 127.0.0.1:P):
		 * free it, try again, and put it back if that fails */
		xrl_metrics_stop(ms->server);
		ms->server = NULL;
		err = xrl_metrics_start(want, metrics_fill, r, &m);
		if (err && xrl_metrics_start(ms->addr, metrics_fill, r, &ms->server))
			ms->addr[0] = '\0';
	}
	if (err) {
		if (ms->server)
			xrl_log(XRL_LOG_ERR, "%s: metrics on %s: %s; still serving on http://%s/metrics", why, want,
				strerror(-err), ms->addr);
		else
			xrl_log(XRL_LOG_ERR, "%s: metrics on %s: %s; continuing without", why, want, strerror(-err));
		return;
	}
	xrl_metrics_stop(ms->server);
	ms->server = m;
	snprintf(ms->addr, sizeof(ms->addr), "%s", want);
	xrl_log(XRL_LOG_INFO, "%s: metrics on http://%s/metrics%s", why, want, was);
}
