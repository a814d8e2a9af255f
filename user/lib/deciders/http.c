// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * libxrl, the deciders' transport: one bounded HTTP/1.1 GET (http.h).
 * A non-blocking socket and poll() in slices, so that a stop is seen
 * within one; the answer is parsed as it arrives, so that a server which
 * keeps the connection open after a whole answer costs nothing.
 */
#include "deciders/http.h"
#include "base/log.h"
#include "base/strict.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define SLICE_MS	20

static double mono_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* fd ready for ev by the deadline: 0, -ETIMEDOUT, -ECANCELED or -errno */
static int wait_fd(int fd, short ev, double deadline, const bool *stop)
{
	for (;;) {
		struct pollfd p = { .fd = fd, .events = ev };
		double left = deadline - mono_ms();
		int n;

		if (stop && __atomic_load_n(stop, __ATOMIC_ACQUIRE))
			return -ECANCELED;
		if (left <= 0)
			return -ETIMEDOUT;
		n = poll(&p, 1, left > SLICE_MS ? SLICE_MS : (int)left + 1);
		if (n < 0 && errno != EINTR)
			return -errno;
		if (n > 0)
			return 0;
	}
}

/* the answer as it is read: raw bytes, and what is known of them */
struct rd {
	char *buf;
	size_t len, cap, limit;
	size_t hdr_end;		/* offset of the body; 0: headers not whole yet */
	int status;
	enum { BY_CLOSE, BY_LENGTH, BY_CHUNKS } framing;
	size_t clen;		/* BY_LENGTH */
	size_t chunk_at;	/* BY_CHUNKS: the next chunk's size line */
	size_t body_len;	/* BY_CHUNKS: the body so far */
	bool done;
};

static int proto(const char *what)
{
	return xrl_fail(EPROTO, "not an HTTP answer: %s", what);
}

static bool tchar(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       strchr("!#$%&'*+-.^_`|~", c);
}

/* the status line and the headers, [0, hdr_end - 2) with CRLF ends */
static int parse_head(struct rd *d, const struct xrl_http_req *q)
{
	char *p = d->buf, *end = d->buf + d->hdr_end - 2;
	bool has_len = false, has_te = false;

	if (end - p < 12 || (memcmp(p, "HTTP/1.1 ", 9) && memcmp(p, "HTTP/1.0 ", 9)) ||
	    p[9] < '1' || p[9] > '5' || p[10] < '0' || p[10] > '9' || p[11] < '0' || p[11] > '9' ||
	    (p[12] != ' ' && p[12] != '\r'))
		return proto("bad status line");
	d->status = (p[9] - '0') * 100 + (p[10] - '0') * 10 + (p[11] - '0');
	p = memchr(p, '\n', end - p + 2);
	if (!p || p[-1] != '\r')
		return proto("bad status line");
	p++;
	while (p < end) {
		char *eol = memchr(p, '\n', end - p + 2), *colon, *v, *ve;

		if (!eol || eol[-1] != '\r')
			return proto("a header line without CRLF");
		colon = memchr(p, ':', eol - p);
		if (!colon || colon == p)
			return proto("a header line without a name");
		for (char *c = p; c < colon; c++)
			if (!tchar(*c))
				return proto("a bad header name");	/* folding included */
		v = colon + 1;
		ve = eol - 1;
		while (v < ve && (*v == ' ' || *v == '\t'))
			v++;
		while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t'))
			ve--;
		for (char *c = v; c < ve; c++)
			if ((unsigned char)*c < 0x20 && *c != '\t')
				return proto("a control character in a header");
		if (colon - p == 14 && !strncasecmp(p, "Content-Length", 14)) {
			char num[24];
			__u64 n;

			if (ve - v >= (long)sizeof(num))
				return proto("a bad Content-Length");
			memcpy(num, v, ve - v);
			num[ve - v] = '\0';
			if (xrl_dec_parse(num, 0, ~0ull >> 1, &n))
				return proto("a bad Content-Length");
			if (has_len && n != d->clen)
				return proto("two Content-Lengths");
			if (n > q->max_body)
				return xrl_fail(EMSGSIZE, "the answer's body (%llu bytes) is over the cap of %zu",
						(unsigned long long)n, q->max_body);
			d->clen = n;
			has_len = true;
		} else if (colon - p == 17 && !strncasecmp(p, "Transfer-Encoding", 17)) {
			if (ve - v != 7 || strncasecmp(v, "chunked", 7) || has_te)
				return proto("a Transfer-Encoding other than chunked");
			has_te = true;
		}
		p = eol + 1;
	}
	if (has_len && has_te)
		return proto("both Content-Length and chunked");
	d->framing = has_te ? BY_CHUNKS : has_len ? BY_LENGTH : BY_CLOSE;
	d->chunk_at = d->hdr_end;
	return 0;
}

