// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include "text/config.h"
#include "base/paths.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include "text/grammar.h"
#include "base/log.h"
#include "base/sha256.h"
#include "base/url.h"

const char xrl_default_config[] =
	"# built-in default rule set: every source, 1000 packets/s, burst 2000\n"
	"rule add 0.0.0.0/0 rate 1000/s burst 2000 id 1\n"
	"rule add ::/0 rate 1000/s burst 2000 id 2\n";

__attribute__((format(printf, 5, 6)))
static int add_err(struct xrl_config_err **errs, size_t *n, int line, int col,
		   const char *fmt, ...)
{
	struct xrl_config_err *e = realloc(*errs, (*n + 1) * sizeof(**errs));
	va_list ap;

	if (!e)
		return -ENOMEM;
	*errs = e;
	e += (*n)++;
	e->line = line;
	e->col = col;
	va_start(ap, fmt);
	if (vsnprintf(e->msg, sizeof(e->msg), fmt, ap) >= (int)sizeof(e->msg))
		xrl_utf8_trim(e->msg);
	va_end(ap);
	return 0;
}

/* A line that may be written once, written again: an error naming both
 * lines (which one wins would be a guess about what the operator meant). */
static int twice(struct xrl_config_err **errs, size_t *nerrs, int line, int col,
		 const char *what, int first)
{
	return add_err(errs, nerrs, line, col, "'%s' given twice (first on line %d): write it once",
		       what, first) ?: 0;
}

static int parse_line(char *text, int line, struct xrl_config *c,
		      struct xrl_config_err **errs, size_t *nerrs)
{
	char *argv[XRL_MAX_WORDS + 1];
	int cols[XRL_MAX_WORDS + 1], argc;
	struct xrl_parse_err pe;
	struct xrl_cmd cmd;

	argc = xrl_split_words(text, argv, cols, XRL_MAX_WORDS);
	if (argc < 0)
		return add_err(errs, nerrs, line, 1, "too many words on one line") ?: 0;
	if (!argc)
		return 0;

