// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xdp-rld: read the configuration, apply it as one transaction, watch the
 * file for changes.
 */
#include "rld.h"
#include "text/setload.h"

#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <time.h>
#include <unistd.h>
#include <systemd/sd-daemon.h>

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
int read_config(struct rld *r, struct xrl_config *c, bool as_log, bool first, bool *builtin)
{
	struct xrl_config_err *errs = NULL;
	size_t nerrs = 0;
	int err;

	*builtin = false;
	caps_effective(false);	/* a file and a parser need no capability */
	err = xrl_config_load(r->opt.config, c, &errs, &nerrs);
	if (err == -ENOENT && !r->opt.config_given && first) {
		*builtin = true;
		err = xrl_config_parse_text("(built-in)", xrl_default_config, c, &errs, &nerrs);
	} else if (err == -ENOENT || (err && !nerrs)) {
		if (as_log)
			xrl_log(XRL_LOG_ERR, "%s: %s", r->opt.config, strerror(-err));
		else
			fprintf(stderr, "%s: %s\n", r->opt.config, strerror(-err));
	}
	print_errors(r->opt.config, errs, nerrs, as_log);
	caps_effective(true);
	free(errs);
	return err;
}

long pick(long flag, long file, long def)
{
	return flag >= 0 ? flag : file >= 0 ? file : def;
}

static double ms_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1e3 + (t.tv_nsec - t0->tv_nsec) / 1e6;
}

/* A list of rules in a log line: "198.18.0.0/24 id 1, ..." (at most 5). */
struct rlist {
	char buf[400];
	size_t n;
};

static void rlist_add(struct rlist *l, const struct xrl_rule_entry *e)
{
	size_t len = strlen(l->buf);
	char pfx[64];

	if (l->n++ >= 5)
		return;
	xrl_prefix_format(e, pfx, sizeof(pfx));
	snprintf(l->buf + len, sizeof(l->buf) - len, "%s%s id %u", len ? ", " : "", pfx, e->r.id);
}

static void rlist_say(char *out, size_t len, const char *what, const struct rlist *l)
{
	size_t o = strlen(out);

	if (!l->n)
		return;
	snprintf(out + o, len - o, "%s%zu %s (%s%s)", o ? "; " : "", l->n, what, l->buf,
		 l->n > 5 ? ", ..." : "");
}

static bool same_prefix(const struct xrl_rule_entry *a, const struct xrl_rule_entry *b)
{
	return a->family == b->family && a->prefix_len == b->prefix_len && !memcmp(a->addr, b->addr, 16);
}

/*
 * What a reload changed, in one line: rules added, removed and changed
 * (a changed rule is one the commit gave a new generation: fresh buckets;
 * or a new id). Quadratic, but only over the rules that differ once the
 * unchanged ones matched in order, which is most of a large set.
 */
static void log_rule_changes(const char *what, const struct xrl_rule_entry *o, size_t no,
			     const struct xrl_rule_entry *n, size_t nn)
{
	struct rlist added = {}, removed = {}, changed = {};
	unsigned char *seen = calloc(no + 1, 1);
	char line[1400] = "";
	size_t unchanged = 0;

	if (!seen)
		return;
	for (size_t i = 0; i < nn; i++) {
		size_t j = no;

		if (i < no && !seen[i] && same_prefix(&n[i], &o[i]))
			j = i;
		for (size_t k = 0; j == no && k < no; k++)
			if (!seen[k] && same_prefix(&n[i], &o[k]))
				j = k;
		if (j == no) {
			rlist_add(&added, &n[i]);
			continue;
		}
		seen[j] = 1;
		if (n[i].r.gen != o[j].r.gen || n[i].r.id != o[j].r.id)
			rlist_add(&changed, &n[i]);
		else
			unchanged++;
	}
	for (size_t k = 0; k < no; k++)
		if (!seen[k])
			rlist_add(&removed, &o[k]);
	free(seen);
	rlist_say(line, sizeof(line), "added", &added);
	rlist_say(line, sizeof(line), "removed", &removed);
	rlist_say(line, sizeof(line), "changed", &changed);
	if (line[0])
		xrl_log(XRL_LOG_INFO, "%s: rules: %s; %zu unchanged", what, line, unchanged);
	else
		xrl_log(XRL_LOG_INFO, "%s: rules: no change (%zu)", what, unchanged);
}

