// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * libxrl, the deciders: the CrowdSec Local API follower (crowdsec.h). One
 * pull is one bounded GET (http.c), one strict parse (cs_parse.c) and the
 * bans written (cs_apply.c). The stats are read by another thread (the
 * metrics) under the follower's own lock, which is never held across the
 * network.
 */
#include "deciders/cs_int.h"
#include "deciders/http.h"
#include "base/log.h"
#include "base/paths.h"
#include "base/url.h"
#include "maps/bans.h"
#include "maps/xrl.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

const char *const xrl_cs_state_names[XRL_CS_NSTATES] = {
	"starting", "ok", "unreachable", "refused", "bad-answer",
};

struct xrl_cs {
	struct xrl *x;
	char host[64];
	int port;
	long poll_ms, timeout_ms;
	size_t max_body;	/* bytes */
	int backoff;		/* the poll doubled this many times: answers over max_body in a row */
	char header[160];	/* "X-Api-Key: KEY" */
	bool full;		/* the next pull is a startup one */
	bool stop;		/* atomic: xrl_cs_abort() */
	pthread_mutex_t lock;	/* guards st */
	pthread_mutex_t *apply;	/* held while writing bans; NULL: none */
	struct xrl_cs_stats st;
};

static double mono_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static const struct xrl_path_rules key_rules = {
	.what = "CrowdSec bouncer key file",
	.owner_why = "its owner could replace the key",
	.owner_fix = "chown root it",
	.write_why = "whoever can write it could replace the key",
	.write_fix = "chmod 0600 it",
};

/* The key: one line of printable ASCII without spaces, at most 128 bytes. */
static int read_key(const char *path, char *key, size_t len)
{
	char line[256], *nl;
	struct stat sb;
	ssize_t n;
	int fd;

	/* O_NONBLOCK: a FIFO in its place must not stall a start or a reload */
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return xrl_fail(errno, "cannot read the CrowdSec key %s: %s", path, strerror(errno));
	if (fstat(fd, &sb) || !S_ISREG(sb.st_mode)) {
		close(fd);
		return xrl_fail(EINVAL, "the CrowdSec key %s is not a regular file", path);
	}
	if (sb.st_mode & 0004) {
		close(fd);
		return xrl_fail(EPERM, "the CrowdSec key %s is readable by everyone: chmod o-r it", path);
	}
	if (xrl_path_safe(path, &sb, &key_rules)) {
		close(fd);
		return -EPERM;
	}
	n = read(fd, line, sizeof(line) - 1);
	close(fd);
	if (n < 0)
		return xrl_fail(errno, "cannot read the CrowdSec key %s: %s", path, strerror(errno));
	line[n] = '\0';
	if ((nl = strchr(line, '\n')))
		*nl = '\0';
	if (!line[0])
		return xrl_fail(EINVAL, "the CrowdSec key %s is empty", path);
	for (char *c = line; *c; c++)
		if (*c <= ' ' || *c > '~')
			return xrl_fail(EINVAL, "the CrowdSec key %s holds more than one word of printable ASCII on its first line", path);
	if (strlen(line) >= len)
		return xrl_fail(EINVAL, "the CrowdSec key %s is longer than %zu bytes", path, len - 1);
	strcpy(key, line);
	explicit_bzero(line, sizeof(line));
	return 0;
}

int xrl_cs_key_check(const char *path)
{
	char key[129];
	int err = read_key(path, key, sizeof(key));

	explicit_bzero(key, sizeof(key));
	return err;
}

int xrl_cs_key_same(const struct xrl_cs *c, const char *path)
{
	char key[129], h[sizeof(c->header)];
	int err = read_key(path, key, sizeof(key)), same;

	if (err)
		return err;
	snprintf(h, sizeof(h), "X-Api-Key: %s", key);
	same = !strcmp(h, c->header);
	explicit_bzero(key, sizeof(key));
	explicit_bzero(h, sizeof(h));
	return same;
}

int xrl_cs_new(struct xrl *x, const struct xrl_crowdsec_settings *s, struct xrl_cs **out)
{
	struct xrl_cs *c = calloc(1, sizeof(*c));
	char why[160], key[129];
	int err;

	if (!c)
		return xrl_fail(ENOMEM, "out of memory");
	if (xrl_http_url_parse(s->url, c->host, sizeof(c->host), &c->port, why, sizeof(why))) {
		free(c);
		return xrl_fail(EINVAL, "crowdsec %s: %s", s->url, why);
	}
	err = read_key(s->key_file, key, sizeof(key));
	if (err) {
		free(c);
		return err;
	}
	snprintf(c->header, sizeof(c->header), "X-Api-Key: %s", key);
	explicit_bzero(key, sizeof(key));
	c->x = x;
	c->poll_ms = s->poll_ms ?: XRL_CS_POLL_MS;
	c->timeout_ms = s->timeout_ms ?: XRL_CS_TIMEOUT_MS;
	c->max_body = s->max_body_mb ? (size_t)s->max_body_mb << 20 : XRL_CS_MAX_BODY;
	/* a pull never outlasts the period: the next one is due */
	if (c->timeout_ms > c->poll_ms)
		c->timeout_ms = c->poll_ms;
	c->full = true;
	pthread_mutex_init(&c->lock, NULL);
	*out = c;
	return 0;
}

void xrl_cs_set_lock(struct xrl_cs *c, pthread_mutex_t *m)
{
	c->apply = m;
}

long xrl_cs_poll_ms(const struct xrl_cs *c)
{
	return c->poll_ms;
}