	if (xrl_cmd_parse(argc, argv, XRL_IN_CONFIG, &cmd, &pe)) {
		int i = pe.argi < 0 ? 0 : pe.argi > argc ? argc : pe.argi;

		return add_err(errs, nerrs, line, cols[i], "%s", pe.msg) ?: 0;
	}
	switch (cmd.kind) {
	case XRL_CMD_RULE_ADD: {
		size_t n = c->nrules;

		/* grown by doubling (16, 32, ...: a full array is a power of
		 * two), so that a file of many rules is not copied once per
		 * line (quadratic: minutes for 16,384 rules under ASan) */
		if (n < 16 ? n == 0 : !(n & (n - 1))) {
			size_t cap = n < 16 ? 16 : 2 * n;
			struct xrl_rule_entry *nr = realloc(c->rules, cap * sizeof(*nr));
			int *nl = realloc(c->rule_line, cap * sizeof(*nl));
			int *nc = nl ? realloc(c->rule_col, cap * sizeof(*nc)) : NULL;

			if (nr)
				c->rules = nr;
			if (nl)
				c->rule_line = nl;
			if (nc)
				c->rule_col = nc;
			if (!nr || !nl || !nc)
				return -ENOMEM;
		}
		c->rules[c->nrules] = cmd.rule;
		c->rule_line[c->nrules] = line;
		c->rule_col[c->nrules++] = cols[2];
		return 0;
	}
	case XRL_CMD_BAN_ADD: {
		struct xrl_ban_spec *nb;
		int *nl;

		if (cmd.rule.r.scope == XRL_SCOPE_FLEET)
			return add_err(errs, nerrs, line, cols[argc - 1],
				       "'scope fleet' is xdp-rlctl's: a ban of the configuration is this host's") ?: 0;
		if (cmd.ban.who[0])
			return add_err(errs, nerrs, line, cols[argc - 1],
				       "'by' is xdp-rlctl's: a ban of the configuration is the configuration's") ?: 0;
		for (size_t i = 0; i < c->nbans; i++)
			if (c->bans[i].family == cmd.ban.family &&
			    c->bans[i].prefix_len == cmd.ban.prefix_len &&
			    !memcmp(c->bans[i].addr, cmd.ban.addr, sizeof(cmd.ban.addr)))
				return add_err(errs, nerrs, line, cols[2],
					       "%s banned twice (first on line %d): write it once", argv[2],
					       c->ban_line[i]) ?: 0;
		nb = realloc(c->bans, (c->nbans + 1) * sizeof(*nb));
		if (nb)
			c->bans = nb;
		nl = realloc(c->ban_line, (c->nbans + 1) * sizeof(*nl));
		if (nl)
			c->ban_line = nl;
		if (!nb || !nl)
			return -ENOMEM;
		cmd.ban.origin = XRL_BAN_CONFIG;
		nb[c->nbans] = cmd.ban;
		nl[c->nbans++] = line;
		return 0;
	}
	case XRL_CMD_SET_FILE: {
		struct xrl_set_cfg *ns;

		for (size_t i = 0; i < c->nsets; i++)
			if (!strcmp(c->sets[i].name, cmd.set.name))
				return add_err(errs, nerrs, line, cols[1],
					       "set %s given twice (first on line %d): one file a set",
					       cmd.set.name, c->sets[i].line) ?: 0;
		ns = realloc(c->sets, (c->nsets + 1) * sizeof(*ns));
		if (!ns)
			return -ENOMEM;
		c->sets = ns;
		memset(&ns[c->nsets], 0, sizeof(*ns));
		strcpy(ns[c->nsets].name, cmd.set.name);
		strcpy(ns[c->nsets].file, cmd.set.file);
		ns[c->nsets].timeout_ns = cmd.set.timeout_ns;
		ns[c->nsets++].line = line;
		return 0;
	}
	case XRL_CMD_MODE_SET:
		if (c->has_mode)
			return twice(errs, nerrs, line, cols[0], "mode set", c->mode_line);
		c->has_mode = true;
		c->mode = cmd.mode_set.mode;
		c->mode_line = line;
		return 0;
	case XRL_CMD_INTERFACE: {
		struct xrl_iface_cfg *ni;

		int *nl;

		for (size_t i = 0; i < c->nifaces; i++)
			if (!strcmp(c->ifaces[i].name, cmd.attach.ifname))
				return add_err(errs, nerrs, line, cols[1],
					       "interface %s given twice (first on line %d): write it once",
					       cmd.attach.ifname, c->iface_line[i]) ?: 0;
		ni = realloc(c->ifaces, (c->nifaces + 1) * sizeof(*ni));
		if (ni)
			c->ifaces = ni;
		nl = realloc(c->iface_line, (c->nifaces + 1) * sizeof(*nl));
		if (nl)
			c->iface_line = nl;
		if (!ni || !nl)
			return -ENOMEM;
		nl[c->nifaces] = line;
		memset(&ni[c->nifaces], 0, sizeof(*ni));
		strcpy(ni[c->nifaces].name, cmd.attach.ifname);
		ni[c->nifaces].hook = cmd.attach.hook;
		ni[c->nifaces].tc_first = cmd.attach.tc_first;
		ni[c->nifaces++].mode = cmd.attach.xdp_mode;
		return 0;
	}
	case XRL_CMD_HEARTBEAT:
		if (c->heartbeat_line)
			return twice(errs, nerrs, line, cols[0], "heartbeat", c->heartbeat_line);
		c->heartbeat_ms = cmd.ms.ms;
		c->heartbeat_line = line;
		return 0;
	case XRL_CMD_WATCHDOG:
		if (c->watchdog_line)
			return twice(errs, nerrs, line, cols[0], "watchdog", c->watchdog_line);
		c->watchdog_ms = cmd.ms.ms;
		c->watchdog_line = line;
		return 0;
	case XRL_CMD_METRICS:
		if (c->metrics_line)
			return twice(errs, nerrs, line, cols[0], "metrics", c->metrics_line);
		strcpy(c->metrics, cmd.metrics.hostport);
		c->metrics_line = line;
		return 0;
	case XRL_CMD_FLEET_REDIS:
		if (c->fleet_redis_line)
			return twice(errs, nerrs, line, cols[0], "fleet redis", c->fleet_redis_line);
		/* what the daemon's client would refuse at start or reload */
		if (xrl_redis_addrs_check(cmd.fleet.redis))
			return add_err(errs, nerrs, line, cols[2],
				       "invalid Redis address list '%s' (HOST:PORT[,HOST:PORT...], HOST an IPv4 or IPv6 address, not a name; port 1 .. 65535)",
				       cmd.fleet.redis) ?: 0;
		/* the line's settings; host and auth are lines of their own */
		strcpy(c->fleet.redis, cmd.fleet.redis);
		c->fleet.cluster = cmd.fleet.cluster;
		c->fleet.sync_ms = cmd.fleet.sync_ms;
		c->fleet.timeout_ms = cmd.fleet.timeout_ms;
		c->fleet.hosts = cmd.fleet.hosts;
		c->fleet_redis_line = line;
		return 0;
	case XRL_CMD_FLEET_HOST:
		if (c->fleet_host_line)
			return twice(errs, nerrs, line, cols[0], "fleet host", c->fleet_host_line);
		strcpy(c->fleet.host, cmd.fleet.host);
		c->fleet_host_line = line;
		return 0;
	case XRL_CMD_FLEET_AUTH:
		if (c->fleet_auth_line)
			return twice(errs, nerrs, line, cols[0], "fleet auth", c->fleet_auth_line);
		strcpy(c->fleet.auth_file, cmd.fleet.auth_file);
		c->fleet_auth_line = line;
		return 0;
	case XRL_CMD_CROWDSEC: {
		char host[64], why[160];
		int port;

		if (c->crowdsec_line)
			return twice(errs, nerrs, line, cols[0], "crowdsec", c->crowdsec_line);
		/* what the daemon's follower would refuse at start or reload */
		if (xrl_http_url_parse(cmd.crowdsec.url, host, sizeof(host), &port, why, sizeof(why)))
			return add_err(errs, nerrs, line, cols[1], "invalid Local API URL '%s': %s",
				       cmd.crowdsec.url, why) ?: 0;
		c->crowdsec = cmd.crowdsec;
		c->crowdsec_line = line;
		return 0;
	}
	default:
		/* the table lets only configuration commands through */
		return add_err(errs, nerrs, line, cols[0], "'%s' is not a configuration command",
			       argv[0]) ?: 0;
	}
}

