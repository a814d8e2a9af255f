// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include "base/json.h"

#include <inttypes.h>
#include <string.h>

void jw_init(struct jw *w, FILE *f, bool pretty)
{
	w->f = f;
	w->pretty = pretty;
	w->depth = 0;
	w->first[0] = true;
	w->after_key = false;
}

static void indent(struct jw *w)
{
	if (!w->pretty)
		return;
	fputc('\n', w->f);
	for (int i = 0; i < w->depth; i++)
		fputs("  ", w->f);
}

/* Separator and indentation before a value or a key. */
static void pre_value(struct jw *w)
{
	if (w->after_key) {
		w->after_key = false;
		return;
	}
	if (!w->first[w->depth])
		fputc(',', w->f);
	if (w->depth > 0)
		indent(w);
	w->first[w->depth] = false;
}

static void open(struct jw *w, char c)
{
	pre_value(w);
	fputc(c, w->f);
	if (w->depth < JW_MAX_DEPTH - 1)
		w->depth++;
	w->first[w->depth] = true;
}

static void close_(struct jw *w, char c)
{
	bool empty = w->first[w->depth];

	if (w->depth > 0)
		w->depth--;
	if (!empty)
		indent(w);
	fputc(c, w->f);
}

void jw_obj_start(struct jw *w) { open(w, '{'); }
void jw_obj_end(struct jw *w) { close_(w, '}'); }
void jw_arr_start(struct jw *w) { open(w, '['); }
void jw_arr_end(struct jw *w) { close_(w, ']'); }

/* Length of the valid UTF-8 sequence at s (lead byte >= 0x80), or 0:
 * no overlong forms, no surrogates, nothing above U+10FFFF. */
static int utf8_len(const unsigned char *s)
{
	unsigned char c = s[0];

	if (c >= 0xc2 && c <= 0xdf)
		return (s[1] & 0xc0) == 0x80 ? 2 : 0;
	if (c >= 0xe0 && c <= 0xef) {
		unsigned char lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;

		return s[1] >= lo && s[1] <= hi && (s[2] & 0xc0) == 0x80 ? 3 : 0;
	}
	if (c >= 0xf0 && c <= 0xf4) {
		unsigned char lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;

		return s[1] >= lo && s[1] <= hi && (s[2] & 0xc0) == 0x80 &&
		       (s[3] & 0xc0) == 0x80 ? 4 : 0;
	}
	return 0;
}

/* A JSON string of s; bytes that are not UTF-8 become U+FFFD, so the
 * document is always valid UTF-8 whatever an argument held. */
static void raw_str(struct jw *w, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;

	fputc('"', w->f);
	while (*s) {
		unsigned char c = *s;
		int n;

		switch (c) {
		case '"': fputs("\\\"", w->f); break;
		case '\\': fputs("\\\\", w->f); break;
		case '\n': fputs("\\n", w->f); break;
		case '\t': fputs("\\t", w->f); break;
		default:
			if (c < 0x20 || c == 0x7f) {
				fprintf(w->f, "\\u%04x", c);
			} else if (c < 0x80) {
				fputc(c, w->f);
			} else if ((n = utf8_len(s))) {
				fwrite(s, 1, n, w->f);
				s += n;
				continue;
			} else {
				fputs("\\ufffd", w->f);
			}
		}
		s++;
	}
	fputc('"', w->f);
}

void jw_key(struct jw *w, const char *key)
{
	pre_value(w);
	raw_str(w, key);
	fputs(w->pretty ? ": " : ":", w->f);
	w->after_key = true;
}

void jw_str(struct jw *w, const char *s)
{
	pre_value(w);
	raw_str(w, s ? s : "");
}

void jw_u64(struct jw *w, uint64_t v)
{
	pre_value(w);
	fprintf(w->f, "%" PRIu64, v);
}

void jw_bool(struct jw *w, bool v)
{
	pre_value(w);
	fputs(v ? "true" : "false", w->f);
}

void jw_null(struct jw *w)
{
	pre_value(w);
	fputs("null", w->f);
}

void jw_kstr(struct jw *w, const char *k, const char *s) { jw_key(w, k); jw_str(w, s); }
void jw_ku64(struct jw *w, const char *k, uint64_t v) { jw_key(w, k); jw_u64(w, v); }
void jw_kbool(struct jw *w, const char *k, bool v) { jw_key(w, k); jw_bool(w, v); }

void jw_finish(struct jw *w)
{
	fputc('\n', w->f);
	fflush(w->f);
}
