// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xdp-rld: owns the configuration, proves it is alive, reports what the
 * data path does, and decides what happens when something breaks.
 *
 * One thread runs the event loop (signals, the config file, link
 * notifications, a housekeeping tick that checks the pins); a thread of its
 * own heartbeats, so that nothing the event loop waits for (a reload, the
 * config reader, another process's lock) can look like a dead daemon to the
 * watchdog; libmicrohttpd's thread serves /metrics. Every map and attach
 * operation goes through libxrl.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>
#include <bpf/libbpf.h>

#include "config.h"
#include "libxrl.h"
#include "linkmon.h"
#include "metrics.h"

#define DEFAULT_METRICS		"127.0.0.1:9437"
#define DEFAULT_HEARTBEAT_MS	1000
#define DEFAULT_WATCHDOG_MS	5000
#define RELOAD_SETTLE_MS	100	/* editors write, rename, chmod: one reload */

enum { L_ERR, L_WARN, L_INFO, L_DEBUG };
static const char *level_names[] = { "error", "warning", "info", "debug" };
static const int level_syslog[] = { 3, 4, 6, 7 };

static struct {
	const char *config;
	bool config_given;
	char *ifaces[64];
	int nifaces;
	const char *metrics;
	long heartbeat_ms, watchdog_ms;
	const char *pin_dir;
	bool keep_attached, check;
	int level;
	bool journal;
} opt = { .config = XRL_DEFAULT_CONFIG, .heartbeat_ms = -1, .watchdog_ms = -1, .level = L_INFO };

/* The running state. `lock` serialises map reads by the metrics thread with
 * the event loop's rule changes. The heartbeat thread takes no lock: it reads
 * its settings atomically and writes two words of the mmap'ed control block. */
static struct {
	struct xrl *x;
	pthread_mutex_t lock;
	struct xrl_daemon_stats stats;
	struct xrl_iface_cfg *ifaces;	/* served interfaces */
	size_t nifaces;
	long heartbeat_ms, watchdog_ms;	/* atomic: the heartbeat thread reads them */
	int timer_fd;
	/* the heartbeat thread */
	pthread_t hb_thread;
	bool hb_started, hb_stop;
	pthread_mutex_t hb_lock;
	pthread_cond_t hb_cond;
	long busy_ms;		/* atomic: when the event loop's current turn began; 0: idle in poll */
	bool pins_broken;	/* the last pin check failed and was logged */
} d = { .lock = PTHREAD_MUTEX_INITIALIZER, .timer_fd = -1, .hb_lock = PTHREAD_MUTEX_INITIALIZER };

__attribute__((format(printf, 2, 3)))
static void logm(int level, const char *fmt, ...)
{
	va_list ap;

	if (level > opt.level)
		return;
	/* one line per event; under journald a <N> prefix carries the level */
	if (opt.journal)
		fprintf(stderr, "<%d>", level_syslog[level]);
	fprintf(stderr, "%s: ", level_names[level]);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: xdp-rld [--config FILE] [--iface IF]... [--metrics ADDR:PORT]\n"
		"               [--heartbeat MS] [--watchdog MS] [--pin-dir DIR] [--keep-attached]\n"
		"               [--log-level error|warning|info|debug] [--check]\n"
		"See xdp-rld(8) and xdp-rl.conf(5).\n");
}

static void print_errors(const char *path, const struct xrl_config_err *e, size_t n, bool as_log)
{
	for (size_t i = 0; i < n; i++) {
		if (as_log)
			logm(L_ERR, "%s:%d:%d: %s", path, e[i].line, e[i].col, e[i].msg);
		else
			fprintf(stderr, "%s:%d:%d: %s\n", path, e[i].line, e[i].col, e[i].msg);
	}
}

/* Read the configuration: the file, or at the first start only, the
 * built-in rule set when the default file does not exist. A file that
 * disappears or becomes unreadable later is a failed reload, never a
 * fallback to the built-in set. */
static int read_config(struct xrl_config *c, bool as_log, bool first, bool *builtin)
{
	struct xrl_config_err *errs = NULL;
	size_t nerrs = 0;
	int err;

	*builtin = false;
	err = xrl_config_load(opt.config, c, &errs, &nerrs);
	if (err == -ENOENT && !opt.config_given && first) {
		*builtin = true;
		err = xrl_config_parse_text("(built-in)", xrl_default_config, c, &errs, &nerrs);
	} else if (err == -ENOENT || (err && !nerrs)) {
		if (as_log)
			logm(L_ERR, "%s: %s", opt.config, strerror(-err));
		else
			fprintf(stderr, "%s: %s\n", opt.config, strerror(-err));
	}
	print_errors(opt.config, errs, nerrs, as_log);
	free(errs);
	return err;
}

