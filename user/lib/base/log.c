// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * libxrl: the one log path of the library, the CLI and the daemon, and the
 * error message of the last failed call.
 *
 * The library never writes to stderr by itself: its warnings and libbpf's
 * messages go to the sink a program sets (the daemon's journald-friendly
 * lines, the CLI's "Warning:" or JSON), or, by default, to stderr as
 * "level: message".
 */
#include "base/log.h"
#include "base/strict.h"

#include <errno.h>
#include <bpf/libbpf.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__thread char xrl__errbuf[512];

const char *xrl_errmsg(void)
{
	return xrl__errbuf[0] ? xrl__errbuf : "unknown error";
}

int xrl_fail(int err, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(xrl__errbuf, sizeof(xrl__errbuf), fmt, ap);
	va_end(ap);
	if (n >= (int)sizeof(xrl__errbuf))
		xrl_utf8_trim(xrl__errbuf);
	return err < 0 ? err : -err;
}

static const char *const level_names[] = { "error", "warning", "info", "debug" };

const char *xrl_log_level_name(enum xrl_log_level l)
{
	return l <= XRL_LOG_DEBUG ? level_names[l] : "unknown";
}

int xrl_log_level_parse(const char *s, enum xrl_log_level *l)
{
	for (int i = 0; i <= XRL_LOG_DEBUG; i++) {
		if (!strcmp(s, level_names[i])) {
			*l = i;
			return 0;
		}
	}
	return xrl_fail(EINVAL, "invalid log level '%s' (error, warning, info, debug)", s);
}

static void log_stderr(enum xrl_log_level l, const char *msg)
{
	fprintf(stderr, "%s: %s\n", level_names[l], msg);
}

static xrl_log_fn sink = log_stderr;
static enum xrl_log_level max_level = XRL_LOG_INFO;

void xrl_log_set(xrl_log_fn fn, enum xrl_log_level max)
{
	sink = fn ? fn : log_stderr;
	max_level = max;
}

static void vlog(enum xrl_log_level l, const char *fmt, va_list ap)
{
	char msg[1024];
	size_t n;

	if (l > max_level)
		return;
	if (vsnprintf(msg, sizeof(msg), fmt, ap) >= (int)sizeof(msg))
		xrl_utf8_trim(msg);
	n = strlen(msg);
	while (n && msg[n - 1] == '\n')	/* libbpf ends its lines itself */
		msg[--n] = '\0';
	sink(l, msg);
}

void xrl_log(enum xrl_log_level l, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(l, fmt, ap);
	va_end(ap);
}

void xrl_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(XRL_LOG_WARN, fmt, ap);
	va_end(ap);
}

/* libbpf's warnings are warnings; its info and debug lines (the verifier
 * log among them) only with XRL_DEBUG=1. */
static int libbpf_print(enum libbpf_print_level l, const char *fmt, va_list ap)
{
	if (l == LIBBPF_WARN)
		vlog(XRL_LOG_WARN, fmt, ap);
	else if (getenv("XRL_DEBUG"))
		vlog(XRL_LOG_DEBUG, fmt, ap);
	return 0;
}

__attribute__((constructor))
static void route_libbpf(void)
{
	libbpf_set_print(libbpf_print);
}
