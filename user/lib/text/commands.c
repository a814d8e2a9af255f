// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * libxrl, the text layer: the command table of xdp-rlctl and xdp-rl.conf,
 * every command's words and what they parse into, and the checks of what
 * no single word says. The engine (grammar.c) reads it; so do the usage
 * text and help (usage.c), completion and the tests.
 */
#include "text/grammar.h"
#include "text/cmd_int.h"
#include "base/log.h"

#include <errno.h>
#include <limits.h>
#include <string.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* ---- checks of what no single word says ---- */

enum { RA_PREFIX, RA_RATE, RA_BURST, RA_PER, RA_ACTION, RA_ID, RA_ON_FAILURE,
       RA_ALGO, RA_DRY_RUN, RA_PROTO, RA_DPORT, RA_SYN, RA_SCOPE,
       RA_AGGREGATE, RA_NEWKEYS, RA_SYNCOOKIES, RA_BAN, RA_AFTER, RA_BAN_MAX, RA_SLIP };

/* An endpoint rule's words: proto first, dport and syn with it (what the
 * values then say is the rule check's). */
static int check_rule_endpoint(struct xrl_cmd *c, const int *at, struct xrl_parse_err *e)
{
	struct xrl_rule *r = &c->rule.r;

	if (at[RA_PROTO] < 0 && (at[RA_DPORT] >= 0 || at[RA_SYN] >= 0))
		return xrl_parse_fail(e, at[RA_DPORT] >= 0 ? at[RA_DPORT] - 1 : at[RA_SYN],
			    "'%s' makes an endpoint rule: it needs 'proto tcp' (or udp for dport)",
			    at[RA_DPORT] >= 0 ? "dport" : "syn");
	if (at[RA_PROTO] < 0 && at[RA_SYNCOOKIES] >= 0)
		return xrl_parse_fail(e, at[RA_SYNCOOKIES],
			    "'syn-cookies' takes an endpoint rule: it needs 'proto tcp' (and dport N|N-M)");
	if (r->ep && at[RA_DPORT] < 0) {
		r->dport_lo = 0;	/* every port: not "dport 0" */
		r->dport_hi = 65535;
	}
	return 0;
}

static int check_rule_add(struct xrl_cmd *c, const int *at, struct xrl_parse_err *e)
{
	/* the word of each field the rule check may blame: its value, or
	 * (kw) its keyword */
	static const struct { int at; bool kw; } field_at[] = {
		[XRL_FIELD_ACTION] = { RA_ACTION }, [XRL_FIELD_KEYLEN] = { RA_PER },
		[XRL_FIELD_RATE] = { RA_RATE }, [XRL_FIELD_BURST] = { RA_BURST },
		[XRL_FIELD_BAN] = { RA_BAN, true },
		[XRL_FIELD_AGGREGATE] = { RA_AGGREGATE }, [XRL_FIELD_NEWKEYS] = { RA_NEWKEYS },
		[XRL_FIELD_DPORT] = { RA_DPORT, true }, [XRL_FIELD_SYN] = { RA_SYN },
		[XRL_FIELD_WINDOW_BURST] = { RA_BURST, true }, [XRL_FIELD_SCOPE] = { RA_SCOPE, true },
		[XRL_FIELD_SYNCOOKIES] = { RA_SYNCOOKIES },
		[XRL_FIELD_SLIP] = { RA_SLIP, true },
	};
	static const int unmetered[] = { RA_RATE, RA_BURST, RA_PER, RA_AGGREGATE, RA_NEWKEYS };
	static const char *const unmetered_name[] = { "rate", "burst", "per", "aggregate",
						      "new-keys" };
	struct xrl_rule *r = &c->rule.r;
	struct xrl_rule_written *written = &c->rule_add.written;
	enum xrl_rule_field bad;
	int argi = INT_MAX, k = -1;

	/* allow and deny are never metered: a rate, burst or key length with
	 * them would be silently dropped; blame the first one written */
	for (size_t j = 0; r->action != XRL_ACT_LIMIT && j < 5; j++) {
		if (at[unmetered[j]] >= 0 && at[unmetered[j]] < argi) {
			argi = at[unmetered[j]];
			k = j;
		}
	}
	if (k >= 0)
		return xrl_parse_fail(e, argi - 1, "'%s' means nothing with action %s: %s rule is never metered (leave out rate, burst and per, or use action limit)",
			    unmetered_name[k], xrl_word_name(xrl_action_words, r->action),
			    r->action == XRL_ACT_ALLOW ? "an allow" : "a deny");
	/* an allow rule passes whether the daemon heartbeats or not */
	if (r->action == XRL_ACT_ALLOW && at[RA_ON_FAILURE] >= 0)
		return xrl_parse_fail(e, at[RA_ON_FAILURE] - 1, "'on-failure' means nothing with action allow: an allow rule always passes, daemon or not (leave it out)");
	/* what scope fleet takes (before the words below, as always) */
	if (xrl_rule_check_scope(r, &bad))
		return xrl_parse_fail(e, at[RA_SCOPE] - 1, "%s", xrl_errmsg());
	/* 0/s would read as "none" (the default) */
	if (at[RA_AGGREGATE] >= 0 && !r->agg_rate_count)
		return xrl_parse_fail(e, at[RA_AGGREGATE], "aggregate rate must be at least 1");
	if (at[RA_NEWKEYS] >= 0 && !r->nk_rate_count)
		return xrl_parse_fail(e, at[RA_NEWKEYS], "new-keys rate must be at least 1");
	if (r->action == XRL_ACT_LIMIT) {
		if (at[RA_RATE] < 0)
			return xrl_parse_fail(e, INT_MAX, "missing 'rate N/s|N/min|N/h'");
		if (at[RA_BURST] < 0 && r->algo == XRL_ALGO_GCRA)
			return xrl_parse_fail(e, INT_MAX, "missing 'burst N'");
	}
	if (check_rule_endpoint(c, at, e))
		return -EINVAL;
	/* after and ban-max without ban: blame the one written */
	if (at[RA_BAN] < 0 && (at[RA_AFTER] >= 0 || at[RA_BAN_MAX] >= 0)) {
		k = at[RA_AFTER] >= 0 ? RA_AFTER : RA_BAN_MAX;
		return xrl_parse_fail(e, at[k] - 1, "'%s' belongs to 'ban DURATION': the rule does not ban",
				      k == RA_AFTER ? "after" : "ban-max");
	}
	written->burst = at[RA_BURST] >= 0;
	if (xrl_rule_check_written(&c->rule, written, &bad)) {
		/* blame the word that set the field; a default one, the prefix */
		if (field_at[bad].kw && at[field_at[bad].at] >= 0)
			argi = at[field_at[bad].at] - 1;
		else
			argi = at[field_at[bad].at];
		return xrl_parse_fail(e, argi >= 0 ? argi : at[RA_PREFIX], "%s", xrl_errmsg());
	}
	if (r->action != XRL_ACT_LIMIT && at[RA_ALGO] >= 0)
		return xrl_parse_fail(e, at[RA_ALGO] - 1, "'algo' means nothing with action %s: the rule is never metered (leave it out)",
			    xrl_word_name(xrl_action_words, r->action));
	return 0;
}

