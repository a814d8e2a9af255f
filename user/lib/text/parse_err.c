// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * libxrl, the text layer: a parse error at a word, and the end of a
 * command's table of words (shared by the engine and the tables).
 */
#include "text/grammar.h"
#include "base/log.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

int xrl_parse_fail(struct xrl_parse_err *e, int argi, const char *fmt, ...)
{
	va_list ap;

	e->argi = argi;
	va_start(ap, fmt);
	if (vsnprintf(e->msg, sizeof(e->msg), fmt, ap) >= (int)sizeof(e->msg))
		xrl_utf8_trim(e->msg);
	va_end(ap);
	return -EINVAL;
}

/* The table ends with an all-zero row. */
bool xrl_param_end(const struct xrl_param *p)
{
	return !p || (!p->name && !p->meta && !p->words);
}