struct set_ctx {
	struct xrl_config *c;
	struct xrl_config_err **errs;
	size_t *nerrs;
	int err;
};

static void set_err(void *ctx, size_t bad, long first, const char *msg)
{
	struct set_ctx *sc = ctx;
	size_t i = bad < sc->c->nrules ? bad : sc->c->nrules - 1;

	if (sc->err || *sc->nerrs >= XRL_CONFIG_MAX_ERRORS)
		return;
	if (first >= 0)
		sc->err = add_err(sc->errs, sc->nerrs, sc->c->rule_line[i], sc->c->rule_col[i],
				  "%s (first on line %d)", msg, sc->c->rule_line[first]);
	else
		sc->err = add_err(sc->errs, sc->nerrs, sc->c->rule_line[i], sc->c->rule_col[i], "%s", msg);
}

int xrl_config_parse_text(const char *path, const char *text, struct xrl_config *c,
			  struct xrl_config_err **errs, size_t *nerrs)
{
	char *copy = strdup(text), *line, *save = NULL;
	int lineno = 0, err = 0;

	(void)path;
	memset(c, 0, sizeof(*c));
	c->heartbeat_ms = c->watchdog_ms = -1;
	*errs = NULL;
	*nerrs = 0;
	if (!copy)
		return -ENOMEM;
	xrl_sha256(text, strlen(text), c->sha256);
	/* strtok_r would skip empty lines and break the numbering */
	for (line = copy; line && !err; line = save) {
		save = strchr(line, '\n');
		if (save)
			*save++ = '\0';
		err = parse_line(line, ++lineno, c, errs, nerrs);
		if (!err && *nerrs >= XRL_CONFIG_MAX_ERRORS) {
			err = add_err(errs, nerrs, lineno, 1, "too many errors (%d); not reading further",
				      XRL_CONFIG_MAX_ERRORS) ?: -EINVAL;
			break;
		}
	}
	free(copy);
	if (err)
		return err;
	/* the whole set: every duplicate prefix and id, each on its line,
	 * beside the errors of single lines */
	{
		struct set_ctx sc = { c, errs, nerrs, 0 };

		xrl_rules_check_all(c->rules, c->nrules, set_err, &sc);
		if (sc.err)
			return sc.err;
	}
	return *nerrs ? -EINVAL : 0;
}