/* The files of the config's sets, each read and parsed whole (the line's
 * timeout on each element without one of its own). 0, or the first error,
 * said; nothing is applied then. *out: c->nsets lists (free them). */
int read_sets(const struct xrl_config *c, struct xrl_set_list **out, bool as_log)
{
	struct xrl_set_list *l = calloc(c->nsets + 1, sizeof(*l));
	int err = 0;

	*out = l;
	if (!l)
		return -ENOMEM;
	for (size_t i = 0; i < c->nsets && !err; i++) {
		err = xrl_set_file_read(c->sets[i].file, &l[i]);
		if (err) {
			if (as_log)
				xrl_log(XRL_LOG_ERR, "set %s: %s", c->sets[i].name, xrl_errmsg());
			else
				fprintf(stderr, "set %s (line %d): %s\n", c->sets[i].name, c->sets[i].line,
					xrl_errmsg());
			break;
		}
		for (size_t k = 0; k < l[i].n; k++)
			if (!l[i].v[k].timeout_ns)
				l[i].v[k].timeout_ns = c->sets[i].timeout_ns;
	}
	return err;
}

void free_sets(const struct xrl_config *c, struct xrl_set_list *l)
{
	for (size_t i = 0; l && i < c->nsets; i++)
		xrl_set_list_free(&l[i]);
	free(l);
}

/* Before any set is swapped (lock held): every set a rule takes is one of
 * the config's or exists already, and the config's new sets fit beside
 * the existing ones. Else the rule commit (or a set's creation) would
 * fail after some sets were swapped, and a refused reload would have
 * changed them. 0, or the error, said. */
static int sets_preflight(struct rld *r, const struct xrl_config *c)
{
	struct xrl_set_view *v = NULL;
	size_t n = 0, fresh = 0;
	int err;

	if ((err = xrl_sets_list(r->x, &v, &n)))
		return err;
	for (size_t i = 0; i < c->nsets; i++) {
		bool have = false;

		for (size_t k = 0; k < n && !have; k++)
			have = !strcmp(v[k].name, c->sets[i].name);
		fresh += !have;
	}
	if (n + fresh > XRL_MAX_SETS) {
		free(v);
		return xrl_fail(ENOSPC, "%zu new sets beside %zu: at most %d sets", fresh, n, XRL_MAX_SETS);
	}
	for (size_t i = 0; i < c->nrules && !err; i++) {
		bool have = false;

		if (!xrl_rule_is_set(&c->rules[i]))
			continue;
		for (size_t k = 0; k < c->nsets && !have; k++)
			have = !strcmp(c->sets[k].name, c->rules[i].set);
		for (size_t k = 0; k < n && !have; k++)
			have = !strcmp(v[k].name, c->rules[i].set);
		if (!have)
			err = xrl_fail(ENOENT, "line %d: rule add @%s: no set '%s' (a set line in the config, or xdp-rlctl set create %s)",
				       c->rule_line ? c->rule_line[i] : 0, c->rules[i].set, c->rules[i].set,
				       c->rules[i].set);
	}
	free(v);
	return err;
}

/* Load the config's sets (lock held): a missing one is created, each is
 * swapped whole. Before the rules: a new rule finds its set full. */
