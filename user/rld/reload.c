// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xdp-rld: read the configuration, apply it as one transaction, watch the
 * file for changes.
 */
#include "rld.h"

#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <time.h>
#include <unistd.h>

static void print_errors(const char *path, const struct xrl_config_err *e, size_t n, bool as_log)
{
	for (size_t i = 0; i < n; i++) {
		if (as_log)
			xrl_log(XRL_LOG_ERR, "%s:%d:%d: %s", path, e[i].line, e[i].col, e[i].msg);
		else
			fprintf(stderr, "%s:%d:%d: %s\n", path, e[i].line, e[i].col, e[i].msg);
	}
}

/* Read the configuration: the file, or at the first start only, the
 * built-in rule set when the default file does not exist. A file that
 * disappears or becomes unreadable later is a failed reload, never a
 * fallback to the built-in set. */
int read_config(struct xrl_config *c, bool as_log, bool first, bool *builtin)
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
			xrl_log(XRL_LOG_ERR, "%s: %s", opt.config, strerror(-err));
		else
			fprintf(stderr, "%s: %s\n", opt.config, strerror(-err));
	}
	print_errors(opt.config, errs, nerrs, as_log);
	free(errs);
	return err;
}

long pick(long flag, long file, long def)
{
	return flag >= 0 ? flag : file >= 0 ? file : def;
}

double ms_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1e3 + (t.tv_nsec - t0->tv_nsec) / 1e6;
}

/* One transaction: the rule set and the mode; then the interfaces and the
 * heartbeat settings. On failure the running rule set is untouched. */
int apply(struct xrl_config *c, const char *what)
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
		xrl_log(XRL_LOG_ERR, "%s: %s; the rules in force are unchanged", what, xrl_errmsg());
		return err;
	}
	xrl_log(XRL_LOG_INFO, "%s: %zu rules, mode %s, applied in %.1f ms", what, c->nrules,
	     xrl_mode_name(c->has_mode ? c->mode : XRL_MODE_ENFORCE), ms_since(&t0));

	__atomic_store_n(&d.heartbeat_ms, pick(opt.heartbeat_ms, c->heartbeat_ms, DEFAULT_HEARTBEAT_MS),
			 __ATOMIC_RELEASE);
	__atomic_store_n(&d.watchdog_ms, pick(opt.watchdog_ms, c->watchdog_ms, DEFAULT_WATCHDOG_MS),
			 __ATOMIC_RELEASE);
	if (d.watchdog_ms && d.watchdog_ms < 2 * d.heartbeat_ms)
		xrl_log(XRL_LOG_WARN, "watchdog %ld ms is less than two heartbeats (%ld ms): it may fire while the daemon is alive",
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
		free(d.iface_failed);
		d.ifaces = ifs;
		d.iface_failed = calloc(nifs + 1, sizeof(*d.iface_failed));
		d.nifaces = nifs;
		for (size_t i = 0; i < d.nifaces; i++)
			serve_iface(&d.ifaces[i]);
	}
	if (!d.nifaces)
		xrl_log(XRL_LOG_WARN, "no interface to serve: name one with 'interface IF' or --iface");
	count_attached();
	return 0;
}

void reload(const char *why)
{
	struct xrl_config c;
	bool builtin;

	xrl_log(XRL_LOG_INFO, "reloading %s (%s)", opt.config, why);
	if (read_config(&c, true, false, &builtin)) {
		d.stats.reload_failures++;
		xrl_log(XRL_LOG_ERR, "reload refused: the rules, mode and interfaces in force are unchanged");
		return;
	}
	check_pins();
	if (apply(&c, "reload"))
		d.stats.reload_failures++;
	else
		d.stats.reloads++;
	xrl_config_free(&c);
}

int watch_config(int ifd)
{
	char dir[PATH_MAX];

	snprintf(dir, sizeof(dir), "%s", opt.config);
	return inotify_add_watch(ifd, dirname(dir),
				 IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE | IN_DELETE | IN_MOVED_FROM);
}

bool config_event(int ifd)
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