/* ---- interfaces ---- */

enum link_state { LINK_NONE, LINK_STALE, LINK_LIVE };

/* Our pinned link on ifname: none, stale (its device is gone), or live. */
static enum link_state link_state(const char *ifname)
{
	enum link_state st = LINK_NONE;
	struct xrl_attachment *a;
	size_t n;

	if (xrl_attachments(d.x, &a, &n))
		return LINK_NONE;
	for (size_t i = 0; i < n; i++) {
		char name[IF_NAMESIZE];

		if (strcmp(a[i].ifname, ifname))
			continue;
		/* live while its device is still the one of that name */
		st = a[i].ifindex && if_indextoname(a[i].ifindex, name) && !strcmp(name, ifname) ?
			     LINK_LIVE : LINK_STALE;
	}
	free(a);
	return st;
}

static bool attached_now(const char *ifname)
{
	return link_state(ifname) == LINK_LIVE;
}

static bool has_link_pin(const char *ifname)
{
	return link_state(ifname) != LINK_NONE;
}

static void count_attached(void)
{
	unsigned n = 0;

	for (size_t i = 0; i < d.nifaces; i++)
		n += attached_now(d.ifaces[i].name);
	d.stats.interfaces_attached = n;
}

/* Attach, or adopt what a previous run left attached. */
static void serve_iface(const struct xrl_iface_cfg *ic)
{
	enum xrl_xdp_mode got;

	if (attached_now(ic->name)) {
		logm(L_INFO, "interface %s: adopted the program already attached", ic->name);
		return;
	}
	if (!if_nametoindex(ic->name)) {
		logm(L_WARN, "interface %s does not exist; it will be attached when it appears", ic->name);
		return;
	}
	xrl_lock(d.x);
	if (has_link_pin(ic->name))
		xrl_detach(d.x, ic->name);	/* a stale link of a device that is gone */
	if (xrl_attach(d.x, ic->name, ic->mode, &got))
		logm(L_ERR, "interface %s: %s", ic->name, xrl_errmsg());
	else
		logm(L_INFO, "interface %s: attached (%s mode)", ic->name, xrl_xdp_mode_name(got));
	xrl_unlock(d.x);
}

static void unserve_iface(const char *name)
{
	xrl_lock(d.x);
	if (xrl_detach(d.x, name))
		logm(L_WARN, "interface %s: %s", name, xrl_errmsg());
	else
		logm(L_INFO, "interface %s: detached", name);
	xrl_unlock(d.x);
}

/* The served set: the file's interfaces and every --iface. */
static int set_ifaces(const struct xrl_config *c, struct xrl_iface_cfg **out, size_t *n)
{
	struct xrl_iface_cfg *v = calloc(c->nifaces + opt.nifaces + 1, sizeof(*v));

	if (!v)
		return -ENOMEM;
	*n = 0;
	for (size_t i = 0; i < c->nifaces; i++)
		v[(*n)++] = c->ifaces[i];
	for (int i = 0; i < opt.nifaces; i++) {
		bool dup = false;

		for (size_t j = 0; j < *n; j++)
			dup |= !strcmp(v[j].name, opt.ifaces[i]);
		if (!dup) {
			snprintf(v[*n].name, IF_NAMESIZE, "%s", opt.ifaces[i]);
			v[(*n)++].mode = XRL_XDP_AUTO;
		}
	}
	*out = v;
	return 0;
}

static void on_link(const struct xrl_link_event *ev, void *ctx)
{
	(void)ctx;
	for (size_t i = 0; i < d.nifaces; i++) {
		if (strcmp(d.ifaces[i].name, ev->ifname))
			continue;
		if (!ev->added) {
			logm(L_WARN, "interface %s disappeared; keeping the maps, waiting for it", ev->ifname);
		} else if (!attached_now(ev->ifname)) {
			logm(L_INFO, "interface %s appeared", ev->ifname);
			serve_iface(&d.ifaces[i]);
		}
	}
	count_attached();
}

/* ---- heartbeat ---- */

