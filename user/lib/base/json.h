/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* A minimal streaming JSON writer: objects, arrays, strings, numbers. */
#ifndef XRL_JSON_H
#define XRL_JSON_H

#include <stdbool.h>
#include <stdio.h>
#include <stdint.h>

#define JW_MAX_DEPTH 16

struct jw {
	FILE *f;
	bool pretty;
	int depth;
	bool first[JW_MAX_DEPTH];
	bool after_key;
};

void jw_init(struct jw *w, FILE *f, bool pretty);
void jw_obj_start(struct jw *w);
void jw_obj_end(struct jw *w);
void jw_arr_start(struct jw *w);
void jw_arr_end(struct jw *w);
void jw_key(struct jw *w, const char *key);
void jw_str(struct jw *w, const char *s);
void jw_u64(struct jw *w, uint64_t v);
void jw_bool(struct jw *w, bool v);
void jw_null(struct jw *w);

/* key + value in one call */
void jw_kstr(struct jw *w, const char *key, const char *s);
void jw_ku64(struct jw *w, const char *key, uint64_t v);
void jw_kbool(struct jw *w, const char *key, bool v);

/* Ends the document with a newline. */
void jw_finish(struct jw *w);

#endif