enum { RD_REF, RD_ID };

static int check_rule_del(struct xrl_cmd *c, const int *at, struct xrl_parse_err *e)
{
	if (at[RD_REF] >= 0 && at[RD_ID] >= 0)
		return xrl_parse_fail(e, at[RD_ID] - 1, "the rule is named twice (ID, PREFIX or id ID: one of them)");
	if (at[RD_REF] < 0 && at[RD_ID] < 0)
		return xrl_parse_fail(e, INT_MAX, "missing ID|PREFIX (or id ID)");
	return 0;
}

static int check_status(struct xrl_cmd *c, const int *at, struct xrl_parse_err *e)
{
	(void)e;
	if (at[0] < 0)
		c->status.sample_ms = 250;
	return 0;
}

/* attach and interface: dev (or IFACE), mode, hook, ... */
enum { AT_DEV, AT_MODE, AT_HOOK, AT_KEYS, AT_BANS, AT_FIRST };

static int check_attach(struct xrl_cmd *c, const int *at, struct xrl_parse_err *e)
{
	if (c->attach.hook == XRL_HOOK_TC && at[AT_MODE] >= 0)
		return xrl_parse_fail(e, at[AT_MODE] - 1, "mode is an XDP mode: hook tc has none");
	if (c->attach.hook != XRL_HOOK_TC && at[AT_FIRST] >= 0)
		return xrl_parse_fail(e, at[AT_FIRST], "first is the tcx chain's order: it needs hook tc");
	return 0;
}

/* interface IFACE [mode M] [hook H] [first]: the same two checks */
enum { IF_DEV, IF_MODE, IF_HOOK, IF_FIRST };

static int check_interface(struct xrl_cmd *c, const int *at, struct xrl_parse_err *e)
{
	if (c->attach.hook == XRL_HOOK_TC && at[IF_MODE] >= 0)
		return xrl_parse_fail(e, at[IF_MODE] - 1, "mode is an XDP mode: hook tc has none");
	if (c->attach.hook != XRL_HOOK_TC && at[IF_FIRST] >= 0)
		return xrl_parse_fail(e, at[IF_FIRST], "first is the tcx chain's order: it needs hook tc");
	return 0;
}

enum { TOP_COUNT, TOP_SAMPLE, TOP_WATCH };

static int check_top(struct xrl_cmd *c, const int *at, struct xrl_parse_err *e)
{
	if (at[TOP_COUNT] < 0)
		c->top.count = c->top.watch ? 20 : 10;
	if (at[TOP_SAMPLE] < 0)
		c->top.sample_ms = 1000;
	return 0;
}

