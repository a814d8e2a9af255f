// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include "metrics.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <linux/tcp.h>
#include <microhttpd.h>
#include <bpf/libbpf.h>

#include "text/grammar.h"
#include "text/config.h"

/* ---- the exposition ---- */

static void help(FILE *f, const char *name, const char *type, const char *text)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, text, name, type);
}

/* A label's value, with the exposition format's escapes. */
static void label_value(FILE *f, const char *s)
{
	for (const char *p = s; *p; p++)
		fprintf(f, *p == '"' ? "\\\"" : *p == '\\' ? "\\\\" : *p == '\n' ? "\\n" : "%c", *p);
}

/* The live events the daemon read, and those the data path left out since
 * the daemon started (before, nobody read its ring). */
static int events_write(FILE *f, struct xrl *x, const struct xrl_daemon_stats *ds)
{
	const struct xrl_event_stats *b = &ds->events_base;
	struct xrl_event_stats es;
	int err = xrl_event_stats_get(x, &es);

	if (err)
		return err;
	help(f, "xdp_rl_events_total", "counter", "Live events read by the daemon: keys that became limited, and no longer limited.");
	fprintf(f, "xdp_rl_events_total{kind=\"limited\"} %llu\n", ds->events[0]);
	fprintf(f, "xdp_rl_events_total{kind=\"unlimited\"} %llu\n", ds->events[1]);
	help(f, "xdp_rl_events_dropped_total", "counter",
	     "Live events the data path left out since the daemon started: over the global cap, or its ring full.");
	fprintf(f, "xdp_rl_events_dropped_total{reason=\"rate_cap\"} %llu\n",
		(unsigned long long)(es.dropped_rate - b->dropped_rate));
	fprintf(f, "xdp_rl_events_dropped_total{reason=\"ring_full\"} %llu\n",
		(unsigned long long)(es.ring_full[0] - b->ring_full[0]));
	help(f, "xdp_rl_events_sampled_total", "counter",
	     "\"limited\" events left out since the daemon started: the key had one less than 10 s before.");
	fprintf(f, "xdp_rl_events_sampled_total %llu\n", (unsigned long long)(es.sampled - b->sampled));
	help(f, "xdp_rl_events_unlogged_total", "counter", "Live events read but not logged (at most 10 lines a second).");
	fprintf(f, "xdp_rl_events_unlogged_total %llu\n", ds->events_unlogged);
	return 0;
}

