// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* xdp-rlctl: set create, add, del, list, show, flush, load (docs/sets.md). */
#include "rlctl.h"
#include "text/setload.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void item_format(const struct xrl_set_item *it, char *buf, size_t len)
{
	struct xrl_rule_entry e = { .family = it->family, .prefix_len = it->prefix_len };

	memcpy(e.addr, it->addr, 16);
	xrl_prefix_format(&e, buf, len);
}

/* One locked library call on a set; then what was done, or the error. */
static int set_write(struct xrl_cmd *c, const char *done)
{
	struct xrl_args_set *s = &c->set;
	struct xrl_set_list l = {};
	struct xrl *x;
	double secs = 0;
	int err = 0;

	/* the file is read and parsed whole before the pins are touched */
	if (c->kind == XRL_CMD_SET_LOAD && xrl_set_file_read(s->file, &l)) {
		p_err("%s", xrl_errmsg());
		return 1;
	}
	if ((c->kind == XRL_CMD_SET_ADD || (c->kind == XRL_CMD_SET_DEL && s->elem[0])) &&
	    xrl_set_elem_parse(s->elem, &l)) {
		p_err("%s", xrl_errmsg());
		return 1;
	}
	if (open_writer(&x, false, 0)) {
		xrl_set_list_free(&l);
		return 1;
	}
	switch (c->kind) {
	case XRL_CMD_SET_CREATE:
		err = xrl_set_create(x, s->name, s->timeout_ns);
		break;
	case XRL_CMD_SET_ADD:
		err = xrl_set_add(x, s->name, &l, s->timeout_ns);
		break;
	case XRL_CMD_SET_DEL:
		err = s->elem[0] ? xrl_set_del_elems(x, s->name, &l) : xrl_set_destroy(x, s->name);
		break;
	case XRL_CMD_SET_FLUSH:
		err = xrl_set_flush(x, s->name);
		break;
	case XRL_CMD_SET_LOAD:
		err = xrl_set_load(x, s->name, &l, &secs);
		break;
	default:
		break;
	}
	if (end_write(x, err))
		goto out;
	if (opt.json) {
		jw_obj_start(&jw);
		jw_kstr(&jw, "set", s->name);
		jw_kstr(&jw, "done", done);
		if (c->kind == XRL_CMD_SET_LOAD || c->kind == XRL_CMD_SET_ADD || c->kind == XRL_CMD_SET_DEL)
			jw_ku64(&jw, "prefixes", l.n);
		if (c->kind == XRL_CMD_SET_LOAD)
			jw_ku64(&jw, "load_us", (__u64)(secs * 1e6));
		jw_obj_end(&jw);
		jw_finish(&jw);
	} else if (c->kind == XRL_CMD_SET_LOAD) {
		printf("loaded %zu prefix%s into set %s in %.3f s\n", l.n, l.n == 1 ? "" : "es", s->name, secs);
	} else if (l.n) {
		printf("%s %zu prefix%s: set %s\n", done, l.n, l.n == 1 ? "" : "es", s->name);
	} else {
		printf("%s set %s\n", done, s->name);
	}
out:
	xrl_close(x);
	xrl_set_list_free(&l);
	return err ? 1 : 0;
}

int do_set_create(struct xrl_cmd *c) { return set_write(c, "created"); }
int do_set_add(struct xrl_cmd *c) { return set_write(c, "added"); }
int do_set_del(struct xrl_cmd *c) { return set_write(c, c->set.elem[0] ? "deleted" : "removed"); }
int do_set_flush(struct xrl_cmd *c) { return set_write(c, "flushed"); }
int do_set_load(struct xrl_cmd *c) { return set_write(c, "loaded"); }

static void view_json(const struct xrl_set_view *v)
{
	jw_kstr(&jw, "name", v->name);
	jw_ku64(&jw, "prefixes", v->count);
	jw_ku64(&jw, "timeout_s", v->timeout_ns / 1000000000ULL);
	jw_ku64(&jw, "memory_bytes", v->mem_bytes);
	jw_ku64(&jw, "rules", v->rules);
}

int do_set_list(struct xrl_cmd *c)
{
	struct xrl_set_view *v = NULL;
	struct xrl *x;
	size_t n = 0;

	(void)c;
	if (open_reader(&x))
		return 1;
	if (xrl_sets_list(x, &v, &n)) {
		p_err("%s", xrl_errmsg());
		xrl_close(x);
		return 1;
	}
	if (opt.json) {
		jw_arr_start(&jw);
		for (size_t i = 0; i < n; i++) {
			jw_obj_start(&jw);
			view_json(&v[i]);
			jw_obj_end(&jw);
		}
		jw_arr_end(&jw);
		jw_finish(&jw);
	} else {
		printf("%-20s %10s %8s %12s %8s %5s\n", "SET", "PREFIXES", "TIMEOUT", "MEMORY", "B/PFX", "RULES");
		for (size_t i = 0; i < n; i++) {
			char t[16] = "-", m[32];

			if (v[i].timeout_ns)
				xrl_duration_format(v[i].timeout_ns / 1000000000ULL, t, sizeof(t));
			xrl_size_format(v[i].mem_bytes, m, sizeof(m));
			printf("%-20s %10u %8s %12s %8llu %5u\n", v[i].name, v[i].count, t, m,
			       v[i].count ? (unsigned long long)(v[i].mem_bytes / v[i].count) : 0ULL, v[i].rules);
		}
	}
	free(v);
	xrl_close(x);
	return 0;
}

int do_set_show(struct xrl_cmd *c)
{
	struct xrl_set_list l = {};
	struct xrl_set_view v;
	struct xrl *x;
	int err;

	/* a writer: it sweeps what expired */
	if (open_writer(&x, false, 0))
		return 1;
	err = xrl_set_get(x, c->set.name, &v) ?: xrl_set_elems(x, c->set.name, &l);
	if (!err)
		err = xrl_set_get(x, c->set.name, &v);	/* the count after the sweep */
	if (end_write(x, err))
		goto out;
	if (opt.json) {
		jw_obj_start(&jw);
		view_json(&v);
		jw_key(&jw, "elements");
		jw_arr_start(&jw);
		for (size_t i = 0; i < l.n; i++) {
			char p[64];

			item_format(&l.v[i], p, sizeof(p));
			jw_obj_start(&jw);
			jw_kstr(&jw, "prefix", p);
			if (l.v[i].timeout_ns)
				jw_ku64(&jw, "expires_in_ms", l.v[i].timeout_ns / 1000000ULL);
			jw_obj_end(&jw);
		}
		jw_arr_end(&jw);
		jw_obj_end(&jw);
		jw_finish(&jw);
	} else {
		printf("set %s: %u prefix%s, %llu bytes\n", v.name, v.count, v.count == 1 ? "" : "es",
		       (unsigned long long)v.mem_bytes);
		for (size_t i = 0; i < l.n; i++) {
			char p[64];

			item_format(&l.v[i], p, sizeof(p));
			if (l.v[i].timeout_ns)
				printf("%s timeout %llus\n", p,
				       (unsigned long long)((l.v[i].timeout_ns + 999999999ULL) / 1000000000ULL));
			else
				printf("%s\n", p);
		}
	}
out:
	xrl_set_list_free(&l);
	xrl_close(x);
	return err ? 1 : 0;
}
