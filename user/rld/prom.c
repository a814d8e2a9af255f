// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include "prom.h"

#include <stdarg.h>

void prom_family(struct prom *p, const char *name, const char *type, const char *help)
{
	p->family = name;
	fprintf(p->f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* A label's value, with the exposition format's escapes. */
static void label_value(FILE *f, const char *s)
{
	for (const char *c = s; *c; c++) {
		if (*c == '"')
			fputs("\\\"", f);
		else if (*c == '\\')
			fputs("\\\\", f);
		else if (*c == '\n')
			fputs("\\n", f);
		else
			fputc(*c, f);
	}
}

static void sample(struct prom *p, const char *suffix, const char *const *labels, const char *fmt, va_list ap)
{
	fputs(p->family, p->f);
	if (suffix)
		fputs(suffix, p->f);
	if (labels && labels[0]) {
		for (size_t i = 0; labels[i] && labels[i + 1]; i += 2) {
			fprintf(p->f, "%s%s=\"", i ? "," : "{", labels[i]);
			label_value(p->f, labels[i + 1]);
			fputc('"', p->f);
		}
		fputc('}', p->f);
	}
	fputc(' ', p->f);
	vfprintf(p->f, fmt, ap);
	fputc('\n', p->f);
}

void prom_sample(struct prom *p, const char *const *labels, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	sample(p, NULL, labels, fmt, ap);
	va_end(ap);
}

void prom_sample_of(struct prom *p, const char *suffix, const char *const *labels, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	sample(p, suffix, labels, fmt, ap);
	va_end(ap);
}
