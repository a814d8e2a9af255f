// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The HTTP side of /metrics (and of the status page and its read-only
 * API, /api/v1/...): libmicrohttpd, one polling thread, and the policy for
 * clients that hold connections. */
#include "metrics.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <linux/tcp.h>
#include <microhttpd.h>

#include "text/config.h"

/*
 * Slow clients (README, "Privileges"): one polling thread serves every
 * connection, so a client that sends nothing blocks no other; what it holds
 * is a connection slot, for at most XRL_METRICS_TIMEOUT_S of silence (a
 * client that trickles a byte at a time holds it longer). A new connection
 * is never refused for the slots others hold: when its address holds
 * XRL_METRICS_PER_IP already, the least recently active connection of that
 * address is closed for it; when the server holds XRL_METRICS_CONNECTIONS,
 * the least recently active of all. Active means progress: bytes read from
 * it or sent to it and acknowledged (TCP_INFO), a request answered. A reader
 * that stalls the answer being sent makes none, so it goes before a newer
 * connection; and one younger than XRL_METRICS_YOUNG_MS goes only after
 * every older one. A scrape needs a few milliseconds from its connect to its
 * answer, in which dozens of new connections would have to come from its
 * address to push it out; and one address can only push out its own
 * connections until the server is full,
 * so a host that scrapes from another address (Prometheus) is not touched
 * by one that holds many. With the default loopback bind every local user
 * shares 127.0.0.1 (and may bind any 127/8 address): hence eviction, not a
 * refusal. A request has 16 KiB of buffer.
 */
#define XRL_METRICS_CONNECTIONS	256U
#define XRL_METRICS_PER_IP	16U
#define XRL_METRICS_TIMEOUT_S	5U
#define XRL_METRICS_BACKLOG	64
#define XRL_METRICS_YOUNG_MS	300ULL
/* libmicrohttpd's own limit: the evicted are counted until it closes them
 * (its next poll), so it has room above ours */
#define XRL_METRICS_MHD_LIMIT	(2 * XRL_METRICS_CONNECTIONS)

/* One TCP connection, from its accept to its close (the server's thread
 * alone reads and writes these). */
struct conn {
	struct conn *next, *prev;
	struct sockaddr_storage addr;
	int fd;
	unsigned long long seq;	/* accepted or last answered: lower is older */
	unsigned long long born_ns, progress_ns;	/* accepted; last progress seen */
	unsigned long long bytes;	/* acknowledged + received, when last seen */
	bool evicted;		/* shut down for a newer one; closing */
};

struct xrl_metrics {
	struct MHD_Daemon *mhd;
	xrl_metrics_fill fill;
	void *ctx;
	struct conn *conns;
	unsigned long long seq;
};

static bool same_addr(const struct sockaddr *a, const struct sockaddr_storage *b)
{
	if (a->sa_family != b->ss_family)
		return false;
	if (a->sa_family == AF_INET)
		return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
		       ((const struct sockaddr_in *)b)->sin_addr.s_addr;
	if (a->sa_family == AF_INET6)
		return !memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
			       &((const struct sockaddr_in6 *)b)->sin6_addr, sizeof(struct in6_addr));
	return false;
}

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ULL + (unsigned long long)ts.tv_nsec;
}

/* Bytes moved either way since the last look: progress, now. */
static void progress_seen(struct conn *c, unsigned long long now)
{
	struct tcp_info ti;
	socklen_t len = sizeof(ti);

	memset(&ti, 0, sizeof(ti));
	if (getsockopt(c->fd, IPPROTO_TCP, TCP_INFO, &ti, &len))
		return;
	if (ti.tcpi_bytes_acked + ti.tcpi_bytes_received != c->bytes) {
		c->bytes = ti.tcpi_bytes_acked + ti.tcpi_bytes_received;
		c->progress_ns = now;
	}
}

/* Is a a better connection to close than b? An older one before one
 * younger than XRL_METRICS_YOUNG_MS, then the longest without progress
 * (whether it waits for a request or its answer is being sent), then the
 * least recently accepted or answered. */
static bool evict_before(const struct conn *a, const struct conn *b, unsigned long long now)
{
	bool young_a, young_b;

	if (!b)
		return true;
	young_a = now - a->born_ns < XRL_METRICS_YOUNG_MS * 1000000ULL;
	young_b = now - b->born_ns < XRL_METRICS_YOUNG_MS * 1000000ULL;
	if (young_a != young_b)
		return !young_a;
	if (a->progress_ns != b->progress_ns)
		return a->progress_ns < b->progress_ns;
	return a->seq < b->seq;
}