int xrl_metrics_write(FILE *f, struct xrl *x, const struct xrl_daemon_stats *ds)
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
	};
	struct xrl_rule_entry *v = NULL;
	struct xrl_rule_stats *rs = NULL;
	struct xrl_global_stats g;
	struct xrl_prog_runtime rt;
	struct xrl_attachment *att = NULL;
	size_t natt = 0;
	unsigned long long keys[2] = {};
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

	help(f, "xdp_rl_build_info", "gauge", "The running xdp-rld's version; always 1.");
	fprintf(f, "xdp_rl_build_info{version=\"%s\",libbpf=\"%u.%u\"} 1\n", xrl_version(),
		libbpf_major_version(), libbpf_minor_version());

	for (size_t m = 0; m < sizeof(per_rule) / sizeof(per_rule[0]); m++) {
		help(f, per_rule[m].name, "counter", per_rule[m].help);
		for (size_t i = 0; i < n; i++) {
			char pfx[64];

			xrl_prefix_format(&v[i], pfx, sizeof(pfx));
			fprintf(f, "%s{rule=\"%u\",prefix=\"%s\",action=\"%s\"} %llu\n", per_rule[m].name,
				v[i].r.id, pfx, xrl_action_name(v[i].r.action),
				*(unsigned long long *)((char *)&rs[i] + per_rule[m].off));
		}
	}
	/* what each rule is, as labels to join on rule: the counters' own
	 * label sets stay as they were (alerts and dashboards select them) */
	help(f, "xdp_rl_rule_info", "gauge", "A rule's configuration, as labels; always 1.");
	for (size_t i = 0; i < n; i++) {
		char pfx[64], rate[32], burst[16], proto[16], ports[16];

		xrl_prefix_format(&v[i], pfx, sizeof(pfx));
		if (v[i].r.action == XRL_ACT_LIMIT)
			xrl_rule_rate_format(&v[i].r, rate, sizeof(rate));
		else
			snprintf(rate, sizeof(rate), "-");
		xrl_rule_burst_format(&v[i].r, burst, sizeof(burst));
		xrl_rule_proto_format(&v[i].r, proto, sizeof(proto));
		xrl_rule_ports_format(&v[i].r, ports, sizeof(ports));
		fprintf(f, "xdp_rl_rule_info{rule=\"%u\",prefix=\"%s\",action=\"%s\",algo=\"%s\",rate=\"%s\",burst=\"%s\",dry_run=\"%s\",proto=\"%s\",dport=\"%s\",syn=\"%s\"} 1\n",
			v[i].r.id, pfx, xrl_action_name(v[i].r.action),
			v[i].r.action == XRL_ACT_LIMIT ? xrl_word_name(xrl_algo_words, v[i].r.algo) : "",
			rate, burst, v[i].r.dry_run ? "yes" : "no", proto, ports, v[i].r.syn ? "yes" : "no");
	}
	help(f, "xdp_rl_unmatched_packets_total", "counter", "IP packets that matched no rule (passed).");
	fprintf(f, "xdp_rl_unmatched_packets_total %llu\n", (unsigned long long)g.unmatched_packets);
	help(f, "xdp_rl_non_ip_packets_total", "counter", "Non-IP frames (passed untouched).");
	fprintf(f, "xdp_rl_non_ip_packets_total %llu\n", (unsigned long long)g.non_ip_packets);
	help(f, "xdp_rl_malformed_packets_total", "counter", "Malformed IP packets (dropped in enforce).");
	fprintf(f, "xdp_rl_malformed_packets_total %llu\n", (unsigned long long)g.malformed_packets);
	help(f, "xdp_rl_verdict_packets_total", "counter", "Verdicts of the data path, by mode.");
	for (int m = 0; m < XRL_MODE_MAX; m++) {
		fprintf(f, "xdp_rl_verdict_packets_total{mode=\"%s\",verdict=\"pass\"} %llu\n",
			xrl_mode_name(m), (unsigned long long)g.passed_packets[m]);
		fprintf(f, "xdp_rl_verdict_packets_total{mode=\"%s\",verdict=\"drop\"} %llu\n",
			xrl_mode_name(m), (unsigned long long)g.dropped_packets[m]);
	}
	help(f, "xdp_rl_mode", "gauge", "The data path's mode: 1 for the current one.");
	for (int m = 0; m < XRL_MODE_MAX; m++)
		fprintf(f, "xdp_rl_mode{mode=\"%s\"} %d\n", xrl_mode_name(m), xrl_mode_get(x) == (enum xrl_mode)m);
	age = xrl_heartbeat_age(x);
	help(f, "xdp_rl_heartbeat_age_seconds", "gauge", "Seconds since the last heartbeat, as the data path sees it.");
	fprintf(f, "xdp_rl_heartbeat_age_seconds %.3f\n", age < 0 ? 0 : age / 1e9);
	help(f, "xdp_rl_watchdog_seconds", "gauge", "The watchdog time (0: off).");
	fprintf(f, "xdp_rl_watchdog_seconds %.3f\n", xrl_control(x)->watchdog_ns / 1e9);
	help(f, "xdp_rl_interface_packets_total", "counter",
	     "Verdicts on packets received by each interface the program is attached to (counted per ifindex % 256).");
	for (size_t i = 0; i < natt; i++) {
		struct xrl_if_stats is;
		char names[256];
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
		fprintf(f, "xdp_rl_interface_packets_total{interface=\"%s\",ifindex=\"%u\",verdict=\"pass\"} %llu\n",
			names, att[i].ifindex, (unsigned long long)is.passed_packets);
		fprintf(f, "xdp_rl_interface_packets_total{interface=\"%s\",ifindex=\"%u\",verdict=\"drop\"} %llu\n",
			names, att[i].ifindex, (unsigned long long)is.dropped_packets);
	}
	help(f, "xdp_rl_keys_tracked", "gauge", "Keys with a bucket, per address family.");
	for (int i = 0; i < 2; i++)
		fprintf(f, "xdp_rl_keys_tracked{family=\"ipv%d\"} %llu\n", i ? 6 : 4, keys[i]);
	help(f, "xdp_rl_keys_inserted_total", "counter", "Buckets created since the program was loaded, every rule.");
	fprintf(f, "xdp_rl_keys_inserted_total %llu\n", (unsigned long long)g.keys_inserted);
	help(f, "xdp_rl_keys_evicted_estimate", "gauge",
	     "Buckets evicted or deleted since the program was loaded: inserted less tracked.");
	fprintf(f, "xdp_rl_keys_evicted_estimate %llu\n", xrl_keys_evicted_estimate(&g, keys[0] + keys[1]));
	help(f, "xdp_rl_keys_capacity", "gauge", "Size of the family's bucket table.");
	for (int i = 0; i < 2; i++)
		fprintf(f, "xdp_rl_keys_capacity{family=\"ipv%d\"} %u\n", i ? 6 : 4,
			xrl_keys_capacity_family(x, i ? 6 : 4));
	/* the kernel's run-time statistics: ns per packet is
	 * rate(run_seconds_total) / rate(runs_total) */
	if (xrl_prog_runtime_get(x, false, &rt) == 0) {
		help(f, "xdp_rl_program_runs_total", "counter",
		     "Runs of the XDP program the kernel counted (only while run-time statistics are enabled).");
		fprintf(f, "xdp_rl_program_runs_total %llu\n", (unsigned long long)rt.run_cnt);
		help(f, "xdp_rl_program_run_seconds_total", "counter",
		     "Time the kernel counted in the XDP program over those runs.");
		fprintf(f, "xdp_rl_program_run_seconds_total %.9f\n", rt.run_time_ns / 1e9);
	}
	help(f, "xdp_rl_rules_loaded", "gauge", "Rules in the active rule set.");
	fprintf(f, "xdp_rl_rules_loaded %zu\n", n);
	if (ds) {
		help(f, "xdp_rl_keys_tracked_age_seconds", "gauge", "How long ago xdp_rl_keys_tracked was counted (at most every 10 s, outside the reload lock).");
		fprintf(f, "xdp_rl_keys_tracked_age_seconds %.3f\n", ds->keys_age_s);
		help(f, "xdp_rl_last_reload_success_timestamp_seconds", "gauge",
		     "Unix time of the last configuration applied (the start's included).");
		fprintf(f, "xdp_rl_last_reload_success_timestamp_seconds %lld\n", (long long)ds->last_reload_success);
		help(f, "xdp_rl_config_info", "gauge", "The configuration applied: its file and SHA-256 (sha256sum FILE); always 1.");
		fprintf(f, "xdp_rl_config_info{file=\"");
		label_value(f, ds->config_path);
		fprintf(f, "\",sha256=\"%s\"} 1\n", ds->config_sha256);
		help(f, "xdp_rl_reloads_total", "counter", "Configuration reloads applied.");
		fprintf(f, "xdp_rl_reloads_total %llu\n", ds->reloads);
		help(f, "xdp_rl_reload_failures_total", "counter", "Reloads refused (invalid file), old rules kept.");
		fprintf(f, "xdp_rl_reload_failures_total %llu\n", ds->reload_failures);
		help(f, "xdp_rl_interfaces_attached", "gauge", "Interfaces the program is attached to.");
		fprintf(f, "xdp_rl_interfaces_attached %u\n", ds->interfaces_attached);
		help(f, "xdp_rl_interface_attached", "gauge",
		     "1 when the program is attached to the configured interface; 0 when it is not (the interface missing, or the attach failed: see the log).");
		for (size_t i = 0; i < ds->nifaces; i++) {
			fprintf(f, "xdp_rl_interface_attached{interface=\"");
			label_value(f, ds->ifaces[i].name);
			fprintf(f, "\"} %u\n", ds->ifaces[i].attached);
		}
		help(f, "xdp_rl_interface_mode_mismatch", "gauge",
		     "1 when the program is attached to the interface in another XDP mode than configured (attaching in that mode failed: see the log).");
		for (size_t i = 0; i < ds->nifaces; i++) {
			fprintf(f, "xdp_rl_interface_mode_mismatch{interface=\"");
			label_value(f, ds->ifaces[i].name);
			fprintf(f, "\"} %u\n", ds->ifaces[i].mode_mismatch);
		}
		help(f, "xdp_rl_link_repairs_total", "counter", "Interfaces found without the program (a link pin removed) and attached again.");
		fprintf(f, "xdp_rl_link_repairs_total %llu\n", ds->link_repairs);
		help(f, "xdp_rl_log_lines_dropped_total", "counter", "Log lines dropped because stderr did not drain.");
		fprintf(f, "xdp_rl_log_lines_dropped_total %llu\n", ds->log_dropped);
		help(f, "xdp_rl_program_run_stats_enabled", "gauge",
		     "1 while the daemon holds the kernel's BPF run-time statistics enabled; 0: they could not be enabled.");
		fprintf(f, "xdp_rl_program_run_stats_enabled %u\n", ds->runtime_stats);
		help(f, "xdp_rl_pins_ok", "gauge", "1 when every pin is in place; 0 when they were removed and could not be restored.");
		fprintf(f, "xdp_rl_pins_ok %u\n", ds->pins_ok);
		help(f, "xdp_rl_pin_restores_total", "counter", "Times the pins were found removed and restored (links re-attached).");
		fprintf(f, "xdp_rl_pin_restores_total %llu\n", ds->pin_restores);
		err = events_write(f, x, ds);
	}