/* capture: the source filter must be an address or a prefix */
#define CAPTURE_KEY	5	/* p_capture's index of key */
static int check_capture(struct xrl_cmd *c, const int *at, struct xrl_parse_err *e)
{
	struct xrl_rule_entry pe;

	if (at[CAPTURE_KEY] >= 0 && xrl_prefix_parse(c->capture.key, &pe))
		return xrl_parse_fail(e, at[CAPTURE_KEY], "%s", xrl_errmsg());
	if (!c->capture.verdict)
		c->capture.verdict = XRL_CAPTURE_F_DROP;
	return 0;
}

enum { SG_RULE, SG_SECONDS, SG_PERCENTILE, SG_HEADROOM, SG_FROM };

static int check_suggest(struct xrl_cmd *c, const int *at, struct xrl_parse_err *e)
{
	if (at[SG_FROM] >= 0 && !strcmp(c->suggest.from, "off"))
		return xrl_parse_fail(e, at[SG_FROM], "'from off': from takes the daemon's metrics address, ADDR:PORT");
	if (at[SG_FROM] >= 0 && at[SG_SECONDS] >= 0)
		return xrl_parse_fail(e, at[SG_SECONDS] - 1,
				      "'seconds' means nothing with 'from': the daemon's record is as long as it has kept it");
	if (at[SG_SECONDS] < 0)
		c->suggest.seconds = 60;
	if (at[SG_PERCENTILE] < 0)
		c->suggest.percentile = 95;
	if (at[SG_HEADROOM] < 0)
		c->suggest.headroom = 50;
	return 0;
}

/* ---- the table ---- */


static const struct xrl_param p_attach[] = {
	{ "dev", XRL_ARG_IFACE, "IFACE", F(attach.ifname), .need = XRL_REQUIRED,
	  .help = "the interface to attach to" },
	{ "mode", XRL_ARG_WORD, NULL, xrl_xdp_mode_words, F(attach.xdp_mode), .what = "XDP mode",
	  .help = "the XDP mode (default: native where the driver has it)" },
	{ "hook", XRL_ARG_WORD, NULL, xrl_hook_words, F(attach.hook), .what = "hook",
	  .help = "where it runs: xdp (default), or tc ingress beside another XDP program" },
	{ "keys", XRL_ARG_NUM, "N", .min = 16, .max = 1U << 30, F(attach.keys),
	  .help = "bucket table size in keys, per family, 16 .. 1073741824 (first attach only)" },
	{ "bans", XRL_ARG_NUM, "N", .min = 16, .max = 1U << 24, F(attach.bans),
	  .help = "ban table size per family, 16 .. 16777216 (default 65536; first attach)" },
	{ "first", XRL_ARG_FLAG, F(attach.tc_first),
	  .help = "hook tc, attached already: put it first in the tcx chain again" },
	{ "syn-verified", XRL_ARG_NUM, "N", .min = 16, .max = 1U << 24, F(attach.syn_verified),
	  .help = "SYN cookies' verified sources, 16 .. 16777216 (default 65536; first attach)" },
	END,
};

static const struct xrl_param p_detach[] = {
	{ "dev", XRL_ARG_IFACE, "IFACE", F(detach.ifname), .need = XRL_REQUIRED,
	  .help = "the interface to detach from" },
	{ "purge", XRL_ARG_FLAG, F(detach.purge),
	  .help = "then remove the pins (rules, buckets, counters) if nothing is attached" },
	END,
};

static const struct xrl_param p_agg_burst = {
	"burst", XRL_ARG_NUM, "N", .min = 1, .max = UINT_MAX, .range = "1 .. 4294967295",
	F(rule.r.agg_burst), .what = "aggregate burst",
	.help = "the aggregate's burst in packets (default: one second of its rate)",
};