static int load_sets(struct rld *r, const struct xrl_config *c, struct xrl_set_list *l, const char *what)
{
	for (size_t i = 0; i < c->nsets; i++) {
		struct xrl_set_view v;
		double secs = 0;
		int err;

		if (xrl_set_get(r->x, c->sets[i].name, &v) == -ENOENT &&
		    (err = xrl_set_create(r->x, c->sets[i].name, c->sets[i].timeout_ns)))
			return err;
		if ((err = xrl_set_load(r->x, c->sets[i].name, &l[i], &secs)))
			return err;
		xrl_log(XRL_LOG_INFO, "%s: set %s: %zu prefixes from %s in %.3f s", what, c->sets[i].name, l[i].n,
			c->sets[i].file, secs);
	}
	return 0;
}

/* The daemon's sweep of expired set elements (the housekeeping tick). */
void sweep_sets(struct rld *r)
{
	int n;

	pthread_mutex_lock(&r->lock);
	if (xrl_lock(r->x) == 0) {
		n = xrl_sets_sweep(r->x);
		xrl_unlock(r->x);
		if (n > 0)
			xrl_log(XRL_LOG_DEBUG, "swept %d expired set elements", n);
	}
	pthread_mutex_unlock(&r->lock);
}

/* One transaction: the rule set and the mode; then the interfaces and the
 * heartbeat settings. On failure the running rule set is untouched. A
 * reload says what it changed, once. */