out:
	free(att);
	free(rs);
	free(v);
	return err;
}

/* ---- HTTP ---- */

/*
 * Slow clients (README, "Privileges"): one polling thread serves every
 * connection, so a client that sends nothing blocks no other; what it holds
 * is a connection slot, for at most XRL_METRICS_TIMEOUT_S of silence (a
 * client that trickles a byte at a time holds it longer). A new connection
 * is never refused for the slots others hold: when its address holds
 * XRL_METRICS_PER_IP already, the least recently active connection of that
 * address is closed for it; when the server holds XRL_METRICS_CONNECTIONS,
 * the least recently active of all. Active means progress: bytes read from
 * it or sent to it and acknowledged (TCP_INFO), a request answered. A reader
 * that stalls the answer being sent makes none, so it goes before a newer
 * connection; and one younger than XRL_METRICS_YOUNG_MS goes only after
 * every older one. A scrape needs a few milliseconds from its connect to its
 * answer, in which dozens of new connections would have to come from its
 * address to push it out; and one address can only push out its own
 * connections until the server is full,
 * so a host that scrapes from another address (Prometheus) is not touched
 * by one that holds many. With the default loopback bind every local user
 * shares 127.0.0.1 (and may bind any 127/8 address): hence eviction, not a
 * refusal. A request has 16 KiB of buffer.
 */