/* A new connection from addr: make room for it (never refused). */
static enum MHD_Result accept_policy(void *cls, const struct sockaddr *addr, socklen_t len)
{
	struct xrl_metrics *m = cls;
	struct conn *mine = NULL, *any = NULL, *victim = NULL;
	unsigned int nmine = 0, nall = 0;
	unsigned long long now = now_ns();

	(void)len;
	for (struct conn *c = m->conns; c; c = c->next) {
		if (c->evicted)
			continue;
		nall++;
		progress_seen(c, now);
		if (same_addr(addr, &c->addr)) {
			nmine++;
			if (evict_before(c, mine, now))
				mine = c;
		}
		if (evict_before(c, any, now))
			any = c;
	}
	if (nmine >= XRL_METRICS_PER_IP)
		victim = mine;
	else if (nall >= XRL_METRICS_CONNECTIONS)
		victim = any;
	if (victim) {
		/* the server's poll sees the end of the stream and closes it:
		 * the fd stays the server's until then (this thread) */
		shutdown(victim->fd, SHUT_RDWR);
		victim->evicted = true;
		xrl_log(XRL_LOG_DEBUG, "metrics: closed the least recently active connection of %s for a new one",
			victim == mine ? "its address" : "the server");
	}
	return MHD_YES;
}

static void notify_conn(void *cls, struct MHD_Connection *mc, void **socket_ctx,
			enum MHD_ConnectionNotificationCode toe)
{
	struct xrl_metrics *m = cls;
	struct conn *c = *socket_ctx;

	if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *fd = MHD_get_connection_info(mc, MHD_CONNECTION_INFO_CONNECTION_FD);
		const union MHD_ConnectionInfo *ad = MHD_get_connection_info(mc, MHD_CONNECTION_INFO_CLIENT_ADDRESS);

		c = calloc(1, sizeof(*c));
		if (!c || !fd || !ad || !ad->client_addr) {
			free(c);	/* untracked: it cannot be evicted, nothing worse */
			return;
		}
		c->fd = fd->connect_fd;
		memcpy(&c->addr, ad->client_addr,
		       ad->client_addr->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) :
		       sizeof(struct sockaddr_in));
		c->seq = ++m->seq;
		c->born_ns = c->progress_ns = now_ns();
		c->next = m->conns;
		if (m->conns)
			m->conns->prev = c;
		m->conns = c;
		*socket_ctx = c;
	} else if (toe == MHD_CONNECTION_NOTIFY_CLOSED && c) {
		if (c->prev)
			c->prev->next = c->next;
		else
			m->conns = c->next;
		if (c->next)
			c->next->prev = c->prev;
		free(c);
		*socket_ctx = NULL;
	}
}

/* A request answered (or abandoned): the connection is active now, and
 * waits for its next request. */
