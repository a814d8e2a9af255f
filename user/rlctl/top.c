// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xdp-rlctl: top, top watch.
 *
 * A drop rate is the difference of two walks of the bucket tables `sample`
 * ms apart; a key absent from the first walk (or whose bucket was deleted
 * and made again in between) counts from zero. `top watch` walks once per
 * sample and draws a full screen, as top(1) does, until q or a signal.
 */
#include "rlctl.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

static __u64 mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* One walk (features/report.h), its failure kept for the caller. */
static int collect(struct xrl *x, const struct xrl_rule_entry *rules, size_t nrules,
		   struct xrl_top_snap *s)
{
	if (xrl_top_collect(x, rules, nrules, s))
		return set_err("%s", xrl_errmsg());
	return 0;
}

static int do_top_watch(struct xrl_cmd *c);

/* rule ID names a rule of the set (or no rule was named) */
static bool rule_named(const struct xrl_rule_entry *v, size_t n, __u32 id)
{
	for (size_t i = 0; id && i < n; i++) {
		if (v[i].r.id == id)
			return true;
	}
	return !id;
}

int do_top(struct xrl_cmd *c)
{
	struct xrl_rule_entry *rules = NULL;
	struct xrl_top_snap s0 = { .only = c->top.rule }, s1 = { .only = c->top.rule };
	struct timespec ts = { c->top.sample_ms / 1000, (c->top.sample_ms % 1000) * 1000000L };
	size_t nrules = 0;
	__u64 t0, t1;
	struct xrl *x;
	int err = 0;
	bool dry;

	if (c->top.watch)
		return do_top_watch(c);
	if (open_reader(&x))
		return 1;
	if (xrl_rules_get(x, &rules, &nrules)) {
		p_err("%s", xrl_errmsg());
		err = 1;
		goto out;
	}
	if (!rule_named(rules, nrules, c->top.rule)) {
		p_err("no rule %u", c->top.rule);
		err = 1;
		goto out;
	}
	rules_by_gen(rules, nrules);
	t0 = mono_ns();
	if (collect(x, rules, nrules, &s0)) {
		p_err("%s", emsg);
		err = 1;
		goto out;
	}
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
	t1 = mono_ns();
	if (collect(x, rules, nrules, &s1)) {
		p_err("%s", emsg);
		err = 1;
		goto out;
	}
	xrl_top_rates(&s1, &s0, t1 - t0);
	xrl_sort(s1.v, s1.n, sizeof(*s1.v), xrl_top_cmp_hot);
	if (s1.n > c->top.count)
		s1.n = c->top.count;
	dry = xrl_mode_get(x) == XRL_MODE_DRY_RUN;
	if (opt.json) {
		xrl_top_json(&jw, s1.v, s1.n, dry);
		jw_finish(&jw);
		goto out;
	}
	printf("%-44s %-6s %12s %12s\n", "KEY", "RULE", "DROPPED", "DROPPED/s");
	for (size_t i = 0; i < s1.n; i++) {
		const struct xrl_top_item *it = &s1.v[i];
		char key[80];

		key_format(&it->k, it->key_len, key, sizeof(key));
		/* a would-drop is marked on its line; the header stays */
		printf("%-44s %-6u %12llu %12llu%s\n", key, it->rule,
		       (unsigned long long)it->dropped, (unsigned long long)it->rate,
		       it->dry_run || dry ? " (dry-run: would-drops)" : "");
	}
out:
	free(s0.v);
	free(s1.v);
	free(rules);
	xrl_close(x);
	return err;
}

/* ---- top watch ---- */

static struct termios saved_tio;
static bool term_raw;
static volatile sig_atomic_t quit_sig;

static void on_quit(int sig)
{
	quit_sig = sig;
}

/* Keys come one by one, unechoed; Ctrl-C arrives as a byte (ISIG off), so
 * no signal interrupts a half-drawn frame; the alternate screen keeps the
 * shell's screen as it was. */
static int term_enter(void)
{
	struct termios raw;

	if (tcgetattr(STDIN_FILENO, &saved_tio))
		return -errno;
	raw = saved_tio;
	raw.c_lflag &= ~(ICANON | ECHO | ISIG | IEXTEN);
	raw.c_cc[VMIN] = 0;
	raw.c_cc[VTIME] = 0;
	if (tcsetattr(STDIN_FILENO, TCSAFLUSH, &raw))
		return -errno;
	term_raw = true;
	fputs("\033[?1049h\033[?25l\033[H\033[2J", stdout);
	fflush(stdout);
	return 0;
}

/* On every way out: q, Ctrl-C, a signal, an error. */
static void term_leave(void)
{
	if (!term_raw)
		return;
	fputs("\033[?25h\033[?1049l", stdout);
	fflush(stdout);
	tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved_tio);
	term_raw = false;
}

struct rule_prev {
	__u32 gen;
	struct xrl_rule_stats s;
};