#define XRL_METRICS_CONNECTIONS	256U
#define XRL_METRICS_PER_IP	16U
#define XRL_METRICS_TIMEOUT_S	5U
#define XRL_METRICS_BACKLOG	64
#define XRL_METRICS_YOUNG_MS	300ULL
/* libmicrohttpd's own limit: the evicted are counted until it closes them
 * (its next poll), so it has room above ours */
#define XRL_METRICS_MHD_LIMIT	(2 * XRL_METRICS_CONNECTIONS)

/* One TCP connection, from its accept to its close (the server's thread
 * alone reads and writes these). */
struct conn {
	struct conn *next, *prev;
	struct sockaddr_storage addr;
	int fd;
	unsigned long long seq;	/* accepted or last answered: lower is older */
	unsigned long long born_ns, progress_ns;	/* accepted; last progress seen */
	unsigned long long bytes;	/* acknowledged + received, when last seen */
	bool evicted;		/* shut down for a newer one; closing */
};

struct xrl_metrics {
	struct MHD_Daemon *mhd;
	xrl_metrics_fill fill;
	void *ctx;
	struct conn *conns;
	unsigned long long seq;
};

static bool same_addr(const struct sockaddr *a, const struct sockaddr_storage *b)
{
	if (a->sa_family != b->ss_family)
		return false;
	if (a->sa_family == AF_INET)
		return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
		       ((const struct sockaddr_in *)b)->sin_addr.s_addr;
	if (a->sa_family == AF_INET6)
		return !memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
			       &((const struct sockaddr_in6 *)b)->sin6_addr, sizeof(struct in6_addr));
	return false;
}

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ULL + (unsigned long long)ts.tv_nsec;
}