static const struct xrl_param p_rule_add[] = {
	[RA_PREFIX] = { NULL, XRL_ARG_PREFIX, "PREFIX|@SET", F(rule), .need = XRL_REQUIRED,
			.help = "the sources: ADDR/LEN, IPv4 or IPv6 (an address: one host), or @SET" },
	[RA_RATE] = { "rate", XRL_ARG_RATE, "N/s|N/min|N/h", .need = XRL_REQUIRED_IF,
		      .help = "packets per key per s, min or h; bytes: 10mbit, 2mbps (tc's units)" },
	[RA_BURST] = { "burst", XRL_ARG_SIZE, "N", .need = XRL_REQUIRED_IF,
		       .help = "bucket size in packets (bytes for a byte rate: 64kb); token bucket only" },
	[RA_PER] = { "per", XRL_ARG_KEYLEN, "/LEN",
		     .help = "key length in bits of the source (default /32, IPv6 /64)" },
	[RA_ACTION] = { "action", XRL_ARG_WORD, NULL, xrl_action_words, F(rule.r.action),
			.help = "limit (default), or always pass (allow) or drop (deny)" },
	[RA_ID] = { "id", XRL_ARG_NUM, "ID", .min = 1, .max = UINT_MAX, F(rule.r.id),
		    .help = "the rule's id, 1 .. 4294967295 (default: the next free one)" },
	[RA_ON_FAILURE] = { "on-failure", XRL_ARG_WORD, NULL, xrl_on_failure_words,
			    F(rule.r.on_failure),
			    .help = "no heartbeat: pass (open, default) or drop (closed)" },
	[RA_ALGO] = { "algo", XRL_ARG_WORD, NULL, xrl_algo_words, F(rule.r.algo),
		      .what = "algorithm", .late = true,	/* "a" stays action */
		      .help = "the meter (default token-bucket; windows take no burst)" },
	[RA_DRY_RUN] = { "dry-run", XRL_ARG_FLAG, F(rule.r.dry_run), .late = true,
			 .help = "meter and count would-drops, pass everything" },
	[RA_PROTO] = { "proto", XRL_ARG_PROTO, "tcp|udp|icmp|icmpv6|N", .late = true,
		       .help = "an endpoint rule: this L4 protocol only (N: its number)" },
	[RA_DPORT] = { "dport", XRL_ARG_PORTS, "N|N-M", .late = true,
		       .help = "an endpoint rule: these destination ports only (tcp, udp)" },
	[RA_SYN] = { "syn", XRL_ARG_FLAG, F(rule.r.syn), .late = true,
		     .help = "an endpoint rule: TCP SYNs without ACK only" },
	[RA_SCOPE] = { "scope", XRL_ARG_WORD, NULL, xrl_scope_words, F(rule.r.scope), .late = true,
		       .help = "the limit holds per host (default) or across the fleet (Redis)" },
	[RA_AGGREGATE] = { "aggregate", XRL_ARG_RATE_AT, "N/s|N/min|N/h", F(rule.r.agg_rate_count),
			   .then = &p_agg_burst, .late = true,
			   .help = "one more bucket for all keys together, in packets per s, min or h" },
	[RA_NEWKEYS] = { "new-keys", XRL_ARG_RATE_AT, "N/s|N/min|N/h", F(rule.r.nk_rate_count),
			 .late = true,
			 .help = "new buckets per s, min or h (default: from the table size)" },
	[RA_SYNCOOKIES] = { "syn-cookies", XRL_ARG_FLAG, F(rule.r.syncookies), .late = true,
			    .help = "an endpoint rule of tcp: unverified sources get a cookie SYN-ACK" },
	[RA_BAN] = { "ban", XRL_ARG_DURATION, "DURATION", .min = 1, .max = XRL_BAN_MAX_S,
		     F(rule.r.ban_s), .what = "ban", .late = true,
		     .help = "a key this rule limits (after N times) is banned so long: N, Ns, Nm, Nh, Nd" },
	[RA_AFTER] = { "after", XRL_ARG_NUM, "N", .min = 1, .max = XRL_BAN_AFTER_MAX, F(rule.r.ban_after),
		       .what = "offences", .late = true,
		       .help = "ban at the Nth time the key becomes limited, 1 .. 1000 (default 1)" },
	[RA_BAN_MAX] = { "ban-max", XRL_ARG_DURATION, "DURATION", .min = 1, .max = XRL_BAN_MAX_S,
			 F(rule.r.ban_max_s), .what = "ban-max", .late = true,
			 .help = "a repeat offender's ban doubles up to this; also the memory (default 24h)" },
	[RA_SLIP] = { "slip", XRL_ARG_NUM, "N", .min = 0, .max = XRL_SLIP_MAX, F(rule.r.slip),
		      .late = true,
		      .help = "proto udp: answer every Nth refused DNS query (TC), 0 .. 100 (default 0)" },
	END,
};

static const struct xrl_param p_rule_del[] = {
	[RD_REF] = { NULL, XRL_ARG_RULE_REF, "ID|PREFIX", F(rule_del.id), .need = XRL_REQUIRED_IF,
		     .help = "the rule's id, or the prefix of its source rule" },
	[RD_ID] = { "id", XRL_ARG_NUM, "ID", .min = 1, .max = UINT_MAX, F(rule_del.id),
		    .need = XRL_ALTERNATIVE, .what = "rule id",
		    .help = "the rule of this id (an endpoint rule: only by id)" },
	END,
};

static const struct xrl_param p_rule_list[] = {
	{ "config", XRL_ARG_FLAG, F(rule_list.config),
	  .help = "as xdp-rl.conf lines: what a config file reads back" },
	END,
};

static const struct xrl_param p_status[] = {
	{ "sample", XRL_ARG_NUM, "MS", .min = 0, .max = 60000, .range = "milliseconds, 0 .. 60000",
	  F(status.sample_ms),
	  .help = "the run-time figure over MS milliseconds now (default 250; 0: none)" },
	END,
};