/* Walk the chunks read so far; done at the last one (its trailer must be
 * empty: a trailer is refused). */
static int scan_chunks(struct rd *d, const struct xrl_http_req *q)
{
	while (!d->done) {
		char *line = d->buf + d->chunk_at, *eol;
		size_t have = d->len - d->chunk_at, size = 0, i;

		eol = memchr(line, '\n', have);
		if (!eol) {
			if (have > 32)
				return proto("a bad chunk size");
			return 0;
		}
		if (eol == line || eol[-1] != '\r')
			return proto("a chunk size line without CRLF");
		for (i = 0; line + i < eol - 1 && line[i] != ';'; i++) {
			char c = line[i];
			int v = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 :
				c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;

			if (v < 0 || i >= 15)
				return proto("a bad chunk size");
			size = size * 16 + v;
		}
		if (!i)
			return proto("a bad chunk size");
		if (size > q->max_body - d->body_len)
			return xrl_fail(EMSGSIZE, "the answer's body is over the cap of %zu bytes", q->max_body);
		/* the size line, the data, its CRLF (the last chunk: the empty trailer's CRLF) */
		if (have < (size_t)(eol + 1 - line) + size + 2)
			return 0;
		if (memcmp(eol + 1 + size, "\r\n", 2))
			return proto("a chunk without its CRLF");
		d->body_len += size;
		d->chunk_at += (eol + 1 - line) + size + 2;
		if (!size)
			d->done = true;
	}
	return 0;
}

/* what arrived: the headers once whole, then whether the body is */
static int advance(struct rd *d, const struct xrl_http_req *q)
{
	int err;

	if (!d->hdr_end) {
		char *e = NULL;

		for (size_t i = 3; i < d->len; i++)
			if (d->buf[i] == '\n' && !memcmp(d->buf + i - 3, "\r\n\r\n", 4)) {
				e = d->buf + i + 1;
				break;
			}
		if (!e) {
			if (d->len > XRL_HTTP_MAX_HEADERS)
				return xrl_fail(EMSGSIZE, "the answer's headers are over %u bytes", XRL_HTTP_MAX_HEADERS);
			return 0;
		}
		d->hdr_end = e - d->buf;
		err = parse_head(d, q);
		if (err)
			return err;
	}
	switch (d->framing) {
	case BY_LENGTH:
		if (d->len - d->hdr_end > d->clen)
			return proto("more bytes than Content-Length");
		d->done = d->len - d->hdr_end == d->clen;
		return 0;
	case BY_CHUNKS:
		return scan_chunks(d, q);
	default:
		if (d->len - d->hdr_end > q->max_body)
			return xrl_fail(EMSGSIZE, "the answer's body is over the cap of %zu bytes", q->max_body);
		return 0;
	}
}

/* the body out of the raw bytes, in place */
static void body_of(struct rd *d, struct xrl_http_resp *r)
{
	size_t o = 0;

	if (d->framing == BY_CHUNKS) {
		size_t at = d->hdr_end;

		for (;;) {
			char *line = d->buf + at, *eol = memchr(line, '\n', d->len - at);
			size_t size = strtoul(line, NULL, 16);

			if (!size)
				break;
			memmove(d->buf + o, eol + 1, size);
			o += size;
			at += (eol + 1 - line) + size + 2;
		}
	} else {
		o = d->len - d->hdr_end;
		memmove(d->buf, d->buf + d->hdr_end, o);
	}
	d->buf[o] = '\0';
	r->status = d->status;
	r->body = d->buf;
	r->len = o;
	d->buf = NULL;
}

static int connect_to(const struct xrl_http_req *q, double deadline, int *out)
{
	struct sockaddr_storage ss = { 0 };
	struct sockaddr_in *s4 = (void *)&ss;
	struct sockaddr_in6 *s6 = (void *)&ss;
	socklen_t sl;
	int fd, err, soerr = 0;
	socklen_t el = sizeof(soerr);

	if (inet_pton(AF_INET, q->host, &s4->sin_addr) == 1) {
		s4->sin_family = AF_INET;
		s4->sin_port = htons(q->port);
		sl = sizeof(*s4);
	} else if (inet_pton(AF_INET6, q->host, &s6->sin6_addr) == 1) {
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(q->port);
		sl = sizeof(*s6);
	} else {
		return xrl_fail(EINVAL, "'%s' is not an IP address", q->host);
	}
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return xrl_fail(errno, "socket: %s", strerror(errno));
	if (connect(fd, (struct sockaddr *)&ss, sl) && errno != EINPROGRESS) {
		err = -errno;
		goto fail;
	}
	err = wait_fd(fd, POLLOUT, deadline, q->stop);
	if (err)
		goto fail;
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &el) || soerr) {
		err = -(soerr ?: errno);
		goto fail;
	}
	*out = fd;
	return 0;