/* The rules a file holds are only as trusted as who may write it: another
 * user who can rewrite it, or swap it, sets the daemon's rules and mode. */
static const struct xrl_path_rules config_rules = {
	.what = "configuration file",
	.owner_why = "its owner could rewrite the rules and the mode, and they would be applied",
	.owner_fix = "chown root it",
	.write_why = "whoever can write it could rewrite the rules and the mode, and they would be applied",
	.write_fix = "chmod go-w it",
};

int xrl_config_load(const char *path, struct xrl_config *c,
		    struct xrl_config_err **errs, size_t *nerrs)
{
	char *text = NULL;
	size_t len = 0;
	struct stat st;
	ssize_t r;
	int fd, err = 0;

	memset(c, 0, sizeof(*c));
	*errs = NULL;
	*nerrs = 0;
	/* O_NONBLOCK: a FIFO put in the file's place must not stall the reader */
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		err = -errno;
	} else if (!S_ISREG(st.st_mode)) {
		err = add_err(errs, nerrs, 1, 1, "not a regular file") ?: -EINVAL;
	} else if (xrl_path_safe(path, &st, &config_rules)) {
		/* another user could have written it: refused as a whole */
		err = add_err(errs, nerrs, 1, 1, "%s", xrl_errmsg()) ?: -EPERM;
	} else if (st.st_size > XRL_CONFIG_MAX_BYTES) {
		err = add_err(errs, nerrs, 1, 1, "the file is %lld bytes; the limit is %d bytes",
			      (long long)st.st_size, XRL_CONFIG_MAX_BYTES) ?: -EINVAL;
	} else if (!(text = malloc(XRL_CONFIG_MAX_BYTES + 2))) {
		err = -ENOMEM;
	}
	/* read at most one byte past the limit: a file that grows after the
	 * fstat is caught too */
	while (!err && len <= XRL_CONFIG_MAX_BYTES &&
	       (r = read(fd, text + len, XRL_CONFIG_MAX_BYTES + 1 - len)) != 0) {
		if (r < 0 && errno != EINTR)
			err = -errno;
		else if (r > 0)
			len += r;
	}
	close(fd);
	if (!err && len > XRL_CONFIG_MAX_BYTES)
		err = add_err(errs, nerrs, 1, 1, "the file is over the limit of %d bytes",
			      XRL_CONFIG_MAX_BYTES) ?: -EINVAL;
	if (!err)
		text[len] = '\0';
	if (!err && memchr(text, '\0', len))
		err = add_err(errs, nerrs, 1, 1, "not a text file (it holds a NUL byte)") ?: -EINVAL;
	/* What a failed write (a full disk, truncate-then-write) leaves, not a
	 * decision: a file meant to hold no command says so with a comment. */
	if (!err && !text[strspn(text, " \t\r\n")])
		err = add_err(errs, nerrs, 1, 1, "the file is empty: refused (a file with no rule says so in a comment)") ?: -EINVAL;
	if (!err)
		err = xrl_config_parse_text(path, text, c, errs, nerrs);
	free(text);
	return err;
}

void xrl_config_free(struct xrl_config *c)
{
	free(c->rules);
	free(c->rule_line);
	free(c->rule_col);
	free(c->ifaces);
	free(c->iface_line);
	free(c->bans);
	free(c->ban_line);
	free(c->sets);
	memset(c, 0, sizeof(*c));
}
