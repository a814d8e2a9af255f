/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The one log path of the library, the CLI and the daemon, and the error
 * message of the last failed call (log.c). The bottom of libxrl: it uses
 * nothing of it.
 *
 * Functions of libxrl return 0 or a negative errno; on failure
 * xrl_errmsg() says what went wrong in words an operator can act on.
 */
#ifndef XRL_BASE_LOG_H
#define XRL_BASE_LOG_H

/* The message of the last failed call of this thread. */
const char *xrl_errmsg(void);

/* The library's warnings and libbpf's messages (its warnings; its debug
 * lines only with XRL_DEBUG=1) go to the sink; the default writes
 * "level: message" on stderr. Messages above max are dropped. */
enum xrl_log_level { XRL_LOG_ERR, XRL_LOG_WARN, XRL_LOG_INFO, XRL_LOG_DEBUG };
typedef void (*xrl_log_fn)(enum xrl_log_level level, const char *msg);
void xrl_log_set(xrl_log_fn fn, enum xrl_log_level max);
__attribute__((format(printf, 2, 3)))
void xrl_log(enum xrl_log_level level, const char *fmt, ...);
const char *xrl_log_level_name(enum xrl_log_level level);
int xrl_log_level_parse(const char *s, enum xrl_log_level *level);

/* Inside the library: set xrl_errmsg() and return -err (err may be given
 * either way); a warning through the sink. */
__attribute__((format(printf, 2, 3)))
int xrl_fail(int err, const char *fmt, ...);
__attribute__((format(printf, 1, 2)))
void xrl_warn(const char *fmt, ...);

/* What xrl_errmsg() returns, for the few callers that add to it. */
extern __thread char xrl__errbuf[512];

#endif