static int cmp_prev(const void *a, const void *b)
{
	const struct rule_prev *x = a, *y = b;

	return x->gen < y->gen ? -1 : x->gen > y->gen;
}

struct watch {
	struct xrl *x;
	struct xrl_cmd *c;
	struct xrl_top_snap prev, cur;
	struct rule_prev *rprev;
	size_t nrprev;
	__u64 tprev;
	bool have_prev;
};

static void rate_str(bool have, __u64 delta, __u64 elapsed, char *buf, size_t len)
{
	if (!have || !elapsed)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%llu", (unsigned long long)(delta * 1e9 / elapsed));
}

/* One frame: read everything, then draw it at once. */
static int frame(struct watch *w)
{
	struct xrl_rule_entry *v = NULL, *byg = NULL;
	struct xrl_rule_stats *rs = NULL;
	struct rule_prev *rp = NULL;
	struct winsize ws = { .ws_row = 24, .ws_col = 80 };
	size_t n = 0, lines = 0, maxl, blen = 0;
	char *buf = NULL, line[512], hms[16], scope[48];
	__u64 now, elapsed;
	time_t t = time(NULL);
	FILE *f;
	int err = -1;

	if (xrl_rules_get(w->x, &v, &n)) {
		set_err("%s", xrl_errmsg());
		goto out;
	}
	rs = calloc(n + 1, sizeof(*rs));
	rp = calloc(n + 1, sizeof(*rp));
	byg = calloc(n + 1, sizeof(*byg));
	if (!rs || !rp || !byg) {
		set_err("out of memory");
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		if (xrl_rule_stats_get(w->x, v[i].r.slot, &rs[i])) {
			set_err("%s", xrl_errmsg());
			goto out;
		}
		rp[i] = (struct rule_prev){ v[i].r.gen, rs[i] };
	}
	memcpy(byg, v, n * sizeof(*v));
	rules_by_gen(byg, n);
	now = mono_ns();
	if (collect(w->x, byg, n, &w->cur))
		goto out;
	elapsed = now - w->tprev;
	xrl_top_rates(&w->cur, &w->prev, w->have_prev ? elapsed : 0);

	ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws);
	if (ws.ws_row < 5)
		ws.ws_row = 5;
	maxl = ws.ws_row - 1;	/* the last line says how to quit */
	f = open_memstream(&buf, &blen);
	if (!f) {
		set_err("out of memory");
		goto out;
	}
#define LINE(...) do {								\
		if (lines < maxl) {						\
			snprintf(line, sizeof(line), __VA_ARGS__);		\
			if (ws.ws_col < sizeof(line))				\
				line[ws.ws_col] = '\0';				\
			fprintf(f, "%s\033[K\n", line);				\
			lines++;						\
		}								\
	} while (0)
	fputs("\033[H", f);
	strftime(hms, sizeof(hms), "%H:%M:%S", localtime(&t));
	if (w->c->top.rule)	/* the keys counted are that rule's */
		snprintf(scope, sizeof(scope), "rule %u of %zu", w->c->top.rule, n);
	else
		snprintf(scope, sizeof(scope), "%zu rule%s", n, n == 1 ? "" : "s");
	LINE("xdp-rl top - %s  mode %s  %s  %llu key%s  every %.1f s  %s",
	     xrl_pin_dir(w->x), xrl_mode_name(xrl_mode_get(w->x)), scope,
	     w->cur.tracked, w->cur.tracked == 1 ? "" : "s", w->c->top.sample_ms / 1e3, hms);
	LINE("%s", "");
	LINE("%-6s %-28s %-7s %11s %11s %13s %13s %13s", "RULE", "PREFIX", "ACTION", "PASSED/s",
	     "DROPPED/s", "PASSED", "DROPPED", "WOULD-DROP");
	for (size_t i = 0; i < n && lines + 4 < maxl; i++) {
		struct rule_prev k = { .gen = v[i].r.gen };
		const struct rule_prev *p = w->nrprev ? bsearch(&k, w->rprev, w->nrprev, sizeof(k), cmp_prev) : NULL;
		char pfx[64], pr[24], dr[24];
		bool have = w->have_prev && p;

		if (w->c->top.rule && v[i].r.id != w->c->top.rule)
			continue;

		xrl_prefix_format(&v[i], pfx, sizeof(pfx));
		rate_str(have, have ? rs[i].passed_packets - p->s.passed_packets : 0, elapsed, pr, sizeof(pr));
		rate_str(have, have ? rs[i].dropped_packets - p->s.dropped_packets : 0, elapsed, dr, sizeof(dr));
		LINE("%-6u %-28s %-7s %11s %11s %13llu %13llu %13llu%s", v[i].r.id, pfx,
		     xrl_action_name(v[i].r.action), pr, dr,
		     (unsigned long long)rs[i].passed_packets, (unsigned long long)rs[i].dropped_packets,
		     (unsigned long long)rs[i].would_drop_packets, v[i].r.dry_run ? " dry-run" : "");
	}
	LINE("%s", "");
	LINE("%-44s %-6s %11s %13s", "KEY", "RULE", "DROPPED/s", "DROPPED");
	{
		struct xrl_top_item *hot = malloc((w->cur.n + 1) * sizeof(*hot));

		if (!hot) {
			fclose(f);
			set_err("out of memory");
			goto out;
		}
		if (w->cur.n)	/* no key yet: v is NULL, which memcpy() must not get */
			memcpy(hot, w->cur.v, w->cur.n * sizeof(*hot));
		xrl_sort(hot, w->cur.n, sizeof(*hot), xrl_top_cmp_hot);
		for (size_t i = 0; i < w->cur.n && i < w->c->top.count; i++) {
			char key[80], r[24];

			key_format(&hot[i].k, hot[i].key_len, key, sizeof(key));
			if (w->have_prev)
				snprintf(r, sizeof(r), "%llu", (unsigned long long)hot[i].rate);
			else
				snprintf(r, sizeof(r), "-");
			LINE("%-44s %-6u %11s %13llu", key, hot[i].rule, r,
			     (unsigned long long)hot[i].dropped);
		}
		free(hot);
	}