static void request_done(void *cls, struct MHD_Connection *mc, void **state,
			 enum MHD_RequestTerminationCode toe)
{
	const union MHD_ConnectionInfo *i = MHD_get_connection_info(mc, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	struct xrl_metrics *m = cls;
	struct conn *c = i ? i->socket_context : NULL;

	(void)state;
	(void)toe;
	if (c) {
		c->seq = ++m->seq;
		c->progress_ns = now_ns();
	}
}

/* The handler queued a response on mc. */
static void answering(struct xrl_metrics *m, struct MHD_Connection *mc)
{
	const union MHD_ConnectionInfo *i = MHD_get_connection_info(mc, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	struct conn *c = i ? i->socket_context : NULL;

	if (c)
		c->seq = ++m->seq;
}

static enum MHD_Result reply(struct MHD_Connection *c, unsigned code, const char *type,
			     char *body, size_t len)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
	enum MHD_Result ret;

	MHD_add_response_header(r, "Content-Type", type);
	/* read-only, and a page that loads nothing from elsewhere: the
	 * browser is told so, whatever a rule or a key might ever contain */
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(r, "Cache-Control", "no-store");
	if (code == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(r, "Allow", "GET, HEAD");
	if (!strncmp(type, "text/html", 9))
		MHD_add_response_header(r, "Content-Security-Policy",
					"default-src 'none'; script-src 'unsafe-inline'; "
					"style-src 'unsafe-inline'; connect-src 'self'; img-src data:; "
					"base-uri 'none'; form-action 'none'; frame-ancestors 'none'");
	ret = MHD_queue_response(c, code, r);
	MHD_destroy_response(r);
	return ret;
}

/* What the server serves: every path, its page and its type. */
static const struct {
	const char *path;
	enum xrl_http_page page;
	const char *type;
} pages[] = {
	{ "/metrics", XRL_PAGE_METRICS, "text/plain; version=0.0.4; charset=utf-8" },
	{ "/api/v1/status", XRL_PAGE_STATUS, "application/json" },
	{ "/api/v1/rules", XRL_PAGE_RULES, "application/json" },
	{ "/api/v1/top", XRL_PAGE_TOP, "application/json" },
	{ "/", XRL_PAGE_INDEX, "text/html; charset=utf-8" },
};
static const char not_found[] = "see /metrics, /api/v1/status, /api/v1/rules, /api/v1/top or /\n";

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
			      const char *method, const char *version, const char *upload,
			      size_t *upload_len, void **state)
{
	struct xrl_metrics *m = cls;
	char *body = NULL;
	size_t len = 0, i;
	FILE *f;

	(void)version;
	(void)upload;
	(void)upload_len;
	(void)state;
	answering(m, c);
	/* read-only: a request that would change something has no place */
	if (strcmp(method, "GET") && strcmp(method, "HEAD"))
		return reply(c, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain", strdup("GET only\n"), 9);
	for (i = 0; i < sizeof(pages) / sizeof(pages[0]); i++)
		if (!strcmp(url, pages[i].path))
			break;
	if (i == sizeof(pages) / sizeof(pages[0]))
		return reply(c, MHD_HTTP_NOT_FOUND, "text/plain", strdup(not_found), strlen(not_found));
	f = open_memstream(&body, &len);
	if (!f)
		return MHD_NO;
	if (m->fill(f, pages[i].page, m->ctx)) {
		fclose(f);
		free(body);
		return reply(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "text/plain",
			     strdup("cannot read the maps\n"), 21);
	}
	fclose(f);
	return reply(c, MHD_HTTP_OK, pages[i].type, body, len);
}

/*
 * libmicrohttpd's own messages (a request too big, the connection limit
 * reached, ...): what any client can cause, once per request. Through the
 * daemon's bounded log queue at debug level, never straight to stderr from
 * the server's thread: a client must not be able to flood the journal, nor
 * a stalled stderr hold up the scrapes.
 */
static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	char msg[512];

	(void)cls;
	if (vsnprintf(msg, sizeof(msg), fmt, ap) < 0)
		return;
	xrl_log(XRL_LOG_DEBUG, "metrics: %s", msg);
}

int xrl_metrics_start(const char *hostport, xrl_metrics_fill fill, void *ctx,
		      struct xrl_metrics **out)
{
	struct sockaddr_storage ss;
	struct xrl_metrics *m;
	socklen_t sl;
	char why[160];
	int fd, one = 1, err;

	/* the grammar and --check accept exactly what this binds */
	if (xrl_hostport_sockaddr(hostport, &ss, &sl, why, sizeof(why)))
		return -EINVAL;
	/* our own socket: a bind error is reported for what it is */
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, sl) || listen(fd, XRL_METRICS_BACKLOG)) {
		err = -errno;
		close(fd);
		return err;
	}
	m = calloc(1, sizeof(*m));
	if (!m) {
		close(fd);
		return -ENOMEM;
	}
	m->fill = fill;
	m->ctx = ctx;
	/* one internal thread: the accept policy, the notifications and the
	 * handler all run on it, so struct conn needs no lock */
	m->mhd = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL | MHD_USE_ERROR_LOG, 0,
				  accept_policy, m, handle, m, MHD_OPTION_LISTEN_SOCKET, fd,
				  MHD_OPTION_CONNECTION_LIMIT, XRL_METRICS_MHD_LIMIT,
				  MHD_OPTION_NOTIFY_CONNECTION, notify_conn, m,
				  MHD_OPTION_NOTIFY_COMPLETED, request_done, m,
				  MHD_OPTION_CONNECTION_TIMEOUT, XRL_METRICS_TIMEOUT_S,
				  MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)16384,
				  MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL,
				  MHD_OPTION_END);
	if (!m->mhd) {
		close(fd);
		free(m);
		return -ENOMEM;
	}
	*out = m;
	return 0;
}

void xrl_metrics_stop(struct xrl_metrics *m)
{
	if (!m)
		return;
	MHD_stop_daemon(m->mhd);	/* closes each connection: notify_conn() frees it */
	while (m->conns) {
		struct conn *c = m->conns;

		m->conns = c->next;
		free(c);
	}
	free(m);
}