int apply(struct rld *r, struct xrl_config *c, const char *what)
{
	struct xrl_rule_entry *old = NULL, *cur = NULL;
	size_t nold = 0, ncur = 0;
	bool is_reload = strcmp(what, "start") != 0;
	enum xrl_mode old_mode = XRL_MODE_ENFORCE, mode = c->has_mode ? c->mode : XRL_MODE_ENFORCE;
	struct xrl_iface_cfg *ifs;
	struct timespec t0;
	size_t nifs, bans_set = 0, bans_lifted = 0;
	int err, ban_err = 0;

	struct xrl_set_list *sets = NULL;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	/* every set file read and parsed before anything is applied */
	if (read_sets(c, &sets, true)) {
		xrl_log(XRL_LOG_ERR, "%s: a set file is refused; the rules and sets in force are unchanged", what);
		free_sets(c, sets);
		return -EINVAL;
	}
	pthread_mutex_lock(&r->lock);
	err = xrl_lock(r->x);
	if (!err && is_reload) {
		/* what is in force now (xdp-rlctl changes included) */
		if (xrl_rules_get(r->x, &old, &nold))
			old = NULL, nold = 0;
		old_mode = xrl_mode_get(r->x);
	}
	if (!err)
		err = sets_preflight(r, c);
	if (!err)
		err = load_sets(r, c, sets, what);
	if (!err)
		err = xrl_rules_commit(r->x, c->rules, c->nrules);
	if (!err)
		xrl_mode_set(r->x, mode);
	/* the configuration's bans replace those of the last one; the
	 * operator's, the deciders' and the rules' are kept */
	if (!err && (ban_err = xrl_bans_apply_config(r->x, c->bans, c->nbans, &bans_set, &bans_lifted)))
		xrl_log(XRL_LOG_WARN, "%s: the configuration's bans: %s", what, xrl_errmsg());
	if (!err && is_reload && xrl_rules_get(r->x, &cur, &ncur))
		cur = NULL, ncur = 0;
	xrl_unlock(r->x);
	pthread_mutex_unlock(&r->lock);
	free_sets(c, sets);
	if (err) {
		xrl_log(XRL_LOG_ERR, "%s: %s; the rules in force are unchanged", what, xrl_errmsg());
		free(old);
		return err;
	}
	xrl_log(XRL_LOG_INFO, "%s: %zu rules, mode %s, applied in %.1f ms", what, c->nrules,
	     xrl_mode_name(mode), ms_since(&t0));
	if (c->nbans || bans_set || bans_lifted)
		xrl_log(XRL_LOG_INFO, "%s: %zu bans in the configuration, %zu set, %zu lifted%s", what,
			c->nbans, bans_set, bans_lifted, ban_err ? " (not all: see above)" : "");
	if (is_reload) {
		log_rule_changes(what, old, nold, cur, ncur);
		if (old_mode != mode)
			xrl_log(XRL_LOG_INFO, "%s: mode %s -> %s", what, xrl_mode_name(old_mode), xrl_mode_name(mode));
	}
	free(old);
	free(cur);
	fleet_rules(r);
	r->applied.at = time(NULL);
	xrl_sha256_hex(c->sha256, r->applied.sha256);

	__atomic_store_n(&r->hb.heartbeat_ms, pick(r->opt.heartbeat_ms, c->heartbeat_ms, DEFAULT_HEARTBEAT_MS),
			 __ATOMIC_RELEASE);
	__atomic_store_n(&r->hb.watchdog_ms, pick(r->opt.watchdog_ms, c->watchdog_ms, DEFAULT_WATCHDOG_MS),
			 __ATOMIC_RELEASE);
	if (r->hb.watchdog_ms && r->hb.watchdog_ms < 2 * r->hb.heartbeat_ms)
		xrl_log(XRL_LOG_WARN, "watchdog %ld ms is less than two heartbeats (%ld ms): it may fire while the daemon is alive",
		     r->hb.watchdog_ms, r->hb.heartbeat_ms);
	heartbeat(r);
	heartbeat_kick(r);

	if (set_ifaces(r, c, &ifs, &nifs) == 0) {
		char added[300] = "", removed[300] = "";

		for (size_t i = 0; i < r->ifs.n; i++) {
			bool keep = false;

			for (size_t j = 0; j < nifs; j++)
				keep |= !strcmp(r->ifs.cfg[i].name, ifs[j].name);
			if (!keep) {
				size_t l = strlen(removed);

				snprintf(removed + l, sizeof(removed) - l, " %s", r->ifs.cfg[i].name);
			}
			if (!keep && has_link_pin(r, r->ifs.cfg[i].name))
				unserve_iface(r, r->ifs.cfg[i].name);
		}
		for (size_t j = 0; j < nifs && is_reload; j++) {
			bool had = false;

			for (size_t i = 0; i < r->ifs.n; i++)
				had |= !strcmp(r->ifs.cfg[i].name, ifs[j].name);
			if (!had) {
				size_t l = strlen(added);

				snprintf(added + l, sizeof(added) - l, " %s", ifs[j].name);
			}
		}
		if (is_reload && (added[0] || removed[0]))
			xrl_log(XRL_LOG_INFO, "%s: interfaces:%s%s%s%s%s", what, added[0] ? " added" : "", added,
				added[0] && removed[0] ? ";" : "", removed[0] ? " removed" : "", removed);
		{
			/* a kept interface keeps its state (said once, adopted) */
			struct iface_state *st = calloc(nifs + 1, sizeof(*st));

			for (size_t j = 0; st && r->ifs.st && j < nifs; j++)
				for (size_t i = 0; i < r->ifs.n; i++)
					if (!strcmp(r->ifs.cfg[i].name, ifs[j].name)) {
						st[j] = r->ifs.st[i];
						/* a changed mode is tried again */
						if (r->ifs.cfg[i].mode != ifs[j].mode)
							st[j].mode_mismatch = false;
					}
			free(r->ifs.cfg);
			free(r->ifs.st);
			r->ifs.cfg = ifs;
			r->ifs.st = st;
			r->ifs.n = nifs;
		}
		serves_sync(r);
		for (size_t i = 0; r->ifs.st && i < r->ifs.n; i++)
			serve_iface(r, i);
	}
	if (!r->ifs.n)
		xrl_log(XRL_LOG_WARN, "no interface to serve: name one with 'interface IF' or --iface");
	count_attached(r);
	return 0;
}