static long get_long(long *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static void heartbeat(void)
{
	xrl_heartbeat(d.x, get_long(&d.heartbeat_ms), (__u64)get_long(&d.watchdog_ms) * 1000000);
}

static double now_ms(void);

static void timespec_add_ms(struct timespec *t, long ms)
{
	t->tv_sec += ms / 1000;
	t->tv_nsec += (ms % 1000) * 1000000;
	if (t->tv_nsec >= 1000000000) {
		t->tv_sec++;
		t->tv_nsec -= 1000000000;
	}
}

/*
 * The heartbeat proves that the daemon is alive, nothing more: it waits for
 * no reload, no file, no lock but its own condition variable. A stalled
 * event loop is reported (log) but does not stop the heartbeat, since that
 * would lift every limit (the watchdog's on-failure policies).
 */
static void *heartbeat_main(void *arg)
{
	struct timespec next;
	bool stall_logged = false;

	(void)arg;
	clock_gettime(CLOCK_MONOTONIC, &next);
	pthread_mutex_lock(&d.hb_lock);
	while (!d.hb_stop) {
		long hb = get_long(&d.heartbeat_ms);
		long busy = get_long(&d.busy_ms);
		double stall = busy ? now_ms() - busy : 0;
		long wd = get_long(&d.watchdog_ms);

		heartbeat();
		/* a turn of the event loop takes milliseconds; a reload of a
		 * large file, a second or so */
		if (stall > 2.0 * (wd > 10000 ? wd : 10000) && !stall_logged) {
			logm(L_WARN, "the event loop has been busy for %.0f s (heartbeat goes on)", stall / 1e3);
			stall_logged = true;
		} else if (stall < hb) {
			stall_logged = false;
		}
		timespec_add_ms(&next, hb);
		pthread_cond_timedwait(&d.hb_cond, &d.hb_lock, &next);
		/* behind by more than a beat (a suspended machine): resync */
		if (now_ms() > next.tv_sec * 1e3 + next.tv_nsec / 1e6 + hb)
			clock_gettime(CLOCK_MONOTONIC, &next);
	}
	pthread_mutex_unlock(&d.hb_lock);
	return NULL;
}

static int heartbeat_start(void)
{
	pthread_condattr_t ca;
	int err;

	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&d.hb_cond, &ca);
	pthread_condattr_destroy(&ca);
	err = pthread_create(&d.hb_thread, NULL, heartbeat_main, NULL);
	d.hb_started = !err;
	return -err;
}

static void heartbeat_stop(void)
{
	if (!d.hb_started)
		return;
	pthread_mutex_lock(&d.hb_lock);
	d.hb_stop = true;
	pthread_cond_signal(&d.hb_cond);
	pthread_mutex_unlock(&d.hb_lock);
	pthread_join(d.hb_thread, NULL);
	d.hb_started = false;
}

/* A new heartbeat period takes effect at once. */
static void heartbeat_kick(void)
{
	if (!d.hb_started)
		return;
	pthread_mutex_lock(&d.hb_lock);
	pthread_cond_signal(&d.hb_cond);
	pthread_mutex_unlock(&d.hb_lock);
}

/* The event loop's housekeeping tick: the pin check, once a second. */
static int arm_timer(void)
{
	struct itimerspec its = {
		.it_interval = { 1, 0 },
		.it_value = { 1, 0 },
	};

	return timerfd_settime(d.timer_fd, 0, &its, NULL);
}

/* ---- the pins ---- */

static void serve_iface(const struct xrl_iface_cfg *ic);
static void count_attached(void);

/*
 * An `rm -rf` of the pin directory drops the links' last references, so XDP
 * is detached, while the daemon still holds the maps and the program. Pin
 * them again, renew the daemon's claim and re-attach: the buckets, rules and
 * counters carry on. Checked every second and before every reload.
 */
static int check_pins(void)
{
	int err;

	if (xrl_pins_ok(d.x) == 1) {
		if (d.pins_broken)
			logm(L_INFO, "the pins under %s are whole again", xrl_pin_dir(d.x));
		d.pins_broken = false;
		d.stats.pins_ok = 1;
		return 0;
	}
	logm(L_ERR, "pins under %s were removed: pinning the maps again and re-attaching",
	     xrl_pin_dir(d.x));
	err = xrl_lock(d.x);
	if (!err) {
		err = xrl_pins_restore(d.x);
		xrl_unlock(d.x);
	}
	if (err) {
		/* say it once per outage, count it in the metrics */
		if (!d.pins_broken)
			logm(L_ERR, "cannot restore the pins: %s; not enforcing until they are", xrl_errmsg());
		d.pins_broken = true;
		d.stats.pins_ok = 0;
		return err;
	}
	d.stats.pin_restores++;
	for (size_t i = 0; i < d.nifaces; i++)
		serve_iface(&d.ifaces[i]);
	count_attached();
	d.pins_broken = false;
	d.stats.pins_ok = 1;
	logm(L_WARN, "restored the pins under %s; %u interface(s) attached", xrl_pin_dir(d.x),
	     d.stats.interfaces_attached);
	return 0;
}

