// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xdp-rld: owns the configuration, proves it is alive, reports what the
 * data path does, and decides what happens when something breaks.
 *
 * One thread runs the event loop (signals, the config file, link
 * notifications, the data path's live events, a housekeeping tick that
 * checks the pins); a thread of its
 * own heartbeats, so that nothing the event loop waits for (a reload, the
 * config reader, another process's lock) can look like a dead daemon to the
 * watchdog; libmicrohttpd's thread serves /metrics.
 */
#include "rld.h"

#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <unistd.h>
#include <systemd/sd-daemon.h>

struct rld_opts opt = {
	.config = XRL_DEFAULT_CONFIG, .heartbeat_ms = -1, .watchdog_ms = -1, .level = XRL_LOG_INFO,
};
struct rld_state d = {
	.lock = PTHREAD_MUTEX_INITIALIZER, .timer_fd = -1, .stats_fd = -1, .hb_lock = PTHREAD_MUTEX_INITIALIZER,
	.keys_lock = PTHREAD_MUTEX_INITIALIZER,
};


static void usage(FILE *f)
{
	fprintf(f,
		"Usage: xdp-rld [--config FILE] [--iface IF]... [--metrics ADDR:PORT]\n"
		"               [--heartbeat MS] [--watchdog MS] [--pin-dir DIR] [--keep-attached]\n"
		"               [--no-run-stats] [--log-level error|warning|info|debug] [--check]\n"
		"       xdp-rld -V|--version\n"
		"See xdp-rld(8) and xdp-rl.conf(5).\n");
}

/*
 * Keys tracked: a walk of both bucket tables (up to 2 x 1M entries, some
 * hundreds of ms). Done here, outside d.lock, at most every
 * KEYS_REFRESH_MS, so that neither a scrape nor a scraper that scrapes
 * back to back can hold up a reload. The bucket maps' descriptors do not
 * change while the daemon runs (restored pins reuse them).
 */
static void keys_refresh(void)
{
	unsigned long long k[2];

	pthread_mutex_lock(&d.keys_lock);
	if (!d.keys_at_ms || now_ms() - d.keys_at_ms >= KEYS_REFRESH_MS) {
		if (!xrl_keys_tracked_family(d.x, 4, &k[0]) && !xrl_keys_tracked_family(d.x, 6, &k[1])) {
			d.keys[0] = k[0];
			d.keys[1] = k[1];
			d.keys_at_ms = now_ms();
		}
	}
	pthread_mutex_unlock(&d.keys_lock);
}

static int metrics_fill(FILE *f, void *ctx)
{
	int err;

	(void)ctx;
	/* the metrics thread: HTTP with no effective capability, the maps with
	 * its permitted ones */
	caps_effective(true);
	keys_refresh();
	pthread_mutex_lock(&d.lock);
	d.stats.log_dropped = __atomic_load_n(&logq_dropped_total, __ATOMIC_RELAXED);
	pthread_mutex_lock(&d.keys_lock);
	d.stats.keys[0] = d.keys[0];
	d.stats.keys[1] = d.keys[1];
	d.stats.keys_age_s = d.keys_at_ms ? (now_ms() - d.keys_at_ms) / 1e3 : -1;
	pthread_mutex_unlock(&d.keys_lock);
	d.stats.last_reload_success = d.last_applied;
	snprintf(d.stats.config_sha256, sizeof(d.stats.config_sha256), "%s", d.config_sha256);
	snprintf(d.stats.config_path, sizeof(d.stats.config_path), "%s", opt.config);
	err = xrl_metrics_write(f, d.x, &d.stats);
	if (!err)
		fleet_metrics(f);
	pthread_mutex_unlock(&d.lock);
	caps_effective(false);
	return err;
}

/* Called by the event loop only (start, reloads). */
void metrics_set(const char *file, const char *why)
{
	const char *want = opt.metrics ? opt.metrics : file[0] ? file : DEFAULT_METRICS;
	bool first = !d.metrics_addr[0] && !d.file_metrics[0];
	struct xrl_metrics *m = NULL;
	char was[120] = "";
	int err;

	if (opt.metrics && !first && strcmp(file[0] ? file : "-", d.file_metrics))
		xrl_log(XRL_LOG_WARN, "%s: the file's metrics line (%s) is not applied: --metrics %s overrides it",
			why, file[0] ? file : "none", opt.metrics);
	snprintf(d.file_metrics, sizeof(d.file_metrics), "%s", file[0] ? file : "-");
	if (!strcmp(want, d.metrics_addr))
		return;
	if (d.metrics)
		snprintf(was, sizeof(was), " (was http://%s/metrics)", d.metrics_addr);
	if (!strcmp(want, "off")) {
		xrl_metrics_stop(d.metrics);
		d.metrics = NULL;
		snprintf(d.metrics_addr, sizeof(d.metrics_addr), "off");
		xrl_log(XRL_LOG_INFO, "%s: metrics off%s", why, was);
		return;
	}
	/* the server's thread starts with an empty effective set */
	caps_effective(false);
	err = xrl_metrics_start(want, metrics_fill, NULL, &m);
	caps_effective(true);
	if (err == -EADDRINUSE && d.metrics) {
		/* the old listener may hold the port (0.0.0.0:P -> 127.0.0.1:P):
		 * free it, try again, and put it back if that fails */
		xrl_metrics_stop(d.metrics);
		d.metrics = NULL;
		err = xrl_metrics_start(want, metrics_fill, NULL, &m);
		if (err && xrl_metrics_start(d.metrics_addr, metrics_fill, NULL, &d.metrics))
			d.metrics_addr[0] = '\0';
	}
	if (err) {
		if (d.metrics)
			xrl_log(XRL_LOG_ERR, "%s: metrics on %s: %s; still serving on http://%s/metrics", why, want,
				strerror(-err), d.metrics_addr);
		else
			xrl_log(XRL_LOG_ERR, "%s: metrics on %s: %s; continuing without", why, want, strerror(-err));
		return;
	}
	xrl_metrics_stop(d.metrics);
	d.metrics = m;
	snprintf(d.metrics_addr, sizeof(d.metrics_addr), "%s", want);
	xrl_log(XRL_LOG_INFO, "%s: metrics on http://%s/metrics%s", why, want, was);
}

/* --check: what is valid but will not work as meant. */
static void check_warnings(const struct xrl_config *c)
{
	long hb = pick(opt.heartbeat_ms, c->heartbeat_ms, DEFAULT_HEARTBEAT_MS);
	long wd = pick(opt.watchdog_ms, c->watchdog_ms, DEFAULT_WATCHDOG_MS);
	int line = opt.watchdog_ms < 0 && c->watchdog_line ? c->watchdog_line :
		   opt.heartbeat_ms < 0 && c->heartbeat_line ? c->heartbeat_line : 0;

	if (wd && wd < 2 * hb) {
		if (line)
			printf("%s:%d:1: ", opt.config, line);
		else
			printf("%s: ", opt.config);
		printf("warning: watchdog %ld ms is less than two heartbeats (%ld ms): it may fire while the daemon is alive\n",
		       wd, hb);
	}
}

/*
 * What a stop leaves. With --keep-attached (the unit's) a decided stop, not
 * a failure: the program stays attached, enforcing the rules in force, with
 * the watchdog disarmed, until a daemon starts again or the limiter is
 * removed (xdp-rlctl detach dev IF purge). Without it, the daemon detaches
 * from its interfaces and removes the pins once nothing else is attached.
 */
static void stop_data_path(void)
{
	xrl_daemon_serves_set(d.x, NULL, 0);	/* nobody serves them now */
	if (opt.keep_attached) {
		heartbeat_stop();	/* only now: right before the watchdog is disarmed */
		xrl_heartbeat(d.x, 0, 0);	/* no more heartbeats, none awaited */
		xrl_log(XRL_LOG_INFO, "left attached (--keep-attached); watchdog disarmed");
	} else {
		struct xrl_attachment *a;
		bool purged = false;
		size_t n;

		for (size_t i = 0; i < d.nifaces; i++)
			if (has_link_pin(d.ifaces[i].name))
				unserve_iface(d.ifaces[i].name);
		xrl_lock(d.x);
		if (xrl_attachments(d.x, &a, &n) == 0) {
			if (n == 0 && xrl_purge(d.x) == 0) {
				purged = true;
				xrl_log(XRL_LOG_INFO, "removed the pins under %s", xrl_pin_dir(d.x));
			} else if (n) {
				xrl_log(XRL_LOG_INFO, "pins kept: %zu interface(s) attached by others", n);
			}
			free(a);
		}
		heartbeat_stop();
		/* the pins kept (or not known to be gone): what stays attached
		 * must not see the watchdog fire on a decided stop */
		if (!purged) {
			xrl_heartbeat(d.x, 0, 0);
			xrl_log(XRL_LOG_INFO, "pins kept; watchdog disarmed");
		}
	}
}

static int parse_args(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "iface", required_argument, NULL, 'i' },
		{ "metrics", required_argument, NULL, 'm' },
		{ "heartbeat", required_argument, NULL, 'H' },
		{ "watchdog", required_argument, NULL, 'W' },
		{ "pin-dir", required_argument, NULL, 'd' },
		{ "keep-attached", no_argument, NULL, 'k' },
		{ "no-run-stats", no_argument, NULL, 'S' },
		{ "log-level", required_argument, NULL, 'l' },
		{ "check", no_argument, NULL, 'C' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{}
	};
	struct sockaddr_storage ss;
	char why[160];
	socklen_t sl;
	__u64 v;
	int ch;

	while ((ch = getopt_long(argc, argv, "c:i:m:d:kl:ChV", lo, NULL)) != -1) {
		switch (ch) {
		case 'c':
			opt.config = optarg;
			opt.config_given = true;
			break;
		case 'i':
			if (opt.nifaces == 64 || strlen(optarg) >= IF_NAMESIZE) {
				fprintf(stderr, "Error: invalid --iface '%s'\n", optarg);
				return 2;
			}
			opt.ifaces[opt.nifaces++] = optarg;
			break;
		case 'm':
			if (strcmp(optarg, "off") && xrl_hostport_sockaddr(optarg, &ss, &sl, why, sizeof(why))) {
				fprintf(stderr, "Error: invalid --metrics '%s' (%s)\n", optarg, why);
				return 2;
			}
			opt.metrics = optarg;
			break;
		case 'H':
		case 'W':
			if (xrl_dec_parse(optarg, ch == 'H' ? 10 : 0, 3600000, &v)) {
				fprintf(stderr, "Error: invalid --%s '%s' (milliseconds)\n",
					ch == 'H' ? "heartbeat" : "watchdog", optarg);
				return 2;
			}
			*(ch == 'H' ? &opt.heartbeat_ms : &opt.watchdog_ms) = v;
			break;
		case 'd':
			opt.pin_dir = optarg;
			break;
		case 'k':
			opt.keep_attached = true;
			break;
		case 'S':
			opt.no_run_stats = true;
			break;
		case 'l':
			if (xrl_log_level_parse(optarg, &opt.level)) {
				fprintf(stderr, "Error: %s\n", xrl_errmsg());
				return 2;
			}
			break;
		case 'C':
			opt.check = true;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		case 'V':
			printf("xdp-rld %s\n", xrl_version());
			exit(0);
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "Error: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct xrl_open_opts oo = { .create = true };
	struct xrl_linkmon *lm = NULL;
	struct xrl_config c;
	bool builtin, running = true;
	double reload_at = 0;	/* a changed file is reloaded once it settles */
	int err, sfd, ifd, wd = -1;
	sigset_t mask;

	err = parse_args(argc, argv);
	if (err)
		return err;
	opt.journal = getenv("JOURNAL_STREAM") != NULL;
	/* Before any thread starts: the threads inherit the mask, so these
	 * signals reach the event loop's signalfd only, and never kill the
	 * daemon through a thread that does not block them. */
	sigemptyset(&mask);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);
	xrl_log_set(logq_sink, opt.level);
	if (!opt.check && logq_start() == 0)
		atexit(logq_stop);	/* what is queued is written on every way out */

	if (opt.check) {
		/* parse and validate; touch nothing */
		err = read_config(&c, false, true, &builtin);
		/* what the start would refuse: the credentials as it reads them */
		if (!err && c.fleet.auth_file[0] && xrl_fleet_auth_check(c.fleet.auth_file)) {
			printf("%s:%d:1: %s\n", opt.config, c.fleet_auth_line, xrl_errmsg());
			err = 1;
		}
		/* what the start would refuse: an interface another XDP
		 * program holds */
		if (!err && ifaces_held(&c, true))
			err = 1;
		if (!err)
			check_warnings(&c);
		if (!err)
			printf("%s: %s, %zu rules\n", builtin ? "(built-in)" : opt.config,
			       "valid", c.nrules);
		xrl_config_free(&c);
		return err ? 1 : 0;
	}

	if (read_config(&c, true, true, &builtin))
		return 1;
	if (builtin)
		xrl_log(XRL_LOG_WARN, "%s does not exist: using the built-in default rule set (every source, 1000/s, burst 2000)",
		     opt.config);

	/* before anything is created: an interface that another XDP program
	 * holds cannot be served, and the start says so and stops */
	if (ifaces_held(&c, false)) {
		xrl_config_free(&c);
		return 1;
	}
	oo.pin_dir = opt.pin_dir;
	if (xrl_open(&oo, &d.x)) {
		xrl_log(XRL_LOG_ERR, "%s", xrl_errmsg());
		return 1;
	}
	/* an upgrade killed part way: finished before anything is attached
	 * (it logs what it did); a failure leaves the pins as they were */
	if (xrl_upgrade_recover(d.x) < 0)
		xrl_log(XRL_LOG_ERR, "%s", xrl_errmsg());
	xrl_unlock(d.x);	/* held only around changes: xdp-rlctl stays usable */
	if (xrl_daemon_claim(d.x, NULL)) {
		/* the other daemon's program, maps and interfaces stay as they are */
		xrl_log(XRL_LOG_ERR, "%s", xrl_errmsg());
		xrl_config_free(&c);
		xrl_close(d.x);
		return 1;
	}

	/* the program's run time per packet, counted by the kernel while this
	 * fd is open: for the daemon's life, closed on any way out (unlike
	 * the sysctl, which is global and stays set) */
	d.stats_fd = opt.no_run_stats ? -1 : xrl_runtime_stats_enable();
	if (d.stats_fd < 0 && !opt.no_run_stats)
		xrl_log(XRL_LOG_WARN, "%s: xdp_rl_program_run_seconds_total and xdp_rl_program_runs_total do not move",
			xrl_errmsg());
	d.stats.runtime_stats = d.stats_fd >= 0;

	sfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
	d.timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (sfd < 0 || d.timer_fd < 0 || ifd < 0) {
		xrl_log(XRL_LOG_ERR, "cannot set up the event loop: %s", strerror(errno));
		return 1;
	}
	if (!builtin || !opt.config_given) {
		wd = watch_config(ifd);
		if (wd < 0)
			xrl_log(XRL_LOG_WARN, "cannot watch %s (%s): reload with SIGHUP", opt.config, strerror(errno));
	}
	if ((err = xrl_linkmon_open(&lm)))
		xrl_log(XRL_LOG_WARN, "no link notifications (%s): interfaces that reappear are not re-attached",
		     strerror(-err));

	/* before anything is attached: a fleet line that cannot work (its
	 * credentials unreadable) stops the start with nothing changed */
	if (fleet_start(&c)) {
		xrl_config_free(&c);
		xrl_close(d.x);
		return 1;
	}
	if (apply(&c, "start")) {
		fleet_stop(false);
		xrl_config_free(&c);
		xrl_close(d.x);
		return 1;
	}
	{
		/* A served interface that exists but cannot be attached is an
		 * interface left unprotected: the start fails (no READY), and
		 * stops as a stop does (--keep-attached: what is attached
		 * stays). An interface that does not exist yet is waited for. */
		char names[300];

		if (ifaces_failed(names, sizeof(names))) {
			xrl_log(XRL_LOG_ERR, "not starting: interface(s)%s could not be attached (see above)", names);
			fleet_stop(false);
			stop_data_path();
			xrl_config_free(&c);
			free(d.ifaces);
			free(d.ifst);
			free(d.stats.ifaces);
			xrl_close(d.x);
			return 1;
		}
	}
	d.stats.pins_ok = 1;
	/* started: from here on, only what the kernel requires (caps.c) */
	{
		char kept[64];

		if (caps_keep(kept, sizeof(kept)))
			xrl_log(XRL_LOG_WARN, "cannot drop capabilities: keeping those it was given");
		else
			xrl_log(XRL_LOG_INFO, "capabilities: kept %s; dropped the others", kept);
	}
	events_start();
	if ((err = heartbeat_start()) || arm_timer()) {
		xrl_log(XRL_LOG_ERR, "cannot start the heartbeat: %s", strerror(err ? -err : errno));
		return 1;
	}
	metrics_set(c.metrics, "start");
	/* systemd (Type=notify): started once the rules are applied, the
	 * interfaces attached and the metrics served */
	sd_notifyf(0, "READY=1\nSTATUS=%zu rules, %u interface(s) attached%s", c.nrules,
		   d.stats.interfaces_attached,
		   d.stats.interfaces_attached < d.nifaces ? ", waiting for the others to appear" : "");
	xrl_config_free(&c);
	xrl_log(XRL_LOG_INFO, "running: heartbeat %ld ms, watchdog %ld ms%s", d.heartbeat_ms, d.watchdog_ms,
	     d.watchdog_ms ? "" : " (off)");

	while (running) {
		struct pollfd p[5] = {
			{ .fd = sfd, .events = POLLIN },
			{ .fd = d.timer_fd, .events = POLLIN },
			{ .fd = ifd, .events = POLLIN },
			{ .fd = lm ? xrl_linkmon_fd(lm) : -1, .events = POLLIN },
			{ .fd = d.events ? xrl_events_fd(d.events) : -1, .events = POLLIN },
		};
		int timeout = -1, n;

		if (reload_at) {
			double left = reload_at - now_ms();

			timeout = left > 0 ? (int)left + 1 : 0;
		}
		__atomic_store_n(&d.busy_ms, 0, __ATOMIC_RELEASE);
		n = poll(p, 5, timeout);
		__atomic_store_n(&d.busy_ms, (long)now_ms(), __ATOMIC_RELEASE);
		if (n < 0 && errno != EINTR) {
			xrl_log(XRL_LOG_ERR, "poll: %s", strerror(errno));
			break;
		}
		if (reload_at && now_ms() >= reload_at) {	/* the file settled */
			reload_at = 0;
			reload("the file changed");
		}
		if (p[0].revents & POLLIN) {
			struct signalfd_siginfo si;

			while (read(sfd, &si, sizeof(si)) == sizeof(si)) {
				if (si.ssi_signo == SIGHUP)
					reload("SIGHUP");
				else
					running = false;
			}
		}
		if (p[1].revents & POLLIN) {
			__u64 ticks;

			if (read(d.timer_fd, &ticks, sizeof(ticks)) > 0) {
				check_pins();
				events_tick();
			}
		}
		if (p[4].revents & POLLIN)
			events_read();
		if ((p[2].revents & POLLIN) && config_event(ifd))
			reload_at = now_ms() + RELOAD_SETTLE_MS;
		if (lm && (p[3].revents & POLLIN) && xrl_linkmon_read(lm, on_link, NULL) == -ENOBUFS) {
			/* notifications were lost: look at every interface again */
			for (size_t i = 0; d.ifst && i < d.nifaces; i++)
				serve_iface(i);
			count_attached();
		}
	}

	xrl_log(XRL_LOG_INFO, "stopping");
	sd_notify(0, "STOPPING=1");
	/* the heartbeat goes on until the very end: nothing the stop waits
	 * for (the sync thread, Redis, a scrape) may look like a dead daemon */
	fleet_stop(true);	/* leaves the live hosts: the others' shares grow at once */
	events_read();		/* the last ones, for the log */
	events_stop();
	xrl_metrics_stop(d.metrics);
	xrl_linkmon_close(lm);
	stop_data_path();
	if (d.stats_fd >= 0)
		close(d.stats_fd);	/* run-time statistics off, unless someone else holds them */
	free(d.ifaces);
	free(d.ifst);
	free(d.stats.ifaces);
	xrl_close(d.x);
	return 0;
}