void reload(struct rld *r, const char *why)
{
	struct xrl_fleet *fleet_next = NULL;
	bool builtin, fleet_changed = false, cs_changed;
	struct xrl_cs *cs_next = NULL;
	time_t last_applied = r->applied.at;
	struct xrl_config c;
	char names[300];

	xrl_log(XRL_LOG_INFO, "reloading %s (%s)", r->opt.config, why);
	sd_notifyf(0, "RELOADING=1\nMONOTONIC_USEC=%llu\nSTATUS=reloading %s",
		   (unsigned long long)(now_ms() * 1000), r->opt.config);
	if (read_config(r, &c, true, false, &builtin)) {
		r->stats.reload_failures++;
		xrl_log(XRL_LOG_ERR, "reload refused: the rules, mode and interfaces in force are unchanged");
		sd_notify(0, "READY=1\nSTATUS=reload refused (invalid file); the rules in force are unchanged");
		return;
	}
	check_pins(r);
	/* a changed crowdsec line: its new follower first (its key read),
	 * or the reload is refused as for the fleet lines */
	cs_changed = crowdsec_changed(r, &c);
	if (cs_changed && crowdsec_open(r, &c, &cs_next)) {
		r->stats.reload_failures++;
		xrl_log(XRL_LOG_ERR, "reload refused: the rules, mode, interfaces and CrowdSec follower in force are unchanged");
		sd_notify(0, "READY=1\nSTATUS=reload refused (crowdsec line); the rules in force are unchanged");
		xrl_config_free(&c);
		return;
	}
	if (fleet_reload_prepare(r, &c, &fleet_next, &fleet_changed)) {
		r->stats.reload_failures++;
		xrl_log(XRL_LOG_ERR, "reload refused: the rules, mode, interfaces and fleet client in force are unchanged");
		sd_notify(0, "READY=1\nSTATUS=reload refused (fleet lines); the rules in force are unchanged");
		xrl_cs_free(cs_next);
		cs_next = NULL;
	} else if (apply(r, &c, "reload")) {
		r->stats.reload_failures++;
		if (fleet_next)
			xrl_fleet_free(fleet_next);
		xrl_cs_free(cs_next);
		cs_next = NULL;
		sd_notify(0, "READY=1\nSTATUS=reload failed; the rules in force are unchanged");
	} else if (ifaces_failed(r, names, sizeof(names))) {
		/* The rules and mode are in force, but an interface of the
		 * file is not protected: not an applied reload. Retried every
		 * second (check_pins); the log said why. */
		r->stats.reload_failures++;
		r->applied.at = last_applied;
		metrics_set(r, c.metrics, "reload");
		if (fleet_changed)
			fleet_reload_commit(r, &c, fleet_next);
		if (cs_changed)
			crowdsec_reload_commit(r, &c, cs_next);
		xrl_log(XRL_LOG_ERR, "reload failed: the rules and mode are applied, but interface(s)%s could not be attached (see above); attaching again every second",
			names);
		sd_notifyf(0, "READY=1\nSTATUS=reload failed: interface(s)%s not attached; %zu rules, %u interface(s) attached",
			   names, c.nrules, r->stats.interfaces_attached);
	} else {
		r->stats.reloads++;
		metrics_set(r, c.metrics, "reload");
		if (fleet_changed)
			fleet_reload_commit(r, &c, fleet_next);
		if (cs_changed)
			crowdsec_reload_commit(r, &c, cs_next);
		sd_notifyf(0, "READY=1\nSTATUS=%zu rules, %u interface(s) attached", c.nrules,
			   r->stats.interfaces_attached);
	}
	xrl_config_free(&c);
}

int watch_config(struct rld *r, int ifd)
{
	char dir[PATH_MAX];

	snprintf(dir, sizeof(dir), "%s", r->opt.config);
	return inotify_add_watch(ifd, dirname(dir),
				 IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE | IN_DELETE | IN_MOVED_FROM);
}

bool config_event(struct rld *r, int ifd)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	char base[PATH_MAX];
	const char *name;
	bool hit = false;
	ssize_t n;

	snprintf(base, sizeof(base), "%s", r->opt.config);
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