static const struct xrl_param p_mode_set[] = {
	{ NULL, XRL_ARG_WORD, NULL, xrl_mode_words, F(mode_set.mode), .need = XRL_REQUIRED, .what = "mode",
	  .help = "meter and drop, meter and pass, pass all, or drop all that rules meter" },
	END,
};

static const struct xrl_param p_show[] = {
	{ NULL, XRL_ARG_ADDR, "ADDR", F(addr), .need = XRL_REQUIRED,
	  .help = "a source address, IPv4 or IPv6" },
	END,
};

static const struct xrl_param p_top[] = {
	[TOP_COUNT] = { "count", XRL_ARG_NUM, "N", .min = 1, .max = 1000000, F(top.count),
			.help = "how many keys, 1 .. 1000000 (default 10)" },
	[TOP_SAMPLE] = { "sample", XRL_ARG_NUM, "MS", .min = 10, .max = 60000,
			 .range = "milliseconds, 10 .. 60000", F(top.sample_ms),
			 .help = "the sample in milliseconds, 10 .. 60000 (default 1000)" },
	[TOP_WATCH] = { "watch", XRL_ARG_FLAG, F(top.watch),
			.help = "a live full screen, a sample at a time, until q" },
	{ "rule", XRL_ARG_NUM, "ID", .min = 1, .max = UINT_MAX, F(top.rule), .what = "rule id",
	  .help = "the keys of this rule only (and, with watch, its row only)" },
	END,
};

static const struct xrl_param p_suggest[] = {
	[SG_RULE] = { "rule", XRL_ARG_NUM, "ID", .min = 1, .max = UINT_MAX, F(suggest.rule), .what = "rule id",
		      .help = "this rule only (default: every token-bucket rule of packets)" },
	[SG_SECONDS] = { "seconds", XRL_ARG_NUM, "S", .min = 1, .max = 86400, F(suggest.seconds),
			 .help = "how long to watch the traffic, seconds, 1 .. 86400 (default 60)" },
	[SG_PERCENTILE] = { "percentile", XRL_ARG_NUM, "P", .min = 1, .max = 100, F(suggest.percentile),
			    .help = "the rate: this percentile of the keys' peak rates, 1 .. 100 (default 95)" },
	[SG_HEADROOM] = { "headroom", XRL_ARG_NUM, "PCT", .min = 0, .max = 1000, F(suggest.headroom),
			  .help = "percent added to what was seen, 0 .. 1000 (default 50: 1.5 times)" },
	[SG_FROM] = { "from", XRL_ARG_HOSTPORT, "ADDR:PORT", F(suggest.from), .what = "daemon's metrics",
		      .help = "propose from xdp-rld --suggest's record, read from its /metrics" },
	END,
};

static const struct xrl_param p_key_list[] = {
	{ "rule", XRL_ARG_NUM, "ID", .min = 1, .max = UINT_MAX, F(key_list.rule), .what = "rule id",
	  .help = "the keys of this rule only" },
	{ "limited", XRL_ARG_FLAG, F(key_list.limited),
	  .help = "only the keys without a token now" },
	END,
};

static const struct xrl_param p_key_addr[] = {
	{ NULL, XRL_ARG_ADDR, "ADDR", F(addr), .need = XRL_REQUIRED,
	  .help = "a source address: the key of its rule" },
	END,
};

static const struct xrl_param p_events[] = {
	{ "count", XRL_ARG_NUM, "N", .min = 1, .max = 1000000, F(events.count),
	  .help = "stop after N events, 1 .. 1000000" },
	{ "timeout", XRL_ARG_NUM, "SEC", .min = 1, .max = 86400, F(events.timeout_s),
	  .help = "stop after SEC seconds, 1 .. 86400" },
	END,
};

static const struct xrl_param p_help[] = {
	{ NULL, XRL_ARG_TOPIC, "COMMAND", F(help.topic), .what = "command",
	  .help = "a command or its first word" },
	END,
};

static const struct xrl_param p_replay[] = {
	{ NULL, XRL_ARG_FILE, "FILE", F(replay.capture), .need = XRL_REQUIRED, .what = "capture file",
	  .help = "a pcap or pcapng capture (Ethernet, Linux cooked or raw IP)" },
	{ "config", XRL_ARG_FILE, "FILE", F(replay.config), .what = "configuration file",
	  .help = "the rules of this xdp-rl.conf (default: the pinned rules)" },
	END,
};

static const struct xrl_word capture_verdict_words[] = {
	{ "drop", XRL_CAPTURE_F_DROP }, { "pass", XRL_CAPTURE_F_PASS },
	{ "any", XRL_CAPTURE_F_DROP | XRL_CAPTURE_F_PASS },
	{ NULL, 0 },
};

static const struct xrl_word capture_format_words[] = {
	{ "pcapng", XRL_CAPTURE_PCAPNG }, { "pcap", XRL_CAPTURE_PCAP },
	{ NULL, 0 },
};

