// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xdp-rld: owns the configuration, proves it is alive, reports what the
 * data path does, and decides what happens when something breaks.
 *
 * One thread runs the event loop (signals, the config file, link
 * notifications, a housekeeping tick that checks the pins); a thread of its
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

struct rld_opts opt = {
	.config = XRL_DEFAULT_CONFIG, .heartbeat_ms = -1, .watchdog_ms = -1, .level = XRL_LOG_INFO,
};
struct rld_state d = {
	.lock = PTHREAD_MUTEX_INITIALIZER, .timer_fd = -1, .hb_lock = PTHREAD_MUTEX_INITIALIZER,
};


static void usage(FILE *f)
{
	fprintf(f,
		"Usage: xdp-rld [--config FILE] [--iface IF]... [--metrics ADDR:PORT]\n"
		"               [--heartbeat MS] [--watchdog MS] [--pin-dir DIR] [--keep-attached]\n"
		"               [--log-level error|warning|info|debug] [--check]\n"
		"       xdp-rld -V|--version\n"
		"See xdp-rld(8) and xdp-rl.conf(5).\n");
}

static int metrics_fill(FILE *f, void *ctx)
{
	int err;

	(void)ctx;
	pthread_mutex_lock(&d.lock);
	d.stats.log_dropped = __atomic_load_n(&logq_dropped_total, __ATOMIC_RELAXED);
	err = xrl_metrics_write(f, d.x, &d.stats);
	pthread_mutex_unlock(&d.lock);
	return err;
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
		{ "log-level", required_argument, NULL, 'l' },
		{ "check", no_argument, NULL, 'C' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{}
	};
	char host[64];
	__u64 v;
	int ch, port;

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
			if (strcmp(optarg, "off") && xrl_hostport_parse(optarg, host, sizeof(host), &port)) {
				fprintf(stderr, "Error: invalid --metrics '%s' (ADDR:PORT)\n", optarg);
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
	struct xrl_metrics *metrics = NULL;
	struct xrl_config c;
	const char *maddr;
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

	oo.pin_dir = opt.pin_dir;
	if (xrl_open(&oo, &d.x)) {
		xrl_log(XRL_LOG_ERR, "%s", xrl_errmsg());
		return 1;
	}
	xrl_unlock(d.x);	/* held only around changes: xdp-rlctl stays usable */
	if (xrl_daemon_claim(d.x, NULL)) {
		/* the other daemon's program, maps and interfaces stay as they are */
		xrl_log(XRL_LOG_ERR, "%s", xrl_errmsg());
		xrl_config_free(&c);
		xrl_close(d.x);
		return 1;
	}

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

	if (apply(&c, "start")) {
		xrl_config_free(&c);
		xrl_close(d.x);
		return 1;
	}
	d.stats.pins_ok = 1;
	if ((err = heartbeat_start()) || arm_timer()) {
		xrl_log(XRL_LOG_ERR, "cannot start the heartbeat: %s", strerror(err ? -err : errno));
		return 1;
	}
	maddr = opt.metrics ? opt.metrics : c.metrics[0] ? c.metrics : DEFAULT_METRICS;
	if (strcmp(maddr, "off")) {
		if ((err = xrl_metrics_start(maddr, metrics_fill, NULL, &metrics)))
			xrl_log(XRL_LOG_ERR, "metrics on %s: %s; continuing without", maddr, strerror(-err));
		else
			xrl_log(XRL_LOG_INFO, "metrics on http://%s/metrics", maddr);
	}
	xrl_config_free(&c);
	xrl_log(XRL_LOG_INFO, "running: heartbeat %ld ms, watchdog %ld ms%s", d.heartbeat_ms, d.watchdog_ms,
	     d.watchdog_ms ? "" : " (off)");

	while (running) {
		struct pollfd p[4] = {
			{ .fd = sfd, .events = POLLIN },
			{ .fd = d.timer_fd, .events = POLLIN },
			{ .fd = ifd, .events = POLLIN },
			{ .fd = lm ? xrl_linkmon_fd(lm) : -1, .events = POLLIN },
		};
		int timeout = -1, n;

		if (reload_at) {
			double left = reload_at - now_ms();

			timeout = left > 0 ? (int)left + 1 : 0;
		}
		__atomic_store_n(&d.busy_ms, 0, __ATOMIC_RELEASE);
		n = poll(p, 4, timeout);
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

			if (read(d.timer_fd, &ticks, sizeof(ticks)) > 0)
				check_pins();
		}
		if ((p[2].revents & POLLIN) && config_event(ifd))
			reload_at = now_ms() + RELOAD_SETTLE_MS;
		if (lm && (p[3].revents & POLLIN) && xrl_linkmon_read(lm, on_link, NULL) == -ENOBUFS) {
			/* notifications were lost: look at every interface again */
			for (size_t i = 0; i < d.nifaces; i++)
				serve_iface(&d.ifaces[i]);
			count_attached();
		}
	}

	xrl_log(XRL_LOG_INFO, "stopping");
	heartbeat_stop();	/* before the watchdog is disarmed below */
	xrl_metrics_stop(metrics);
	xrl_linkmon_close(lm);
	if (opt.keep_attached) {
		/* A decided stop, not a failure: the data path keeps enforcing
		 * the rules in force until a daemon heartbeats again. */
		xrl_heartbeat(d.x, 0, 0);	/* no more heartbeats, none awaited */
		xrl_log(XRL_LOG_INFO, "left attached (--keep-attached); watchdog disarmed");
	} else {
		struct xrl_attachment *a;
		size_t n;

		for (size_t i = 0; i < d.nifaces; i++)
			if (has_link_pin(d.ifaces[i].name))
				unserve_iface(d.ifaces[i].name);
		xrl_lock(d.x);
		if (xrl_attachments(d.x, &a, &n) == 0) {
			if (n == 0 && xrl_purge(d.x) == 0)
				xrl_log(XRL_LOG_INFO, "removed the pins under %s", xrl_pin_dir(d.x));
			else if (n)
				xrl_log(XRL_LOG_INFO, "pins kept: %zu interface(s) attached by others", n);
			free(a);
		}
	}
	free(d.ifaces);
	free(d.iface_failed);
	xrl_close(d.x);
	return 0;
}
