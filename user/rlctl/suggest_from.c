// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xdp-rlctl: suggest ... from ADDR:PORT. The proposal from the record that
 * xdp-rld --suggest keeps (rld/suggest.c), read from its /metrics: one
 * HTTP/1.0 GET, the xdp_rl_suggest_* families parsed, each rule's
 * percentiles taken from the cumulative buckets (model/suggest.c). The
 * rule line comes from the daemon's own (xdp_rl_suggest_rule_info), so the
 * host need not be this one. What the figures mean, and how they differ
 * from the live sample's: docs/suggest.md.
 */
#include "rlctl.h"
#include "xrl_meter.h"
#include "base/hostport.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>

#define FROM_TIMEOUT_S	5
#define FROM_MAX_BODY	(64u << 20)	/* an answer larger than this is not a daemon's */
#define FROM_MAX_RULES	4096

struct fhist {
	double le[XRL_SG_HIST_BOUNDS + 1];
	__u64 cum[XRL_SG_HIST_BOUNDS + 1];
	size_t n;
	__u64 count;
	bool bad;		/* more buckets than a record has */
};

struct frule {
	__u32 id;
	char line[512];
	struct fhist rate, burst;
	double seconds, nk_peak, agg_peak, agg_burst;
	__u64 spans, not_sampled;
};

/* The body of GET /metrics at hostport, NUL-terminated; NULL with the
 * error said. */
static char *fetch_metrics(const char *hostport)
{
	struct timeval tv = { FROM_TIMEOUT_S, 0 };
	struct timespec t0, now;
	struct sockaddr_storage ss;
	char why[160] = "", req[256], *buf = NULL, *body = NULL, *nb;
	size_t len = 0, cap = 0;
	socklen_t sl;
	int fd = -1;
	ssize_t n;

	if (xrl_hostport_sockaddr(hostport, &ss, &sl, why, sizeof(why))) {
		p_err("invalid daemon address '%s' (%s)", hostport, why);
		return NULL;
	}
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) ||
	    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv))) {
		p_err("socket: %s", strerror(errno));
		goto out;
	}
	/* connect() honours SO_SNDTIMEO: a host that drops SYNs is an error
	 * after FROM_TIMEOUT_S, not after the kernel's two minutes */
	if (connect(fd, (struct sockaddr *)&ss, sl)) {
		p_err("cannot reach the daemon at %s: %s (is xdp-rld serving its metrics there?)", hostport,
		      errno == EINPROGRESS ? "no answer in 5 s" : strerror(errno));
		goto out;
	}
	snprintf(req, sizeof(req), "GET /metrics HTTP/1.0\r\nHost: %s\r\nAccept: text/plain\r\n\r\n", hostport);
	if (write(fd, req, strlen(req)) != (ssize_t)strlen(req)) {
		p_err("%s: cannot send the request: %s", hostport, strerror(errno));
		goto out;
	}
	/* SO_RCVTIMEO bounds each read only: a server that drips a byte a
	 * second would hold the command for as long as it likes. The whole
	 * answer has FROM_TIMEOUT_S as well. */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec - t0.tv_sec >= FROM_TIMEOUT_S) {
			p_err("%s: no complete answer in %d s", hostport, FROM_TIMEOUT_S);
			goto out;
		}
		if (len + 65536 + 1 > cap) {
			if (cap >= FROM_MAX_BODY) {
				p_err("%s: the answer is larger than %u MB: not a daemon's metrics", hostport,
				      FROM_MAX_BODY >> 20);
				goto out;
			}
			cap = cap ? cap * 2 : 1 << 20;
			nb = realloc(buf, cap);
			if (!nb) {
				p_err("out of memory");
				goto out;
			}
			buf = nb;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			p_err("%s: %s", hostport, errno == EAGAIN ? "no complete answer in 5 s" : strerror(errno));
			goto out;
		}
		if (n == 0)
			break;
		len += n;
	}
	if (!buf) {
		p_err("%s answered nothing", hostport);
		goto out;
	}
	buf[len] = '\0';
	if (strncmp(buf, "HTTP/1.", 7) || strlen(buf) < 12 || strncmp(buf + 8, " 200", 4)) {
		p_err("%s did not answer 200 OK to GET /metrics: '%.40s'", hostport, buf);
		goto out;
	}
	body = strstr(buf, "\r\n\r\n");
	if (!body) {
		p_err("%s: an HTTP answer without a body", hostport);
		goto out;
	}
	memmove(buf, body + 4, len - (body + 4 - buf) + 1);
	body = buf;
	buf = NULL;
out:
	free(buf);
	if (fd >= 0)
		close(fd);
	return body;
}

/* A label's value (the exposition's escapes undone) into out; 0, or -1
 * for a label set that is not well formed. */
