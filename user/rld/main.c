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

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: xdp-rld [--config FILE] [--iface IF]... [--metrics ADDR:PORT]\n"
		"               [--heartbeat MS] [--watchdog MS] [--pin-dir DIR] [--keep-attached]\n"
		"               [--no-run-stats] [--suggest] [--log-level error|warning|info|debug] [--check]\n"
		"       xdp-rld -V|--version\n"
		"See xdp-rld(8) and xdp-rl.conf(5).\n");
}

/* --check: what is valid but will not work as meant. */
static void check_warnings(struct rld *r, const struct xrl_config *c)
{
	long hb = pick(r->opt.heartbeat_ms, c->heartbeat_ms, DEFAULT_HEARTBEAT_MS);
	long wd = pick(r->opt.watchdog_ms, c->watchdog_ms, DEFAULT_WATCHDOG_MS);
	int line = r->opt.watchdog_ms < 0 && c->watchdog_line ? c->watchdog_line :
		   r->opt.heartbeat_ms < 0 && c->heartbeat_line ? c->heartbeat_line : 0;

	if (wd && wd < 2 * hb) {
		if (line)
			printf("%s:%d:1: ", r->opt.config, line);
		else
			printf("%s: ", r->opt.config);
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
static void stop_data_path(struct rld *r)
{
	xrl_daemon_serves_set(r->x, NULL, 0);	/* nobody serves them now */
	if (r->opt.keep_attached) {
		heartbeat_stop(r);	/* only now: right before the watchdog is disarmed */
		xrl_heartbeat(r->x, 0, 0);	/* no more heartbeats, none awaited */
		xrl_log(XRL_LOG_INFO, "left attached (--keep-attached); watchdog disarmed");
	} else {
		struct xrl_attachment *a;
		bool purged = false;
		size_t n;

		for (size_t i = 0; i < r->ifs.n; i++)
			if (has_link_pin(r, r->ifs.cfg[i].name))
				unserve_iface(r, r->ifs.cfg[i].name);
		xrl_lock(r->x);
		if (xrl_attachments(r->x, &a, &n) == 0) {
			if (n == 0 && xrl_purge(r->x) == 0) {
				purged = true;
				xrl_log(XRL_LOG_INFO, "removed the pins under %s", xrl_pin_dir(r->x));
			} else if (n) {
				xrl_log(XRL_LOG_INFO, "pins kept: %zu interface(s) attached by others", n);
			}
			free(a);
		}
		heartbeat_stop(r);
		/* the pins kept (or not known to be gone): what stays attached
		 * must not see the watchdog fire on a decided stop */
		if (!purged) {
			xrl_heartbeat(r->x, 0, 0);
			xrl_log(XRL_LOG_INFO, "pins kept; watchdog disarmed");
		}
	}
}

/* 0, 2 on a usage error, -1 once --help or --version is answered. */
static int parse_args(struct rld_opts *o, int argc, char **argv)
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
		{ "suggest", no_argument, NULL, 'G' },
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
			o->config = optarg;
			o->config_given = true;
			break;
		case 'i':
			if (o->nifaces == 64 || strlen(optarg) >= IF_NAMESIZE) {
				fprintf(stderr, "Error: invalid --iface '%s'\n", optarg);
				return 2;
			}
			o->ifaces[o->nifaces++] = optarg;
			break;
		case 'm':
			if (strcmp(optarg, "off") && xrl_hostport_sockaddr(optarg, &ss, &sl, why, sizeof(why))) {
				fprintf(stderr, "Error: invalid --metrics '%s' (%s)\n", optarg, why);
				return 2;
			}
			o->metrics = optarg;
			break;
		case 'H':
		case 'W':
			if (xrl_dec_parse(optarg, ch == 'H' ? 10 : 0, 3600000, &v)) {
				fprintf(stderr, "Error: invalid --%s '%s' (milliseconds)\n",
					ch == 'H' ? "heartbeat" : "watchdog", optarg);
				return 2;
			}
			*(ch == 'H' ? &o->heartbeat_ms : &o->watchdog_ms) = v;
			break;
		case 'd':
			o->pin_dir = optarg;
			break;
		case 'k':
			o->keep_attached = true;
			break;
		case 'G':
			o->suggest = true;
			break;
		case 'S':
			o->no_run_stats = true;
			break;
		case 'l':
			if (xrl_log_level_parse(optarg, &o->level)) {
				fprintf(stderr, "Error: %s\n", xrl_errmsg());
				return 2;
			}
			break;
		case 'C':
			o->check = true;
			break;
		case 'h':
			usage(stdout);
			return -1;
		case 'V':
			printf("xdp-rld %s\n", xrl_version());
			return -1;
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

/* --check: parse and validate; touch nothing. The exit status. */
static int check(struct rld *r)
{
	struct xrl_config c;
	bool builtin;
	int err;

	err = read_config(r, &c, false, true, &builtin);
	/* what the start would refuse: the credentials as it reads them */
	if (!err && c.fleet.auth_file[0] && xrl_fleet_auth_check(c.fleet.auth_file)) {
		printf("%s:%d:1: %s\n", r->opt.config, c.fleet_auth_line, xrl_errmsg());
		err = 1;
	}
	if (!err && c.crowdsec.url[0] && xrl_cs_key_check(c.crowdsec.key_file)) {
		printf("%s:%d:1: %s\n", r->opt.config, c.crowdsec_line, xrl_errmsg());
		err = 1;
	}
	/* what the start would refuse: an interface another XDP
	 * program holds */
	if (!err && ifaces_held(r, &c, true))
		err = 1;
	/* what the start would refuse: a set file that does not read */
	if (!err && c.nsets) {
		struct xrl_set_list *sets = NULL;

		if (read_sets(&c, &sets, false))
			err = 1;
		free_sets(&c, sets);
	}
	if (!err)
		check_warnings(r, &c);
	if (!err)
		printf("%s: %s, %zu rules\n", builtin ? "(built-in)" : r->opt.config,
		       "valid", c.nrules);
	xrl_config_free(&c);
	return err ? 1 : 0;
}

/* The event loop's housekeeping tick: the pin check, once a second. */
static int arm_timer(int fd)
{
	struct itimerspec its = {
		.it_interval = { 1, 0 },
		.it_value = { 1, 0 },
	};

	return timerfd_settime(fd, 0, &its, NULL);
}

/* The descriptors the event loop waits on. */
struct loop_fds {
	int signal, timer, inotify;
	struct xrl_linkmon *lm;
};

/* Until SIGTERM or SIGINT (or poll fails). */
static void event_loop(struct rld *r, const struct loop_fds *fd)
{
	double reload_at = 0;	/* a changed file is reloaded once it settles */
	bool running = true;

	while (running) {
		struct pollfd p[5] = {
			{ .fd = fd->signal, .events = POLLIN },
			{ .fd = fd->timer, .events = POLLIN },
			{ .fd = fd->inotify, .events = POLLIN },
			{ .fd = fd->lm ? xrl_linkmon_fd(fd->lm) : -1, .events = POLLIN },
			{ .fd = r->ev.ring ? xrl_events_fd(r->ev.ring) : -1, .events = POLLIN },
		};
		int timeout = -1, n;

		if (reload_at) {
			double left = reload_at - now_ms();

			timeout = left > 0 ? (int)left + 1 : 0;
		}
		__atomic_store_n(&r->hb.busy_ms, 0, __ATOMIC_RELEASE);
		n = poll(p, 5, timeout);
		__atomic_store_n(&r->hb.busy_ms, (long)now_ms(), __ATOMIC_RELEASE);
		if (n < 0 && errno != EINTR) {
			xrl_log(XRL_LOG_ERR, "poll: %s", strerror(errno));
			break;
		}
		if (reload_at && now_ms() >= reload_at) {	/* the file settled */
			reload_at = 0;
			reload(r, "the file changed");
		}
		if (p[0].revents & POLLIN) {
			struct signalfd_siginfo si;

			while (read(fd->signal, &si, sizeof(si)) == sizeof(si)) {
				if (si.ssi_signo == SIGHUP)
					reload(r, "SIGHUP");
				else
					running = false;
			}
		}
		if (p[1].revents & POLLIN) {
			__u64 ticks;

			if (read(fd->timer, &ticks, sizeof(ticks)) > 0) {
				check_pins(r);
				events_tick(r);
				bans_tick(r);
				sweep_sets(r);
			}
		}
		if (p[4].revents & POLLIN)
			events_read(r);
		if ((p[2].revents & POLLIN) && config_event(r, fd->inotify))
			reload_at = now_ms() + RELOAD_SETTLE_MS;
		if (fd->lm && (p[3].revents & POLLIN) && xrl_linkmon_read(fd->lm, on_link, r) == -ENOBUFS) {
			/* notifications were lost: look at every interface again */
			for (size_t i = 0; r->ifs.st && i < r->ifs.n; i++)
				serve_iface(r, i);
			count_attached(r);
		}
	}
}

/* Start, serve until a stop, stop. The exit status: 0 after a stop; 1 when
 * the start failed (threads may still run then: r is not to be freed). */
static int run(struct rld *r, const sigset_t *mask)
{
	struct xrl_open_opts oo = { .create = true };
	struct loop_fds fd = { .lm = NULL };
	struct xrl_cs *cs = NULL;
	struct xrl_config c;
	bool builtin;
	int err, wd = -1;

	if (read_config(r, &c, true, true, &builtin))
		return 1;
	if (builtin)
		xrl_log(XRL_LOG_WARN, "%s does not exist: using the built-in default rule set (every source, 1000/s, burst 2000)",
		     r->opt.config);

	/* before anything is created: an interface that another XDP program
	 * holds cannot be served, and the start says so and stops */
	if (ifaces_held(r, &c, false)) {
		xrl_config_free(&c);
		return 1;
	}
	oo.pin_dir = r->opt.pin_dir;
	if (xrl_open(&oo, &r->x)) {
		xrl_log(XRL_LOG_ERR, "%s", xrl_errmsg());
		return 1;
	}
	/* an upgrade killed part way: finished before anything is attached
	 * (it logs what it did); a failure leaves the pins as they were */
	if (xrl_upgrade_recover(r->x) < 0)
		xrl_log(XRL_LOG_ERR, "%s", xrl_errmsg());
	xrl_unlock(r->x);	/* held only around changes: xdp-rlctl stays usable */
	if (xrl_daemon_claim(r->x, NULL)) {
		/* the other daemon's program, maps and interfaces stay as they are */
		xrl_log(XRL_LOG_ERR, "%s", xrl_errmsg());
		xrl_config_free(&c);
		xrl_close(r->x);
		return 1;
	}

	/* the program's run time per packet, counted by the kernel while this
	 * fd is open: for the daemon's life, closed on any way out (unlike
	 * the sysctl, which is global and stays set) */
	r->metrics.runtime_fd = r->opt.no_run_stats ? -1 : xrl_runtime_stats_enable();
	if (r->metrics.runtime_fd < 0 && !r->opt.no_run_stats)
		xrl_log(XRL_LOG_WARN, "%s: xdp_rl_program_run_seconds_total and xdp_rl_program_runs_total do not move",
			xrl_errmsg());
	r->stats.runtime_stats = r->metrics.runtime_fd >= 0;

	fd.signal = signalfd(-1, mask, SFD_NONBLOCK | SFD_CLOEXEC);
	fd.timer = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	fd.inotify = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (fd.signal < 0 || fd.timer < 0 || fd.inotify < 0) {
		xrl_log(XRL_LOG_ERR, "cannot set up the event loop: %s", strerror(errno));
		return 1;
	}
	if (!builtin || !r->opt.config_given) {
		wd = watch_config(r, fd.inotify);
		if (wd < 0)
			xrl_log(XRL_LOG_WARN, "cannot watch %s (%s): reload with SIGHUP", r->opt.config, strerror(errno));
	}
	if ((err = xrl_linkmon_open(&fd.lm)))
		xrl_log(XRL_LOG_WARN, "no link notifications (%s): interfaces that reappear are not re-attached",
		     strerror(-err));

	/* before anything is attached: a fleet line that cannot work (its
	 * credentials unreadable) stops the start with nothing changed */
	if (fleet_start(r, &c)) {
		xrl_config_free(&c);
		xrl_close(r->x);
		return 1;
	}
	/* the same for a crowdsec line (its key unreadable) */
	if (crowdsec_open(r, &c, &cs)) {
		fleet_stop(r, false);
		xrl_config_free(&c);
		xrl_close(r->x);
		return 1;
	}
	if (apply(r, &c, "start")) {
		xrl_cs_free(cs);
		fleet_stop(r, false);
		xrl_config_free(&c);
		xrl_close(r->x);
		return 1;
	}
	{
		/* A served interface that exists but cannot be attached is an
		 * interface left unprotected: the start fails (no READY), and
		 * stops as a stop does (--keep-attached: what is attached
		 * stays). An interface that does not exist yet is waited for. */
		char names[300];

		if (ifaces_failed(r, names, sizeof(names))) {
			xrl_log(XRL_LOG_ERR, "not starting: interface(s)%s could not be attached (see above)", names);
			xrl_cs_free(cs);
			fleet_stop(r, false);
			stop_data_path(r);
			xrl_config_free(&c);
			free(r->ifs.cfg);
			free(r->ifs.st);
			free(r->stats.ifaces);
			xrl_close(r->x);
			return 1;
		}
	}
	r->stats.pins_ok = 1;
	/* the bans' events from userspace (the sweep, reloads, the deciders):
	 * their program is loaded now, while the capabilities are there */
	if (!xrl_ban_events_prepare(r->x))
		xrl_log(XRL_LOG_WARN, "events: bans set and lifted here are said at their first packet only");
	/* does it serve an interface at tc (there yet or not)? */
	bool tc = false;

	for (size_t i = 0; i < r->ifs.n; i++)
		tc |= r->ifs.cfg[i].hook == XRL_HOOK_TC;
	/* a hook tc interface that is not there yet (or whose attach
	 * failed) is attached when it appears: its tc program is loaded
	 * now, while the daemon may still load one (an interface at tc
	 * attached above loaded it already) */
	if (tc) {
		if (!(err = xrl_lock(r->x))) {
			err = xrl_tc_prepare(r->x);
			xrl_unlock(r->x);
		}
		if (err)
			xrl_log(XRL_LOG_WARN, "hook tc: cannot load the tc program now (%s): an interface at tc "
				"that is not attached yet will need a restart of the daemon", xrl_errmsg());
	}
	/* started: from here on, only what the kernel requires (caps.c) */
	{
		char kept[64];
		/* and while it serves an interface at tc: the tcx chain's
		 * order is read with BPF_PROG_QUERY, which wants CAP_NET_ADMIN */
		bool sc = tc;

		for (size_t i = 0; i < c.nrules; i++)
			sc |= c.rules[i].r.syncookies;
		if (caps_keep(kept, sizeof(kept), sc))
			xrl_log(XRL_LOG_WARN, "cannot drop capabilities: keeping those it was given");
		else
			xrl_log(XRL_LOG_INFO, "capabilities: kept %s; dropped the others", kept);
	}
	events_start(r);
	if ((err = heartbeat_start(r)) || arm_timer(fd.timer)) {
		xrl_log(XRL_LOG_ERR, "cannot start the heartbeat: %s", strerror(err ? -err : errno));
		return 1;
	}
	/* after the heartbeat: its walks never delay the first beat */
	if ((err = suggest_start(r)))
		xrl_log(XRL_LOG_WARN, "suggest: cannot start the sampler (%s): not recording", strerror(-err));
	metrics_set(r, c.metrics, "start");
	/* the bans table is there and the heartbeat runs: its decisions may come */
	crowdsec_start(r, &c, cs);
	/* systemd (Type=notify): started once the rules are applied, the
	 * interfaces attached and the metrics served */
	sd_notifyf(0, "READY=1\nSTATUS=%zu rules, %u interface(s) attached%s", c.nrules,
		   r->stats.interfaces_attached,
		   r->stats.interfaces_attached < r->ifs.n ? ", waiting for the others to appear" : "");
	xrl_config_free(&c);
	xrl_log(XRL_LOG_INFO, "running: heartbeat %ld ms, watchdog %ld ms%s", r->hb.heartbeat_ms, r->hb.watchdog_ms,
	     r->hb.watchdog_ms ? "" : " (off)");

	event_loop(r, &fd);

	xrl_log(XRL_LOG_INFO, "stopping");
	sd_notify(0, "STOPPING=1");
	/* the heartbeat goes on until the very end: nothing the stop waits
	 * for (the sync thread, Redis, a scrape) may look like a dead daemon */
	crowdsec_stop(r);	/* the bans it set stay: they are pinned, and end on time */
	fleet_stop(r, true);	/* leaves the live hosts: the others' shares grow at once */
	events_read(r);		/* the last ones, for the log */
	events_stop(r);
	xrl_metrics_stop(r->metrics.server);
	r->metrics.server = NULL;
	api_free(r);
	suggest_stop(r);	/* after the server: no scrape reads its records now */
	xrl_linkmon_close(fd.lm);
	stop_data_path(r);
	if (r->metrics.runtime_fd >= 0)
		close(r->metrics.runtime_fd);	/* run-time statistics off, unless someone else holds them */
	close(fd.signal);
	close(fd.timer);
	close(fd.inotify);
	free(r->ifs.cfg);
	free(r->ifs.st);
	free(r->stats.ifaces);
	xrl_close(r->x);
	return 0;
}

static struct rld *rld_new(void)
{
	struct rld *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->opt = (struct rld_opts){
		.config = XRL_DEFAULT_CONFIG, .heartbeat_ms = -1, .watchdog_ms = -1, .level = XRL_LOG_INFO,
	};
	pthread_mutex_init(&r->lock, NULL);
	pthread_mutex_init(&r->metrics.keys_lock, NULL);
	pthread_mutex_init(&r->metrics.top_lock, NULL);
	r->metrics.runtime_fd = -1;
	rld_thread_init(&r->hb.thread);
	rld_thread_init(&r->fleet.thread);
	rld_thread_init(&r->cs.thread);
	rld_thread_init(&r->suggest.thread);
	return r;
}

int main(int argc, char **argv)
{
	struct rld *r = rld_new();
	sigset_t mask;
	int err;

	if (!r) {
		fprintf(stderr, "Error: %s\n", strerror(ENOMEM));
		return 1;
	}
	err = parse_args(&r->opt, argc, argv);
	if (err) {
		free(r);
		return err < 0 ? 0 : err;	/* -1: --help or --version */
	}
	r->opt.journal = getenv("JOURNAL_STREAM") != NULL;
	/* Before any thread starts: the threads inherit the mask, so these
	 * signals reach the event loop's signalfd only, and never kill the
	 * daemon through a thread that does not block them. */
	sigemptyset(&mask);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);
	logq_init(r);
	if (r->opt.check)
		return check(r);
	logq_start(r);
	err = run(r, &mask);
	/* what is queued is written on every way out; r goes only when no
	 * thread can use it any more (after a stop, the log writer gone) */
	if (logq_stop(r) == 0 && err == 0) {
		xrl_log_set(NULL, r->opt.level);
		free(r);
	}
	return err;
}