fail:
	close(fd);
	return xrl_fail(err, "cannot connect to %s:%d: %s", q->host, q->port,
			err == -ETIMEDOUT ? "no answer by the deadline" : strerror(-err));
}

int xrl_http_get(const struct xrl_http_req *q, struct xrl_http_resp *r)
{
	double deadline = mono_ms() + q->timeout_ms;
	struct rd d = { 0 };
	char req[1024];
	int fd = -1, err, n;
	size_t sent = 0;

	memset(r, 0, sizeof(*r));
	n = snprintf(req, sizeof(req),
		     "GET %s HTTP/1.1\r\nHost: %s%s%s:%d\r\nUser-Agent: xdp-rld\r\nAccept: application/json\r\n"
		     "Connection: close\r\n%s%s\r\n",
		     q->path, strchr(q->host, ':') ? "[" : "", q->host, strchr(q->host, ':') ? "]" : "",
		     q->port, q->header ?: "", q->header ? "\r\n" : "");
	if (n < 0 || (size_t)n >= sizeof(req) || strpbrk(q->path, "\r\n ") ||
	    (q->header && strpbrk(q->header, "\r\n")))
		return xrl_fail(EINVAL, "the request does not fit in one line per header");
	err = connect_to(q, deadline, &fd);
	if (err)
		return err;
	while (sent < (size_t)n) {
		ssize_t w = send(fd, req + sent, n - sent, MSG_NOSIGNAL);

		if (w < 0 && (errno == EAGAIN || errno == EINTR)) {
			err = wait_fd(fd, POLLOUT, deadline, q->stop);
			if (err)
				goto timeout;
			continue;
		}
		if (w < 0) {
			err = xrl_fail(errno, "sending to %s:%d: %s", q->host, q->port, strerror(errno));
			goto cleanup;
		}
		sent += w;
	}
	/* the raw answer's cap: the headers, the body, the chunks' framing */
	d.limit = XRL_HTTP_MAX_HEADERS + q->max_body + q->max_body / 8 + 4096;
	while (!d.done) {
		ssize_t got;

		if (d.len + 1 >= d.cap) {
			size_t cap = d.cap ? d.cap * 2 : 16384;
			char *nb;

			if (cap > d.limit + 1)
				cap = d.limit + 1;
			if (d.len + 1 >= cap) {
				err = xrl_fail(EMSGSIZE, "the answer is over %zu bytes", d.limit);
				goto cleanup;
			}
			nb = realloc(d.buf, cap);
			if (!nb) {
				err = xrl_fail(ENOMEM, "out of memory for the answer");
				goto cleanup;
			}
			d.buf = nb;
			d.cap = cap;
		}
		got = recv(fd, d.buf + d.len, d.cap - 1 - d.len, 0);
		if (got < 0 && (errno == EAGAIN || errno == EINTR)) {
			err = wait_fd(fd, POLLIN, deadline, q->stop);
			if (err)
				goto timeout;
			continue;
		}
		if (got < 0) {
			err = xrl_fail(errno, "reading from %s:%d: %s", q->host, q->port, strerror(errno));
			goto cleanup;
		}
		if (got == 0) {		/* the close */
			if (!d.hdr_end) {
				err = proto(d.len ? "the connection closed inside the headers" : "the connection closed with no answer");
				goto cleanup;
			}
			if (d.framing != BY_CLOSE) {
				err = proto("the connection closed inside the body");
				goto cleanup;
			}
			break;
		}
		d.len += got;
		err = advance(&d, q);
		if (err)
			goto cleanup;
	}
	body_of(&d, r);
	err = 0;
	goto cleanup;
timeout:
	err = xrl_fail(err, "%s:%d: %s", q->host, q->port,
		       err == -ECANCELED ? "stopped" : "no whole answer by the deadline");
cleanup:
	free(d.buf);
	if (fd >= 0)
		close(fd);
	return err;
}