static int label(const char *labels, const char *name, char *out, size_t len)
{
	size_t nl = strlen(name), o = 0;
	const char *p = labels;

	while (*p && *p != '}') {
		const char *eq = strchr(p, '=');
		bool match;

		if (!eq || eq[1] != '"')
			return -1;
		match = (size_t)(eq - p) == nl && !strncmp(p, name, nl);
		p = eq + 2;
		while (*p && *p != '"') {
			char ch = *p;

			if (ch == '\\') {
				ch = p[1] == 'n' ? '\n' : p[1];
				if (!ch)
					return -1;
				p++;
			}
			if (match && o + 1 < len)
				out[o++] = ch;
			p++;
		}
		if (*p != '"')
			return -1;
		if (match) {
			out[o] = '\0';
			return 0;
		}
		p++;
		if (*p == ',')
			p++;
	}
	return -1;
}

static struct frule *rule_get(struct frule **v, size_t *n, __u32 id)
{
	struct frule *nv;

	for (size_t i = 0; i < *n; i++)
		if ((*v)[i].id == id)
			return &(*v)[i];
	if (*n >= FROM_MAX_RULES)
		return NULL;
	nv = realloc(*v, (*n + 1) * sizeof(**v));
	if (!nv)
		return NULL;
	*v = nv;
	memset(&nv[*n], 0, sizeof(*nv));
	nv[*n].id = id;
	return &nv[(*n)++];
}

static void hist_bucket(struct fhist *h, const char *le, double v)
{
	char *end;
	double b = !strcmp(le, "+Inf") ? __builtin_inf() : strtod(le, &end);

	if (h->n > XRL_SG_HIST_BOUNDS) {
		h->bad = true;
		return;
	}
	/* a bound that is no number, or a count no u64 holds, is no record:
	 * a NaN bound would pass the order check and read back as rate 0 */
	if (b != b || (b == __builtin_inf() && strcmp(le, "+Inf")) || !(v >= 0 && v < 1.8e19)) {
		h->bad = true;
		return;
	}
	h->le[h->n] = b;
	h->cum[h->n++] = (__u64)v;
}

/* The xdp_rl_suggest_* samples of a body into rules; the number of
 * samples read, or -1 (said) for a line that is not the exposition. */
static long parse(char *body, struct frule **v, size_t *n, const char *hostport)
{
	static const char fam[] = "xdp_rl_suggest_";
	long samples = 0, lineno = 0;

	for (char *l = strtok(body, "\n"); l; l = strtok(NULL, "\n")) {
		char name[64], labels[1024] = "", id[16], le[32], *sp, *val, *end;
		struct frule *fr;
		size_t nl;
		double x;

		lineno++;
		if (l[0] == '#' || !l[0])
			continue;
		if (strncmp(l, fam, sizeof(fam) - 1))
			continue;
		nl = strcspn(l, "{ ");
		if (nl >= sizeof(name))
			goto bad;
		memcpy(name, l, nl);
		name[nl] = '\0';
		sp = l + nl;
		if (*sp == '{') {
			char *close = strrchr(sp, '}');

			if (!close || (size_t)(close - sp) >= sizeof(labels))
				goto bad;
			memcpy(labels, sp + 1, close - sp);
			labels[close - sp] = '\0';
			sp = close + 1;
		}
		val = sp + strspn(sp, " ");
		x = strtod(val, &end);
		/* every figure of the record is a count or a rate: finite, >= 0 */
		if (end == val || !(x >= 0 && x < 1.8e19) || label(labels, "rule", id, sizeof(id)))
			goto bad;
		fr = rule_get(v, n, (__u32)strtoul(id, NULL, 10));
		if (!fr) {
			p_err("%s: too many rules in the record (at most %d)", hostport, FROM_MAX_RULES);
			return -1;
		}
		samples++;
		if (!strcmp(name, "xdp_rl_suggest_rule_info")) {
			if (label(labels, "line", fr->line, sizeof(fr->line)))
				goto bad;
		} else if (!strcmp(name, "xdp_rl_suggest_key_rate_bucket") ||
			   !strcmp(name, "xdp_rl_suggest_key_burst_bucket")) {
			if (label(labels, "le", le, sizeof(le)))
				goto bad;
			hist_bucket(name[19] == 'r' ? &fr->rate : &fr->burst, le, x);
		} else if (!strcmp(name, "xdp_rl_suggest_key_rate_count")) {
			fr->rate.count = (__u64)x;
		} else if (!strcmp(name, "xdp_rl_suggest_seconds")) {
			fr->seconds = x;
		} else if (!strcmp(name, "xdp_rl_suggest_spans_total")) {
			fr->spans = (__u64)x;
		} else if (!strcmp(name, "xdp_rl_suggest_new_keys_peak")) {
			fr->nk_peak = x;
		} else if (!strcmp(name, "xdp_rl_suggest_aggregate_peak")) {
			fr->agg_peak = x;
		} else if (!strcmp(name, "xdp_rl_suggest_aggregate_burst_peak")) {
			fr->agg_burst = x;
		} else if (!strcmp(name, "xdp_rl_suggest_keys_not_sampled_total")) {
			fr->not_sampled = (__u64)x;
		}
	}
	return samples;
bad:
	p_err("%s: line %ld of /metrics is not a Prometheus sample of the daemon's record", hostport, lineno);
	return -1;
}

