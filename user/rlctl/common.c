// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xdp-rlctl: what every command file shares — the options, the messages on
 * stderr (or JSON under -j), the library's warnings held until the output,
 * the readers' and writers' way of opening the pins, and the lock
 * discipline. main.c dispatches to the command files; they and main.c use
 * this file, which uses neither.
 */
#include "rlctl.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct rlctl_opts opt;
struct jw jw;

/* One message on stderr: {"error": ...} under -j, else "Error: ...". */
static void p_msg(const char *kind, const char *label, const char *fmt, va_list ap)
{
	char msg[600];

	if (vsnprintf(msg, sizeof(msg), fmt, ap) >= (int)sizeof(msg))
		xrl_utf8_trim(msg);	/* never cut a character in two */
	if (opt.json) {
		struct jw e;

		jw_init(&e, stderr, false);
		jw_obj_start(&e);
		jw_kstr(&e, kind, msg);
		jw_obj_end(&e);
		jw_finish(&e);
	} else {
		fprintf(stderr, "%s: %s\n", label, msg);
	}
}

__attribute__((format(printf, 1, 2)))
void p_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	p_msg("error", "Error", fmt, ap);
	va_end(ap);
}

__attribute__((format(printf, 1, 2)))
void p_note(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	p_msg("note", "Note", fmt, ap);
	va_end(ap);
}

/* Warnings of libxrl come while the lock is held: kept, printed after.
 * Debug lines (libbpf's, with XRL_DEBUG=1) go out at once. */
static char warnings[1024];

void cli_log(enum xrl_log_level level, const char *msg)
{
	size_t l = strlen(warnings);

	if (level > XRL_LOG_WARN) {
		fprintf(stderr, "%s\n", msg);
		return;
	}
	snprintf(warnings + l, sizeof(warnings) - l, "%s%s", l ? "\n" : "", msg);
}

void print_warnings(void)
{
	char *line = warnings, *nl;

	while (*line) {
		nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		if (opt.json) {
			struct jw e;

			jw_init(&e, stderr, false);
			jw_obj_start(&e);
			jw_kstr(&e, "warning", line);
			jw_obj_end(&e);
			jw_finish(&e);
		} else {
			fprintf(stderr, "Warning: %s\n", line);
		}
		if (!nl)
			break;
		line = nl + 1;
	}
	warnings[0] = '\0';
}


/* Readers (status, rule list, stats, show, top) take no lock: each map
 * element is read atomically, and a reader stuck on a full pipe must not
 * stall the daemon or a writer. */
int open_reader(struct xrl **x)
{
	struct xrl_open_opts o = { .pin_dir = opt.pin_dir, .no_lock = true };

	if (xrl_open(&o, x)) {
		p_err("%s", xrl_errmsg());
		return -1;
	}
	return 0;
}

/* Writers return from here with the lock held; they do their map and pin
 * operations, then unlock() before they print anything. */
int open_writer(struct xrl **x, bool create, __u32 keys)
{
	struct xrl_open_opts o = { .pin_dir = opt.pin_dir, .create = create, .keys = keys,
				   .bans = opt.bans, .syn_verified = opt.syn_verified };

	if (xrl_open(&o, x)) {
		p_err("%s", xrl_errmsg());
		return -1;
	}
	return 0;
}

/* A writer's failure, kept until the lock is released. */
char emsg[1024];

__attribute__((format(printf, 1, 2)))
int set_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (vsnprintf(emsg, sizeof(emsg), fmt, ap) >= (int)sizeof(emsg))
		xrl_utf8_trim(emsg);
	va_end(ap);
	return -1;
}

/* End of a writer's locked part. A failed command changes nothing: a new
 * instance that xrl_open() created for it goes away again. */
void unlock(struct xrl *x, int err)
{
	if (err && xrl_created(x) && xrl_discard(x)) {
		size_t l = strlen(emsg);

		snprintf(emsg + l, sizeof(emsg) - l, "; and the new instance could not be removed: %s",
			 xrl_errmsg());
	}
	xrl_unlock(x);
	print_warnings();
}

int end_write(struct xrl *x, int err)
{
	if (err)
		set_err("%s", xrl_errmsg());
	unlock(x, err);
	if (err)
		p_err("%s", emsg);
	return err;
}

void rule_fields(const struct xrl_rule_entry *e, char *pfx, size_t plen,
			char *rate, size_t rlen)
{
	xrl_prefix_format(e, pfx, plen);
	if (e->r.action == XRL_ACT_LIMIT)
		xrl_rule_rate_format(&e->r, rate, rlen);
	else
		snprintf(rate, rlen, "-");
}