static const struct xrl_param p_capture[] = {
	{ NULL, XRL_ARG_FILE, "FILE", F(capture.file), .need = XRL_REQUIRED, .what = "output file",
	  .help = "the file to write, or - for stdout (flushed after every packet)" },
	{ "count", XRL_ARG_NUM, "N", .min = 1, .max = 100000000, F(capture.count),
	  .help = "stop after N packets, 1 .. 100000000" },
	{ "seconds", XRL_ARG_NUM, "S", .min = 1, .max = 86400, F(capture.seconds),
	  .help = "stop after S seconds, 1 .. 86400" },
	{ "verdict", XRL_ARG_WORD, NULL, capture_verdict_words, F(capture.verdict), .what = "verdict",
	  .help = "the packets of this final verdict (default: drop)" },
	{ "rule", XRL_ARG_NUM, "ID", .min = 1, .max = UINT_MAX, F(capture.rule), .what = "rule id",
	  .help = "only the packets this rule decided" },
	{ "key", XRL_ARG_STRING, "ADDR[/LEN]", F(capture.key), .what = "source",
	  .help = "only the packets from this address or prefix" },
	{ "snaplen", XRL_ARG_NUM, "N", .min = 64, .max = XRL_CAPTURE_MAX_SNAPLEN, F(capture.snaplen),
	  .help = "bytes of each packet, 64 .. 4096 (default 256)" },
	{ "format", XRL_ARG_WORD, NULL, capture_format_words, F(capture.format), .what = "format",
	  .help = "pcapng (verdict and rule in each packet's comment) or pcap" },
	END,
};

static const struct xrl_param p_interface[] = {
	{ NULL, XRL_ARG_IFACE, "IFACE", F(attach.ifname), .need = XRL_REQUIRED,
	  .help = "an interface the daemon attaches to" },
	{ "mode", XRL_ARG_WORD, NULL, xrl_xdp_mode_words, F(attach.xdp_mode), .what = "XDP mode",
	  .help = "the XDP mode (default: native where the driver has it)" },
	{ "hook", XRL_ARG_WORD, NULL, xrl_hook_words, F(attach.hook), .what = "hook",
	  .help = "where it runs: xdp (default), or tc ingress beside another XDP program" },
	{ "first", XRL_ARG_FLAG, F(attach.tc_first),
	  .help = "hook tc: keep it first in the tcx chain (else only said)" },
	END,
};

static const struct xrl_param p_heartbeat[] = {
	{ NULL, XRL_ARG_NUM, "MS", .min = 10, .max = 3600000, .range = "milliseconds, 10 .. 3600000",
	  F(ms.ms), .need = XRL_REQUIRED, .what = "heartbeat",
	  .help = "milliseconds between heartbeats, 10 .. 3600000" },
	END,
};

static const struct xrl_param p_watchdog[] = {
	{ NULL, XRL_ARG_NUM, "MS", .min = 0, .max = 3600000, .range = "milliseconds, 0 .. 3600000",
	  F(ms.ms), .need = XRL_REQUIRED, .what = "watchdog",
	  .help = "milliseconds without a heartbeat, 0 .. 3600000 (0: never)" },
	END,
};

static const struct xrl_param p_metrics[] = {
	{ NULL, XRL_ARG_HOSTPORT, "ADDR:PORT|off", F(metrics.hostport), .need = XRL_REQUIRED, .what = "metrics",
	  .help = "the address to listen on, or off: no metrics server" },
	END,
};

static const struct xrl_param p_fleet_redis[] = {
	{ NULL, XRL_ARG_STRING, "HOST:PORT[,HOST:PORT...]", F(fleet.redis), .need = XRL_REQUIRED,
	  .what = "Redis address",
	  .help = "the Redis server, or the seeds of a cluster" },
	{ "cluster", XRL_ARG_FLAG, F(fleet.cluster),
	  .help = "the addresses are a Redis Cluster's" },
	{ "sync", XRL_ARG_NUM, "MS", .min = 10, .max = 10000, .range = "milliseconds, 10 .. 10000",
	  F(fleet.sync_ms), .help = "milliseconds between syncs, 10 .. 10000" },
	{ "timeout", XRL_ARG_NUM, "MS", .min = 1, .max = 1000, .range = "milliseconds, 1 .. 1000",
	  F(fleet.timeout_ms), .help = "a call's deadline in milliseconds, 1 .. 1000" },
	{ "hosts", XRL_ARG_NUM, "N", .min = 1, .max = 65536, .range = "hosts, 1 .. 65536",
	  F(fleet.hosts), .help = "the hosts a closed rule assumes before its first sync (default 2)" },
	END,
};

static const struct xrl_param p_fleet_host[] = {
	{ NULL, XRL_ARG_STRING, "NAME", F(fleet.host), .need = XRL_REQUIRED, .what = "host name",
	  .help = "this host's name in the fleet's keys" },
	END,
};


