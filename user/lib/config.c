// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "grammar.h"

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

int xrl_hostport_parse(const char *s, char *host, size_t hlen, int *port)
{
	const char *colon;
	__u64 p;

	if (s[0] == '[') {
		const char *rb = strchr(s, ']');

		if (!rb || rb[1] != ':' || (size_t)(rb - s - 1) >= hlen)
			return -EINVAL;
		memcpy(host, s + 1, rb - s - 1);
		host[rb - s - 1] = '\0';
		colon = rb + 1;
	} else {
		colon = strrchr(s, ':');
		if (!colon || (size_t)(colon - s) >= hlen || colon == s)
			return -EINVAL;
		memcpy(host, s, colon - s);
		host[colon - s] = '\0';
	}
	if (xrl_dec_parse(colon + 1, 1, 65535, &p))
		return -EINVAL;
	*port = p;
	return 0;
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
		struct xrl_rule_entry *nr = realloc(c->rules, (c->nrules + 1) * sizeof(*nr));
		int *nl = realloc(c->rule_line, (c->nrules + 1) * sizeof(*nl));
		int *nc = nl ? realloc(c->rule_col, (c->nrules + 1) * sizeof(*nc)) : NULL;

		if (nr)
			c->rules = nr;
		if (nl)
			c->rule_line = nl;
		if (nc)
			c->rule_col = nc;
		if (!nr || !nl || !nc)
			return -ENOMEM;
		c->rules[c->nrules] = cmd.rule;
		c->rule_line[c->nrules] = line;
		c->rule_col[c->nrules++] = cols[2];
		return 0;
	}
	case XRL_CMD_MODE_SET:
		c->has_mode = true;
		c->mode = cmd.mode;
		return 0;
	case XRL_CMD_INTERFACE: {
		struct xrl_iface_cfg *ni;

		for (size_t i = 0; i < c->nifaces; i++)
			if (!strcmp(c->ifaces[i].name, cmd.ifname))
				return add_err(errs, nerrs, line, cols[1], "interface %s given twice",
					       cmd.ifname) ?: 0;
		ni = realloc(c->ifaces, (c->nifaces + 1) * sizeof(*ni));
		if (!ni)
			return -ENOMEM;
		c->ifaces = ni;
		memset(&ni[c->nifaces], 0, sizeof(*ni));
		strcpy(ni[c->nifaces].name, cmd.ifname);
		ni[c->nifaces++].mode = cmd.xdp_mode;
		return 0;
	}
	case XRL_CMD_HEARTBEAT:
		c->heartbeat_ms = cmd.ms;
		return 0;
	case XRL_CMD_WATCHDOG:
		c->watchdog_ms = cmd.ms;
		return 0;
	case XRL_CMD_METRICS:
		strcpy(c->metrics, cmd.hostport);
		return 0;
	default:
		/* the table lets only configuration commands through */
		return add_err(errs, nerrs, line, cols[0], "'%s' is not a configuration command",
			       argv[0]) ?: 0;
	}
}

int xrl_config_parse_text(const char *path, const char *text, struct xrl_config *c,
			  struct xrl_config_err **errs, size_t *nerrs)
{
	char *copy = strdup(text), *line, *save = NULL;
	int lineno = 0, err = 0;
	size_t bad;

	(void)path;
	memset(c, 0, sizeof(*c));
	c->heartbeat_ms = c->watchdog_ms = -1;
	*errs = NULL;
	*nerrs = 0;
	if (!copy)
		return -ENOMEM;
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
	/* the whole set: duplicate prefixes and ids */
	if (!*nerrs && xrl_rules_validate(c->rules, c->nrules, &bad))
		add_err(errs, nerrs, c->rule_line[bad], c->rule_col[bad], "%s", xrl_errmsg());
	return *nerrs ? -EINVAL : 0;
}

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
	memset(c, 0, sizeof(*c));
}