/* ---- applying a configuration ---- */

static long pick(long flag, long file, long def)
{
	return flag >= 0 ? flag : file >= 0 ? file : def;
}

static double now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static double ms_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1e3 + (t.tv_nsec - t0->tv_nsec) / 1e6;
}

/* One transaction: the rule set and the mode; then the interfaces and the
 * heartbeat settings. On failure the running rule set is untouched. */
static int apply(struct xrl_config *c, const char *what)
{
	struct xrl_iface_cfg *ifs;
	struct timespec t0;
	size_t nifs;
	int err;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	pthread_mutex_lock(&d.lock);
	err = xrl_lock(d.x);
	if (!err)
		err = xrl_rules_commit(d.x, c->rules, c->nrules);
	if (!err)
		xrl_mode_set(d.x, c->has_mode ? c->mode : XRL_MODE_ENFORCE);
	xrl_unlock(d.x);
	pthread_mutex_unlock(&d.lock);
	if (err) {
		logm(L_ERR, "%s: %s; the rules in force are unchanged", what, xrl_errmsg());
		return err;
	}
	logm(L_INFO, "%s: %zu rules, mode %s, applied in %.1f ms", what, c->nrules,
	     xrl_mode_name(c->has_mode ? c->mode : XRL_MODE_ENFORCE), ms_since(&t0));

	__atomic_store_n(&d.heartbeat_ms, pick(opt.heartbeat_ms, c->heartbeat_ms, DEFAULT_HEARTBEAT_MS),
			 __ATOMIC_RELEASE);
	__atomic_store_n(&d.watchdog_ms, pick(opt.watchdog_ms, c->watchdog_ms, DEFAULT_WATCHDOG_MS),
			 __ATOMIC_RELEASE);
	if (d.watchdog_ms && d.watchdog_ms < 2 * d.heartbeat_ms)
		logm(L_WARN, "watchdog %ld ms is less than two heartbeats (%ld ms): it may fire while the daemon is alive",
		     d.watchdog_ms, d.heartbeat_ms);
	heartbeat();
	heartbeat_kick();

	if (set_ifaces(c, &ifs, &nifs) == 0) {
		for (size_t i = 0; i < d.nifaces; i++) {
			bool keep = false;

			for (size_t j = 0; j < nifs; j++)
				keep |= !strcmp(d.ifaces[i].name, ifs[j].name);
			if (!keep && has_link_pin(d.ifaces[i].name))
				unserve_iface(d.ifaces[i].name);
		}
		free(d.ifaces);
		d.ifaces = ifs;
		d.nifaces = nifs;
		for (size_t i = 0; i < d.nifaces; i++)
			serve_iface(&d.ifaces[i]);
	}
	if (!d.nifaces)
		logm(L_WARN, "no interface to serve: name one with 'interface IF' or --iface");
	count_attached();
	return 0;
}

static void reload(const char *why)
{
	struct xrl_config c;
	bool builtin;

	logm(L_INFO, "reloading %s (%s)", opt.config, why);
	if (read_config(&c, true, false, &builtin)) {
		d.stats.reload_failures++;
		logm(L_ERR, "reload refused: the rules, mode and interfaces in force are unchanged");
		return;
	}
	check_pins();
	if (apply(&c, "reload"))
		d.stats.reload_failures++;
	else
		d.stats.reloads++;
	xrl_config_free(&c);
}

static int metrics_fill(FILE *f, void *ctx)
{
	int err;

	(void)ctx;
	pthread_mutex_lock(&d.lock);
	err = xrl_metrics_write(f, d.x, &d.stats);
	pthread_mutex_unlock(&d.lock);
	return err;
}

/* ---- the config file watch: the directory, so that an editor's
 * write-to-temp-and-rename is seen ---- */

static int watch_config(int ifd)
{
	char dir[PATH_MAX];

	snprintf(dir, sizeof(dir), "%s", opt.config);
	return inotify_add_watch(ifd, dirname(dir),
				 IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE | IN_DELETE | IN_MOVED_FROM);
}

static bool config_event(int ifd)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	char base[PATH_MAX];
	const char *name;
	bool hit = false;
	ssize_t n;

	snprintf(base, sizeof(base), "%s", opt.config);
	name = basename(base);
	while ((n = read(ifd, buf, sizeof(buf))) > 0) {
		for (char *p = buf; p < buf + n;) {
			struct inotify_event *ev = (struct inotify_event *)p;

			if (ev->len && !strcmp(ev->name, name))
				hit = true;
			p += sizeof(*ev) + ev->len;
		}
	}
	return hit;
}