static const struct xrl_param p_fleet_auth[] = {
	{ NULL, XRL_ARG_FILE, "FILE", F(fleet.auth_file), .need = XRL_REQUIRED,
	  .what = "credentials file",
	  .help = "PASSWORD or USER PASSWORD on one line, readable by root only" },
	END,
};

static const struct xrl_param p_crowdsec[] = {
	{ NULL, XRL_ARG_STRING, "URL", F(crowdsec.url), .need = XRL_REQUIRED,
	  .what = "Local API URL",
	  .help = "the CrowdSec Local API: http://HOST:PORT, HOST an IP address" },
	{ "key-file", XRL_ARG_FILE, "FILE", F(crowdsec.key_file), .need = XRL_REQUIRED,
	  .what = "bouncer key file",
	  .help = "the bouncer key (cscli bouncers add) on one line, readable by root only" },
	{ "poll", XRL_ARG_NUM, "MS", .min = 100, .max = 3600000, .range = "milliseconds, 100 .. 3600000",
	  F(crowdsec.poll_ms), .help = "milliseconds between pulls of the decision stream (default 10000)" },
	{ "timeout", XRL_ARG_NUM, "MS", .min = 10, .max = 60000, .range = "milliseconds, 10 .. 60000",
	  F(crowdsec.timeout_ms), .help = "a pull's deadline in milliseconds (default 2000, at most poll)" },
	{ "max-body", XRL_ARG_NUM, "MB", .min = 1, .max = 64, .range = "MiB, 1 .. 64",
	  F(crowdsec.max_body_mb), .help = "an answer's body at most, in MiB (default 8: some 40,000 decisions)" },
	END,
};

#define BOTH (XRL_IN_CLI | XRL_IN_CONFIG)