/* Bytes moved either way since the last look: progress, now. */
static void progress_seen(struct conn *c, unsigned long long now)
{
	struct tcp_info ti;
	socklen_t len = sizeof(ti);

	memset(&ti, 0, sizeof(ti));
	if (getsockopt(c->fd, IPPROTO_TCP, TCP_INFO, &ti, &len))
		return;
	if (ti.tcpi_bytes_acked + ti.tcpi_bytes_received != c->bytes) {
		c->bytes = ti.tcpi_bytes_acked + ti.tcpi_bytes_received;
		c->progress_ns = now;
	}
}

/* Is a a better connection to close than b? An older one before one
 * younger than XRL_METRICS_YOUNG_MS, then the longest without progress
 * (whether it waits for a request or its answer is being sent), then the
 * least recently accepted or answered. */
static bool evict_before(const struct conn *a, const struct conn *b, unsigned long long now)
{
	bool young_a, young_b;

	if (!b)
		return true;
	young_a = now - a->born_ns < XRL_METRICS_YOUNG_MS * 1000000ULL;
	young_b = now - b->born_ns < XRL_METRICS_YOUNG_MS * 1000000ULL;
	if (young_a != young_b)
		return !young_a;
	if (a->progress_ns != b->progress_ns)
		return a->progress_ns < b->progress_ns;
	return a->seq < b->seq;
}

/* A new connection from addr: make room for it (never refused). */
static enum MHD_Result accept_policy(void *cls, const struct sockaddr *addr, socklen_t len)
{
	struct xrl_metrics *m = cls;
	struct conn *mine = NULL, *any = NULL, *victim = NULL;
	unsigned int nmine = 0, nall = 0;
	unsigned long long now = now_ns();

	(void)len;
	for (struct conn *c = m->conns; c; c = c->next) {
		if (c->evicted)
			continue;
		nall++;
		progress_seen(c, now);
		if (same_addr(addr, &c->addr)) {
			nmine++;
			if (evict_before(c, mine, now))
				mine = c;
		}
		if (evict_before(c, any, now))
			any = c;
	}
	if (nmine >= XRL_METRICS_PER_IP)
		victim = mine;
	else if (nall >= XRL_METRICS_CONNECTIONS)
		victim = any;
	if (victim) {
		/* the server's poll sees the end of the stream and closes it:
		 * the fd stays the server's until then (this thread) */
		shutdown(victim->fd, SHUT_RDWR);
		victim->evicted = true;
		xrl_log(XRL_LOG_DEBUG, "metrics: closed the least recently active connection of %s for a new one",
			victim == mine ? "its address" : "the server");
	}
	return MHD_YES;
}

static void notify_conn(void *cls, struct MHD_Connection *mc, void **socket_ctx,
			enum MHD_ConnectionNotificationCode toe)
{
	struct xrl_metrics *m = cls;
	struct conn *c = *socket_ctx;

	if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *fd = MHD_get_connection_info(mc, MHD_CONNECTION_INFO_CONNECTION_FD);
		const union MHD_ConnectionInfo *ad = MHD_get_connection_info(mc, MHD_CONNECTION_INFO_CLIENT_ADDRESS);

		c = calloc(1, sizeof(*c));
		if (!c || !fd || !ad || !ad->client_addr) {
			free(c);	/* untracked: it cannot be evicted, nothing worse */
			return;
		}
		c->fd = fd->connect_fd;
		memcpy(&c->addr, ad->client_addr,
		       ad->client_addr->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) :
		       sizeof(struct sockaddr_in));
		c->seq = ++m->seq;
		c->born_ns = c->progress_ns = now_ns();
		c->next = m->conns;
		if (m->conns)
			m->conns->prev = c;
		m->conns = c;
		*socket_ctx = c;
	} else if (toe == MHD_CONNECTION_NOTIFY_CLOSED && c) {
		if (c->prev)
			c->prev->next = c->next;
		else
			m->conns = c->next;
		if (c->next)
			c->next->prev = c->prev;
		free(c);
		*socket_ctx = NULL;
	}
}

/* A request answered (or abandoned): the connection is active now, and
 * waits for its next request. */
