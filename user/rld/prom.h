/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The Prometheus text exposition, written one way for every metric family
 * of xdp-rld: a family's HELP and TYPE once, then its samples
 *
 *	NAME[SUFFIX][{LABEL="VALUE",...}] VALUE
 *
 * with each label value escaped as the format asks (\\, \", \n).
 */
#ifndef XRL_PROM_H
#define XRL_PROM_H

#include <stdbool.h>
#include <stdio.h>

struct prom {
	FILE *f;
	const char *family;	/* the family being written */
};

/* A sample's labels: name, value, name, value, ...; NULL: none. */
#define PROM_LABELS(...)	((const char *const[]){ __VA_ARGS__, NULL })

/* A family begins: its HELP and TYPE lines. */
void prom_family(struct prom *p, const char *name, const char *type, const char *help);

/* One sample of the family begun last: value as fmt says ("%llu", "%.3f"). */
__attribute__((format(printf, 3, 4)))
void prom_sample(struct prom *p, const char *const *labels, const char *fmt, ...);

/* The same for a series of the family under another name (a histogram's
 * NAME_bucket, NAME_sum, NAME_count). */
__attribute__((format(printf, 4, 5)))
void prom_sample_of(struct prom *p, const char *suffix, const char *const *labels, const char *fmt, ...);

#endif