#undef LINE
	fputs("\033[J", f);
	fprintf(f, "\033[%u;1H\033[7m q: quit \033[0m\033[K", (unsigned)ws.ws_row);
	fclose(f);
	if (fwrite(buf, 1, blen, stdout) != blen || fflush(stdout)) {
		set_err("cannot write to the terminal: %s", strerror(errno));
		goto out;
	}
	/* this frame is the next one's baseline */
	xrl_sort(rp, n, sizeof(*rp), cmp_prev);
	free(w->rprev);
	w->rprev = rp;
	w->nrprev = n;
	rp = NULL;
	{
		struct xrl_top_snap tmp = w->prev;

		w->prev = w->cur;
		w->cur = tmp;
	}
	w->tprev = now;
	w->have_prev = true;
	err = 0;
out:
	free(buf);
	free(rp);
	free(byg);
	free(rs);
	free(v);
	return err;
}

static int do_top_watch(struct xrl_cmd *c)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE };
	struct sigaction sa = { .sa_handler = on_quit };	/* no SA_RESTART: poll returns */
	struct watch w = { .c = c, .cur.only = c->top.rule, .prev.only = c->top.rule };
	struct xrl_rule_entry *v = NULL;
	size_t n = 0;
	__u64 next;
	int err = 0;

	if (opt.json) {
		p_err("top watch draws a screen; for JSON use top -j");
		return EXIT_USAGE;
	}
	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
		p_err("top watch needs a terminal (stdin and stdout); without one, use top");
		return 1;
	}
	if (open_reader(&w.x))
		return 1;
	if (c->top.rule) {
		bool named;

		if (xrl_rules_get(w.x, &v, &n)) {
			p_err("%s", xrl_errmsg());
			xrl_close(w.x);
			return 1;
		}
		named = rule_named(v, n, c->top.rule);
		free(v);
		if (!named) {
			p_err("no rule %u", c->top.rule);
			xrl_close(w.x);
			return 1;
		}
	}
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
	if (term_enter()) {
		p_err("cannot set up the terminal: %s", strerror(errno));
		xrl_close(w.x);
		return 1;
	}
	err = frame(&w);
	next = mono_ns() + c->top.sample_ms * 1000000ULL;
	while (!err && !quit_sig) {
		struct pollfd pfd = { .fd = STDIN_FILENO, .events = POLLIN };
		__u64 now = mono_ns();
		int r = poll(&pfd, 1, next > now ? (int)((next - now + 999999) / 1000000) : 0);

		if (r < 0 && errno != EINTR) {
			err = set_err("poll: %s", strerror(errno));
			break;
		}
		if (r > 0) {
			char ch[64];
			ssize_t got = read(STDIN_FILENO, ch, sizeof(ch));

			if (got <= 0 && !(got < 0 && (errno == EINTR || errno == EAGAIN)))
				break;	/* the terminal is gone */
			if (got > 0 && (memchr(ch, 'q', got) || memchr(ch, 'Q', got) ||
					memchr(ch, 3, got) /* Ctrl-C */))
				break;
			if (pfd.revents & (POLLHUP | POLLERR))
				break;
		}
		if (mono_ns() >= next) {
			err = frame(&w);
			next += c->top.sample_ms * 1000000ULL;
			if (next < mono_ns())	/* a slow walk: no burst of frames */
				next = mono_ns() + c->top.sample_ms * 1000000ULL;
		}
	}
	term_leave();
	free(w.prev.v);
	free(w.cur.v);
	free(w.rprev);
	xrl_close(w.x);
	if (err) {
		p_err("%s", emsg);
		return 1;
	}
	/* q and Ctrl-C quit; a signal from elsewhere (TERM, HUP) says so */
	return quit_sig && quit_sig != SIGINT ? 128 + quit_sig : 0;
}