const struct xrl_command xrl_commands[] = {
	{ "attach", XRL_CMD_ATTACH, XRL_IN_CLI, p_attach, check_attach,
	  "load (or reuse) the program and its maps and attach to IFACE" },
	{ "detach", XRL_CMD_DETACH, XRL_IN_CLI, p_detach, NULL,
	  "detach from IFACE (refused while xdp-rld serves it); purge: remove the pins once nothing is attached" },
	{ "purge", XRL_CMD_PURGE, XRL_IN_CLI, NULL, NULL,
	  "remove the pins (rules, buckets, counters); refused while attached anywhere" },
	{ "upgrade", XRL_CMD_UPGRADE, XRL_IN_CLI, NULL, NULL,
	  "this build's program takes over the running one's maps and links, state kept" },
	{ "status", XRL_CMD_STATUS, XRL_IN_CLI, p_status, check_status,
	  "program, mode, rules, keys, the daemon's heartbeat, run time per packet now, interfaces",
	  .preferred = true },
	{ "rule add", XRL_CMD_RULE_ADD, BOTH, p_rule_add, check_rule_add,
	  "add a rule: a bucket of burst refilled at rate for each key under PREFIX",
	  .preferred = true },	/* "r" was rule's before replay came */
	{ "rule del", XRL_CMD_RULE_DEL, XRL_IN_CLI, p_rule_del, check_rule_del,
	  "remove one rule" },
	{ "rule list", XRL_CMD_RULE_LIST, XRL_IN_CLI, p_rule_list, NULL,
	  "list the rules; config: as rule add lines of xdp-rl.conf, every setting written out" },
	{ "rule flush", XRL_CMD_RULE_FLUSH, XRL_IN_CLI, NULL, NULL,
	  "remove every rule" },
	{ "mode", XRL_CMD_MODE_SHOW, XRL_IN_CLI, NULL, NULL,
	  "the data path's mode" },
	{ "mode set", XRL_CMD_MODE_SET, BOTH, p_mode_set, NULL,
	  "switch the data path's mode" },
	{ "stats", XRL_CMD_STATS, XRL_IN_CLI, NULL, NULL,
	  "what each rule passed and dropped; global counters" },
	{ "show", XRL_CMD_SHOW, XRL_IN_CLI, p_show, NULL,
	  "the rule and the bucket of ADDR" },
	{ "top", XRL_CMD_TOP, XRL_IN_CLI, p_top, check_top,
	  "the N keys dropping most over a sample of MS (default 10, 1000 ms); watch: live" },
	{ "suggest", XRL_CMD_SUGGEST, XRL_IN_CLI, p_suggest, check_suggest,
	  "watch the traffic S seconds, propose each rule's rate, burst, new-keys and aggregate" },
	{ "key list", XRL_CMD_KEY_LIST, XRL_IN_CLI, p_key_list, NULL,
	  "the tracked keys (of rule ID; limited: without a token now)" },
	{ "key reset", XRL_CMD_KEY_RESET, XRL_IN_CLI, p_key_addr, NULL,
	  "forgive the key of ADDR: its bucket full again" },
	{ "key del", XRL_CMD_KEY_DEL, XRL_IN_CLI, p_key_addr, NULL,
	  "forget the key of ADDR: delete its bucket" },
	{ "events", XRL_CMD_EVENTS, XRL_IN_CLI, p_events, NULL,
	  "follow keys becoming limited and no longer limited; stop after N or SEC" },
	{ "replay", XRL_CMD_REPLAY, XRL_IN_CLI, p_replay, NULL,
	  "what the rules (of the config FILE, else the pinned ones) would do to a capture" },
	{ "ban add", XRL_CMD_BAN_ADD, BOTH, xrl__p_ban_add, xrl__check_ban,
	  "drop every packet from PREFIX, before any rule, for DURATION (default: until ban del)" },
	{ "ban del", XRL_CMD_BAN_DEL, XRL_IN_CLI, xrl__p_ban_del, xrl__check_ban,
	  "lift the ban of PREFIX (by NAME: only that decider's)" },
	{ "ban list", XRL_CMD_BAN_LIST, XRL_IN_CLI, NULL, NULL,
	  "the bans: prefix, who set it, time left, packets dropped, reason" },
	{ "ban flush", XRL_CMD_BAN_FLUSH, XRL_IN_CLI, xrl__p_ban_flush, xrl__check_ban,
	  "lift every ban (by NAME: only that decider's)" },
	{ "capture", XRL_CMD_CAPTURE, XRL_IN_CLI, p_capture, check_capture,
	  "write the packets the data path drops (or passes) with their verdicts to a pcapng FILE" },
	{ "help", XRL_CMD_HELP, XRL_IN_CLI, p_help, NULL,
	  "the commands (all of them, or those of COMMAND) and what they take" },
	{ "set create", XRL_CMD_SET_CREATE, XRL_IN_CLI, xrl__p_set_create, xrl__check_set_create,
	  "create an empty set of prefixes (timeout: its elements end after DURATION)" },
	{ "set add", XRL_CMD_SET_ADD, XRL_IN_CLI, xrl__p_set_add, xrl__check_set_add,
	  "add a prefix, an address or a range A-B to a set" },
	{ "set del", XRL_CMD_SET_DEL, XRL_IN_CLI, xrl__p_set_del, xrl__check_set_del,
	  "delete a prefix from a set, or the whole set" },
	{ "set list", XRL_CMD_SET_LIST, XRL_IN_CLI, NULL, NULL,
	  "the sets: prefixes, memory, the rules that take them" },
	{ "set show", XRL_CMD_SET_SHOW, XRL_IN_CLI, xrl__p_set_name, xrl__check_set_name,
	  "a set's prefixes and the time each has left" },
	{ "set flush", XRL_CMD_SET_FLUSH, XRL_IN_CLI, xrl__p_set_name, xrl__check_set_name,
	  "empty a set (in one swap)" },
	{ "set load", XRL_CMD_SET_LOAD, XRL_IN_CLI, xrl__p_set_load, xrl__check_set_name,
	  "replace a set by the prefixes of FILE, in one swap; a bad line applies nothing" },
	{ "set", XRL_CMD_SET_FILE, XRL_IN_CONFIG, xrl__p_set_file, xrl__check_set_file,
	  "the set NAME holds the prefixes of FILE, loaded (in one swap) with the rules" },
	{ "interface", XRL_CMD_INTERFACE, XRL_IN_CONFIG, p_interface, check_interface,
	  "attach to IFACE (as often as needed)" },
	{ "heartbeat", XRL_CMD_HEARTBEAT, XRL_IN_CONFIG, p_heartbeat, NULL,
	  "ms between the daemon's heartbeats (default 1000)" },
	{ "watchdog", XRL_CMD_WATCHDOG, XRL_IN_CONFIG, p_watchdog, NULL,
	  "ms without a heartbeat before rules follow on-failure (default 5000; 0: never)" },
	{ "metrics", XRL_CMD_METRICS, XRL_IN_CONFIG, p_metrics, NULL,
	  "where to serve Prometheus metrics (default 127.0.0.1:9437)" },
	{ "fleet redis", XRL_CMD_FLEET_REDIS, XRL_IN_CONFIG, p_fleet_redis, NULL,
	  "share scope fleet rules through Redis (cluster: a Redis Cluster); sync, timeout in ms" },
	{ "fleet host", XRL_CMD_FLEET_HOST, XRL_IN_CONFIG, p_fleet_host, NULL,
	  "this host's name in the fleet (default: the hostname)" },
	{ "fleet auth", XRL_CMD_FLEET_AUTH, XRL_IN_CONFIG, p_fleet_auth, NULL,
	  "Redis credentials: FILE holds PASSWORD or USER PASSWORD on one line" },
	{ "crowdsec", XRL_CMD_CROWDSEC, XRL_IN_CONFIG, p_crowdsec, NULL,
	  "follow a CrowdSec Local API's decisions: its bans become bans of origin crowdsec" },
};

const size_t xrl_ncommands = sizeof(xrl_commands) / sizeof(xrl_commands[0]);