static void request_done(void *cls, struct MHD_Connection *mc, void **state,
			 enum MHD_RequestTerminationCode toe)
{
	const union MHD_ConnectionInfo *i = MHD_get_connection_info(mc, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	struct xrl_metrics *m = cls;
	struct conn *c = i ? i->socket_context : NULL;

	(void)state;
	(void)toe;
	if (c) {
		c->seq = ++m->seq;
		c->progress_ns = now_ns();
	}
}

/* The handler queued a response on mc. */
static void answering(struct xrl_metrics *m, struct MHD_Connection *mc)
{
	const union MHD_ConnectionInfo *i = MHD_get_connection_info(mc, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	struct conn *c = i ? i->socket_context : NULL;

	if (c)
		c->seq = ++m->seq;
}

static enum MHD_Result reply(struct MHD_Connection *c, unsigned code, const char *type,
			     char *body, size_t len)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
	enum MHD_Result ret;

	MHD_add_response_header(r, "Content-Type", type);
	ret = MHD_queue_response(c, code, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
			      const char *method, const char *version, const char *upload,
			      size_t *upload_len, void **state)
{
	struct xrl_metrics *m = cls;
	char *body = NULL;
	size_t len = 0;
	FILE *f;

	(void)version;
	(void)upload;
	(void)upload_len;
	(void)state;
	answering(m, c);
	if (strcmp(method, "GET") && strcmp(method, "HEAD"))
		return reply(c, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain", strdup("GET only\n"), 9);
	if (strcmp(url, "/metrics"))
		return reply(c, MHD_HTTP_NOT_FOUND, "text/plain", strdup("see /metrics\n"), 13);
	f = open_memstream(&body, &len);
	if (!f)
		return MHD_NO;
	if (m->fill(f, m->ctx)) {
		fclose(f);
		free(body);
		return reply(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "text/plain",
			     strdup("cannot read the maps\n"), 21);
	}
	fclose(f);
	return reply(c, MHD_HTTP_OK, "text/plain; version=0.0.4; charset=utf-8", body, len);
}

/*
 * libmicrohttpd's own messages (a request too big, the connection limit
 * reached, ...): what any client can cause, once per request. Through the
 * daemon's bounded log queue at debug level, never straight to stderr from
 * the server's thread: a client must not be able to flood the journal, nor
 * a stalled stderr hold up the scrapes.
 */
static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	char msg[512];

	(void)cls;
	if (vsnprintf(msg, sizeof(msg), fmt, ap) < 0)
		return;
	xrl_log(XRL_LOG_DEBUG, "metrics: %s", msg);
}

int xrl_metrics_start(const char *hostport, xrl_metrics_fill fill, void *ctx,
		      struct xrl_metrics **out)
{
	struct sockaddr_storage ss;
	struct xrl_metrics *m;
	socklen_t sl;
	char why[160];
	int fd, one = 1, err;

	/* the grammar and --check accept exactly what this binds */
	if (xrl_hostport_sockaddr(hostport, &ss, &sl, why, sizeof(why)))
		return -EINVAL;
	/* our own socket: a bind error is reported for what it is */
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, sl) || listen(fd, XRL_METRICS_BACKLOG)) {
		err = -errno;
		close(fd);
		return err;
	}
	m = calloc(1, sizeof(*m));
	if (!m) {
		close(fd);
		return -ENOMEM;
	}
	m->fill = fill;
	m->ctx = ctx;
	/* one internal thread: the accept policy, the notifications and the
	 * handler all run on it, so struct conn needs no lock */
	m->mhd = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL | MHD_USE_ERROR_LOG, 0,
				  accept_policy, m, handle, m, MHD_OPTION_LISTEN_SOCKET, fd,
				  MHD_OPTION_CONNECTION_LIMIT, XRL_METRICS_MHD_LIMIT,
				  MHD_OPTION_NOTIFY_CONNECTION, notify_conn, m,
				  MHD_OPTION_NOTIFY_COMPLETED, request_done, m,
				  MHD_OPTION_CONNECTION_TIMEOUT, XRL_METRICS_TIMEOUT_S,
				  MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)16384,
				  MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL,
				  MHD_OPTION_END);
	if (!m->mhd) {
		close(fd);
		free(m);
		return -ENOMEM;
	}
	*out = m;
	return 0;
}

void xrl_metrics_stop(struct xrl_metrics *m)
{
	if (!m)
		return;
	MHD_stop_daemon(m->mhd);	/* closes each connection: notify_conn() frees it */
	while (m->conns) {
		struct conn *c = m->conns;

		m->conns = c->next;
		free(c);
	}
	free(m);
}