static double up_div(__u64 a, __u64 b)
{
	return (double)((a + b - 1) / b);
}

static __u64 clamp(__u64 v, __u64 hi)
{
	return v > hi ? hi : v;
}

static const char *th(unsigned n)
{
	if (n % 100 >= 11 && n % 100 <= 13)
		return "th";
	return n % 10 == 1 ? "st" : n % 10 == 2 ? "nd" : n % 10 == 3 ? "rd" : "th";
}

/* One rule's proposal, printed; 0, or 1 (said) for a record that makes no
 * sense. */
static int propose(const struct frule *fr, const struct xrl_cmd *c)
{
	const unsigned pc = c->suggest.percentile, hr = c->suggest.headroom;
	struct xrl_parse_err pe = { 0 };
	struct xrl_cmd rc = { 0 };
	__u64 rank, brank, rate = 0, burst = 0, nk, agg, aggb;
	double pr, pb, need;
	char pfx[64], line[512] = "";

	if (!fr->line[0] || xrl_cmd_parse_line(fr->line, XRL_IN_CLI, &rc, &pe) || rc.kind != XRL_CMD_RULE_ADD) {
		p_err("%s: rule %u's line in the record is not a rule (%s)", c->suggest.from, fr->id,
		      fr->line[0] ? pe.msg : "none");
		return 1;
	}
	if (fr->rate.bad || fr->burst.bad || !fr->rate.n || !fr->burst.n) {
		p_err("%s: rule %u's histograms are missing or malformed", c->suggest.from, fr->id);
		return 1;
	}
	pr = xrl_sg_hist_percentile(fr->rate.le, fr->rate.cum, fr->rate.n, pc, &rank);
	pb = xrl_sg_hist_percentile(fr->burst.le, fr->burst.cum, fr->burst.n, pc, &brank);
	if (pr == -EINVAL || pb == -EINVAL || fr->rate.cum[fr->rate.n - 1] != fr->burst.cum[fr->burst.n - 1]) {
		p_err("%s: rule %u's histograms are malformed (bounds or counts out of order)", c->suggest.from, fr->id);
		return 1;
	}
	if (pr < 0 || pb < 0) {
		p_err("%s: rule %u: the percentile lies past the record's last bound (1e8)", c->suggest.from, fr->id);
		return 1;
	}
	xrl_prefix_format(&rc.rule, pfx, sizeof(pfx));
	/* at least the keys of a span (on average: the record keeps no
	 * distinct count): the proposal applied is a new rule, to which every
	 * key is new at once, and a key the budget refuses has no bucket */
	need = fr->nk_peak;
	if (fr->spans && (double)fr->rate.cum[fr->rate.n - 1] / fr->spans > need)
		need = up_div(fr->rate.cum[fr->rate.n - 1], fr->spans);
	nk = clamp(xrl_sg_headroom(need, hr), XRL_RATE_MAX_PER_SEC);
	agg = clamp(xrl_sg_headroom(fr->agg_peak, hr), XRL_RATE_MAX_PER_SEC);
	aggb = xrl_sg_headroom(fr->agg_burst, hr);
	if (rank) {
		struct xrl_rule_entry e = rc.rule;

		rate = clamp(xrl_sg_headroom(pr, hr), XRL_RATE_MAX_PER_SEC);
		burst = xrl_sg_headroom(pb, hr);
		e.r.rate_count = rate;
		e.r.rate_period_ns = 1000000000ULL;
		e.r.burst = burst;
		e.r.agg_rate_count = agg ? agg : rate;
		e.r.agg_rate_period_ns = 1000000000ULL;
		e.r.agg_burst = aggb ? aggb : burst;
		e.r.nk_rate_count = nk;
		e.r.nk_rate_period_ns = nk ? 1000000000ULL : 0;
		e.r.dry_run = 0;	/* the proposal is what to enforce */
		xrl_rule_config_format(&e, line, sizeof(line));
		/* the line is printed only if rule add takes it: a record of
		 * bursts no rate refills within the rule's limits (a lying or
		 * broken daemon) is said, not proposed */
		struct xrl_cmd chk = { 0 };

		memset(&pe, 0, sizeof(pe));
		if (xrl_cmd_parse_line(line, XRL_IN_CLI, &chk, &pe) || chk.kind != XRL_CMD_RULE_ADD) {
			p_err("%s: rule %u: the record gives a rule that rule add refuses (%s): %s",
			      c->suggest.from, fr->id, pe.msg, line);
			return 1;
		}
	}
	if (opt.json) {
		jw_obj_start(&jw);
		jw_ku64(&jw, "rule", fr->id);
		jw_kstr(&jw, "prefix", pfx);
		jw_kstr(&jw, "from", c->suggest.from);
		jw_ku64(&jw, "seconds", (__u64)fr->seconds);
		jw_ku64(&jw, "spans", fr->spans);
		jw_ku64(&jw, "percentile", pc);
		jw_ku64(&jw, "headroom_pct", hr);
		jw_ku64(&jw, "observations", fr->rate.cum[fr->rate.n - 1]);
		jw_ku64(&jw, "keys_not_sampled", fr->not_sampled);
		if (rank) {
			jw_ku64(&jw, "rate", rate);
			jw_ku64(&jw, "burst", burst);
			jw_ku64(&jw, "new_keys", nk);
			jw_ku64(&jw, "aggregate", agg ? agg : rate);
			jw_ku64(&jw, "aggregate_burst", aggb ? aggb : burst);
			jw_kstr(&jw, "line", line);
		}
		jw_key(&jw, "figures");
		jw_obj_start(&jw);
		jw_ku64(&jw, "percentile_rank", rank);
		jw_ku64(&jw, "percentile_rate", (__u64)pr);
		jw_ku64(&jw, "percentile_burst", (__u64)pb);
		jw_ku64(&jw, "new_keys_peak", (__u64)(fr->nk_peak + 0.5));
		jw_ku64(&jw, "aggregate_peak", (__u64)(fr->agg_peak + 0.5));
		jw_ku64(&jw, "aggregate_max_burst", (__u64)fr->agg_burst);
		jw_obj_end(&jw);
		jw_obj_end(&jw);
		return 0;
	}
	printf("# rule %u (%s): the daemon's record at %s, %.0f s, %llu spans of 5 s, %llu key-spans\n", fr->id, pfx,
	       c->suggest.from, fr->seconds, (unsigned long long)fr->spans,
	       (unsigned long long)fr->rate.cum[fr->rate.n - 1]);
	if (!rank) {
		printf("#   no traffic recorded: nothing to propose\n");
		return 0;
	}
	printf("#   rate       %llu/s: the %u%s percentile of the key-spans' rates is at most %g/s (rank %llu), + %u %%\n",
	       (unsigned long long)rate, pc, th(pc), pr, (unsigned long long)rank, hr);
	printf("#   burst      %llu: the %u%s percentile of the key-spans' bursts is at most %g, + %u %%\n",
	       (unsigned long long)burst, pc, th(pc), pb, hr);
	printf("#   new-keys   %llu/s: the most keys new in a second, %.0f, or the keys of a span if more, + %u %%\n",
	       (unsigned long long)nk, fr->nk_peak, hr);
	printf("#   aggregate  %llu/s burst %llu: the most of all keys over a span, %.0f/s (burst %.0f), + %u %%\n",
	       (unsigned long long)(agg ? agg : rate), (unsigned long long)(aggb ? aggb : burst), fr->agg_peak,
	       fr->agg_burst, hr);
	if (fr->not_sampled)
		printf("#   %llu key-walks were not sampled (the record holds 65536 keys a span)\n",
		       (unsigned long long)fr->not_sampled);
	printf("%s\n", line);
	return 0;
}

int do_suggest_from(struct xrl_cmd *c)
{
	struct frule *v = NULL;
	size_t n = 0, shown = 0;
	char *body = fetch_metrics(c->suggest.from);
	long samples;
	int rc = 1;

	if (!body)
		return 1;
	samples = parse(body, &v, &n, c->suggest.from);
	if (samples < 0)
		goto out;
	if (!samples) {
		p_err("%s serves no xdp_rl_suggest_* metrics: start xdp-rld with --suggest (docs/suggest.md)",
		      c->suggest.from);
		goto out;
	}
	if (opt.json)
		jw_arr_start(&jw);
	rc = 0;
	for (size_t i = 0; i < n; i++) {
		if (c->suggest.rule && v[i].id != c->suggest.rule)
			continue;
		shown++;
		if (propose(&v[i], c)) {
			rc = 1;
			break;
		}
	}
	if (opt.json) {
		jw_arr_end(&jw);
		if (!rc)
			jw_finish(&jw);
	}
	if (!rc && !shown) {
		p_err("the daemon at %s records no rule %u (it records token-bucket rules of packets)",
		      c->suggest.from, c->suggest.rule);
		rc = 1;
	}
out:
	free(v);
	free(body);
	return rc;
}