/* ---- main ---- */

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
		{}
	};
	char host[64];
	__u64 v;
	int ch, port;

	while ((ch = getopt_long(argc, argv, "c:i:m:d:kl:Ch", lo, NULL)) != -1) {
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
			for (opt.level = 0; opt.level <= L_DEBUG && strcmp(optarg, level_names[opt.level]); opt.level++)
				;
			if (opt.level > L_DEBUG) {
				fprintf(stderr, "Error: invalid --log-level '%s' (error, warning, info, debug)\n", optarg);
				return 2;
			}
			break;
		case 'C':
			opt.check = true;
			break;
		case 'h':
			usage(stdout);
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
		logm(L_WARN, "%s does not exist: using the built-in default rule set (every source, 1000/s, burst 2000)",
		     opt.config);

	if (!getenv("XRL_DEBUG"))
		libbpf_set_print(NULL);
	oo.pin_dir = opt.pin_dir;
	if (xrl_open(&oo, &d.x)) {
		logm(L_ERR, "%s", xrl_errmsg());
		return 1;
	}
	xrl_unlock(d.x);	/* held only around changes: xdp-rlctl stays usable */
	if (xrl_daemon_claim(d.x, NULL)) {
		/* the other daemon's program, maps and interfaces stay as they are */
		logm(L_ERR, "%s", xrl_errmsg());
		xrl_config_free(&c);
		xrl_close(d.x);
		return 1;
	}

	sigemptyset(&mask);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);
	sfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
	d.timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (sfd < 0 || d.timer_fd < 0 || ifd < 0) {
		logm(L_ERR, "cannot set up the event loop: %s", strerror(errno));
		return 1;
	}
	if (!builtin || !opt.config_given) {
		wd = watch_config(ifd);
		if (wd < 0)
			logm(L_WARN, "cannot watch %s (%s): reload with SIGHUP", opt.config, strerror(errno));
	}
	if ((err = xrl_linkmon_open(&lm)))
		logm(L_WARN, "no link notifications (%s): interfaces that reappear are not re-attached",
		     strerror(-err));

	if (apply(&c, "start")) {
		xrl_config_free(&c);
		xrl_close(d.x);
		return 1;
	}
	d.stats.pins_ok = 1;
	if ((err = heartbeat_start()) || arm_timer()) {
		logm(L_ERR, "cannot start the heartbeat: %s", strerror(err ? -err : errno));
		return 1;
	}
	maddr = opt.metrics ? opt.metrics : c.metrics[0] ? c.metrics : DEFAULT_METRICS;
	if (strcmp(maddr, "off")) {
		if ((err = xrl_metrics_start(maddr, metrics_fill, NULL, &metrics)))
			logm(L_ERR, "metrics on %s: %s; continuing without", maddr, strerror(-err));
		else
			logm(L_INFO, "metrics on http://%s/metrics", maddr);
	}
	xrl_config_free(&c);
	logm(L_INFO, "running: heartbeat %ld ms, watchdog %ld ms%s", d.heartbeat_ms, d.watchdog_ms,
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
			logm(L_ERR, "poll: %s", strerror(errno));
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

	logm(L_INFO, "stopping");
	heartbeat_stop();	/* before the watchdog is disarmed below */
	xrl_metrics_stop(metrics);
	xrl_linkmon_close(lm);
	if (opt.keep_attached) {
		/* A decided stop, not a failure: the data path keeps enforcing
		 * the rules in force until a daemon heartbeats again. */
		xrl_heartbeat(d.x, 0, 0);	/* no more heartbeats, none awaited */
		logm(L_INFO, "left attached (--keep-attached); watchdog disarmed");
	} else {
		struct xrl_attachment *a;
		size_t n;

		for (size_t i = 0; i < d.nifaces; i++)
			if (has_link_pin(d.ifaces[i].name))
				unserve_iface(d.ifaces[i].name);
		xrl_lock(d.x);
		if (xrl_attachments(d.x, &a, &n) == 0) {
			if (n == 0 && xrl_purge(d.x) == 0)
				logm(L_INFO, "removed the pins under %s", xrl_pin_dir(d.x));
			else if (n)
				logm(L_INFO, "pins kept: %zu interface(s) attached by others", n);
			free(a);
		}
	}
	free(d.ifaces);
	xrl_close(d.x);
	return 0;
}