long xrl_cs_next_ms(const struct xrl_cs *c)
{
	long m = c->poll_ms << c->backoff;

	return m > 3600000 ? (c->poll_ms > 3600000 ? c->poll_ms : 3600000) : m;
}

void xrl_cs_abort(struct xrl_cs *c, bool stop)
{
	__atomic_store_n(&c->stop, stop, __ATOMIC_RELEASE);
}

void xrl_cs_stats_get(struct xrl_cs *c, struct xrl_cs_stats *st)
{
	pthread_mutex_lock(&c->lock);
	*st = c->st;
	pthread_mutex_unlock(&c->lock);
}

void xrl_cs_free(struct xrl_cs *c)
{
	if (!c)
		return;
	pthread_mutex_destroy(&c->lock);
	explicit_bzero(c->header, sizeof(c->header));
	free(c);
}

static int failed(struct xrl_cs *c, enum xrl_cs_state state, int status, int err)
{
	pthread_mutex_lock(&c->lock);
	c->st.state = state;
	c->st.pulls_failed++;
	c->st.errors[state]++;
	c->st.last_status = status;
	snprintf(c->st.last_error, sizeof(c->st.last_error), "%s", xrl_errmsg());
	pthread_mutex_unlock(&c->lock);
	/* the LAPI's cursor moved on, or may have: only a full pull says
	 * what was missed */
	c->full = true;
	return err;
}

int xrl_cs_pull(struct xrl_cs *c)
{
	struct xrl_http_req q = {
		.host = c->host, .port = c->port, .header = c->header, .timeout_ms = c->timeout_ms,
		.max_body = c->max_body, .stop = &c->stop,
		.path = c->full ? "/v1/decisions/stream?startup=true" : "/v1/decisions/stream?startup=false",
	};
	unsigned long long applied = 0, removed = 0, refused = 0, kept = 0, lifted = 0, past = 0;
	struct xrl_http_resp r;
	struct xrl_cs_answer a;
	bool full = c->full;
	int err, over = c->backoff;

	c->backoff = 0;	/* only answers over the cap in a row back off */
	err = xrl_http_get(&q, &r);
	if (err == -EMSGSIZE) {
		/* over the cap: said with the cap and what raises it, and the
		 * same full pull not asked for again at every poll */
		char why[sizeof(c->st.last_error)];

		snprintf(why, sizeof(why), "%s", xrl_errmsg());
		c->backoff = (1L << over) < XRL_CS_BACKOFF_MAX ? over + 1 : over;
		xrl_fail(EMSGSIZE, "%s (max-body %zu MiB: raise it on the crowdsec line); next pull in %ld ms",
			 why, c->max_body >> 20, xrl_cs_next_ms(c));
		return failed(c, XRL_CS_BAD_ANSWER, 0, err);
	}
	if (err == -EPROTO)
		return failed(c, XRL_CS_BAD_ANSWER, 0, err);
	if (err)
		return failed(c, XRL_CS_UNREACHABLE, 0, err);
	if (r.status != 200) {
		/* the LAPI's message, if it is one: {"message":"access forbidden"} */
		err = xrl_fail(EACCES, "the Local API answered HTTP %d%s", r.status,
			       r.status == 403 ? " (is the bouncer key right?)" : "");
		free(r.body);
		return failed(c, XRL_CS_REFUSED, r.status, err);
	}
	err = xrl_cs_parse(r.body, r.len, &a);
	free(r.body);
	if (err)
		return failed(c, XRL_CS_BAD_ANSWER, 200, err);
	/* the daemon's other writers of maps, then the pin-directory lock of
	 * every writer (xdp-rlctl's ban commands) */
	if (c->apply)
		pthread_mutex_lock(c->apply);
	err = xrl_lock(c->x);
	if (err) {
		if (c->apply)
			pthread_mutex_unlock(c->apply);
		xrl_cs_answer_free(&a);
		return failed(c, c->st.state, 200, err);	/* the pin directory busy: try again */
	}
	/* one sweep for the whole answer: each ban below is then one lookup
	 * and one update, not a walk of both tables */
	xrl_bans_sweep(c->x, NULL, NULL, NULL);
	for (size_t i = 0; i < a.n; i++) {
		const struct xrl_cs_decision *d = &a.v[i];

		if (d->deleted) {
			int e = xrl__cs_unban(c->x, d);

			removed += e == 0;
			kept += e == 1;
			continue;
		}
		if (d->ms <= 0) {	/* already past: nothing to set */
			past++;
			continue;
		}
		err = xrl__cs_ban(c->x, d);
		applied += err == 0;
		kept += err == 1;
		refused += err < 0;
	}
	if (full)
		xrl__cs_reconcile(c->x, a.v, a.n, &lifted);
	xrl_unlock(c->x);
	if (c->apply)
		pthread_mutex_unlock(c->apply);
	pthread_mutex_lock(&c->lock);
	c->st.state = XRL_CS_OK;
	c->st.pulls_ok++;
	c->st.last_ok_ms = mono_ms();
	c->st.last_status = 200;
	c->st.applied += applied;
	c->st.removed += removed + lifted;
	c->st.refused += refused;
	c->st.kept += kept;
	c->st.expired_skipped += past;
	c->st.ignored_type += a.ignored_type;
	c->st.ignored_scope += a.ignored_scope;
	c->st.invalid += a.invalid;
	if (a.invalid)
		snprintf(c->st.last_error, sizeof(c->st.last_error), "%s", a.why);
	pthread_mutex_unlock(&c->lock);
	xrl_cs_answer_free(&a);
	c->full = false;
	return 0;
}
