// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * libxrl: load or reuse the pinned maps, attach and detach, apply rule sets
 * as one transaction, read counters and walk buckets.
 */
#include "libxrl.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>
#include <linux/if_link.h>
#include <linux/magic.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "xrl_meter.h"
#include "xdp_rl.skel.h"

#define PROG_PIN	"xdp_rl_prog"
#define LINK_PREFIX	"link_"
#define DAEMON_DIR	"daemon"	/* flocked by the daemon for its whole life */

enum {
	M_CONTROL, M_RULES4, M_RULES6, M_BUCKETS4, M_BUCKETS6, M_RULE_STATS, M_GLOBAL_STATS, M__COUNT
};

static const char *map_names[M__COUNT] = {
	"xrl_control", "xrl_rules4", "xrl_rules6", "xrl_buckets4",
	"xrl_buckets6", "xrl_rule_stats", "xrl_global_stats",
};

struct xrl {
	char pin_dir[PATH_MAX];
	bool pinned;
	bool created;		/* load_object() pinned a new instance */
	bool created_dir;	/* and made the directory */
	bool new_pin[M__COUNT + 1];	/* pins it made: the maps, then the program */
	bool locked;
	int lock_fd;
	int prog_fd;
	int map_fd[M__COUNT];
	struct xdp_rl *skel;	/* when this handle loaded the object */
	struct xrl_control *ctrl;	/* mmap of the control block */
	int ncpus;
	int daemon_fd;		/* the daemon's claim on the pin directory */
};

static __thread char errbuf[512];

const char *xrl_errmsg(void)
{
	return errbuf[0] ? errbuf : "unknown error";
}

static void warn_stderr(const char *msg)
{
	fprintf(stderr, "Warning: %s\n", msg);
}

static void (*warn_fn)(const char *msg) = warn_stderr;

void xrl_set_warn(void (*fn)(const char *msg))
{
	warn_fn = fn ? fn : warn_stderr;
}

__attribute__((format(printf, 1, 2)))
static void warn(const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	if (vsnprintf(msg, sizeof(msg), fmt, ap) >= (int)sizeof(msg))
		xrl_utf8_trim(msg);
	va_end(ap);
	warn_fn(msg);
}

__attribute__((format(printf, 2, 3)))
static int fail(int err, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(errbuf, sizeof(errbuf), fmt, ap);
	va_end(ap);
	if (n >= (int)sizeof(errbuf))
		xrl_utf8_trim(errbuf);
	return err < 0 ? err : -err;
}

/* ------------------------------------------------------------------ */
/* Text                                                                */

const char *xrl_dec_parse(const char *s, __u64 min, __u64 max, __u64 *out)
{
	__u64 v = 0;

	if (!s || !*s)
		return "empty";
	if (*s == '+' || *s == '-')
		return "no sign allowed";
	for (const char *p = s; *p; p++) {
		if (*p == ' ' || (*p >= '\t' && *p <= '\r'))
			return "no spaces allowed";
		if (*p < '0' || *p > '9')
			return "not a decimal number";
	}
	for (; *s; s++) {
		if (v > (~0ULL - (*s - '0')) / 10)
			return "out of range";
		v = v * 10 + (*s - '0');
	}
	if (v < min || v > max)
		return "out of range";
	*out = v;
	return NULL;
}

void xrl_utf8_trim(char *s)
{
	size_t len = strlen(s), i = len, need;

	/* back to the last lead byte, at most 3 continuation bytes away */
	while (i > 0 && len - i < 4 && ((unsigned char)s[i - 1] & 0xc0) == 0x80)
		i--;
	if (i == 0 || ((unsigned char)s[i - 1] & 0x80) == 0)
		return;
	i--;
	need = ((unsigned char)s[i] & 0xe0) == 0xc0 ? 2 :
	       ((unsigned char)s[i] & 0xf0) == 0xe0 ? 3 :
	       ((unsigned char)s[i] & 0xf8) == 0xf0 ? 4 : 1;
	if (len - i < need)
		s[i] = '\0';
}

/* ------------------------------------------------------------------ */
/* Addresses                                                           */

static bool v4mapped(const __u8 *a)
{
	static const __u8 pfx[12] = { [10] = 0xff, [11] = 0xff };

	return !memcmp(a, pfx, sizeof(pfx));
}

/* inet_pton() only: no message */
static int addr_pton(const char *s, int *family, __u8 *addr)
{
	memset(addr, 0, 16);
	if (strchr(s, ':')) {
		if (inet_pton(AF_INET6, s, addr) != 1)
			return -EINVAL;
		*family = 6;
		return 0;
	}
	if (inet_pton(AF_INET, s, addr) != 1)
		return -EINVAL;
	*family = 4;
	return 0;
}

int xrl_addr_parse(const char *s, int *family, __u8 *addr)
{
	char v4[INET_ADDRSTRLEN];

	if (addr_pton(s, family, addr))
		return fail(EINVAL, "invalid address '%s'", s);
	if (*family == 6 && v4mapped(addr)) {
		inet_ntop(AF_INET, addr + 12, v4, sizeof(v4));
		return fail(EINVAL, "'%s' is an IPv4-mapped IPv6 address, which no packet carries: did you mean %s?",
			    s, v4);
	}
	return 0;
}

void xrl_addr_format(int family, const __u8 *addr, char *buf, size_t len)
{
	inet_ntop(family == 6 ? AF_INET6 : AF_INET, addr, buf, len);
}

static void mask_bits(__u8 *out, int bits, int bytes)
{
	for (int i = 0; i < bytes; i++) {
		int b = bits - 8 * i;

		out[i] = b >= 8 ? 0xff : b <= 0 ? 0 : (__u8)(0xff << (8 - b));
	}
}

int xrl_prefix_parse(const char *s, struct xrl_rule_entry *e)
{
	char buf[INET6_ADDRSTRLEN + 8], *slash, v4[INET_ADDRSTRLEN];
	int family, maxlen, bytes;
	const char *why;
	__u8 mask[16];
	__u64 len;

	if (strlen(s) >= sizeof(buf))
		return fail(EINVAL, "invalid prefix '%s'", s);
	strcpy(buf, s);
	slash = strchr(buf, '/');
	if (slash)
		*slash = '\0';
	if (addr_pton(buf, &family, e->addr))
		return fail(EINVAL, "invalid prefix '%s': not an IPv4 or IPv6 address", s);
	maxlen = family == 6 ? 128 : 32;
	len = maxlen;
	if (slash && (why = xrl_dec_parse(slash + 1, 0, maxlen, &len)))
		return fail(EINVAL, "invalid prefix '%s': length must be 0..%d (%s)",
			    s, maxlen, why);
	bytes = maxlen / 8;
	mask_bits(mask, len, bytes);
	for (int i = 0; i < bytes; i++) {
		if (e->addr[i] & ~mask[i]) {
			char net[INET6_ADDRSTRLEN];
			__u8 a[16] = {};

			for (int j = 0; j < bytes; j++)
				a[j] = e->addr[j] & mask[j];
			xrl_addr_format(family, a, net, sizeof(net));
			return fail(EINVAL, "invalid prefix '%s': host bits set (did you mean %s/%u?)",
				    s, net, (unsigned int)len);
		}
	}
	/* ::ffff:0:0/96 and inside it; a shorter prefix holds real IPv6 too */
	if (family == 6 && len >= 96 && v4mapped(e->addr)) {
		inet_ntop(AF_INET, e->addr + 12, v4, sizeof(v4));
		if (len == 128)
			return fail(EINVAL, "invalid prefix '%s': an IPv4-mapped IPv6 address never matches (IPv4 packets are IPv4): did you mean %s?",
				    s, v4);
		return fail(EINVAL, "invalid prefix '%s': IPv4-mapped IPv6 addresses never match (IPv4 packets are IPv4): did you mean %s/%u?",
			    s, v4, (unsigned int)(len - 96));
	}
	e->family = family;
	e->prefix_len = len;
	return 0;
}

void xrl_prefix_format(const struct xrl_rule_entry *e, char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN];

	xrl_addr_format(e->family, e->addr, a, sizeof(a));
	snprintf(buf, len, "%s/%u", a, e->prefix_len);
}

const char *xrl_action_name(int action)
{
	switch (action) {
	case XRL_ACT_LIMIT: return "limit";
	case XRL_ACT_ALLOW: return "allow";
	case XRL_ACT_DENY: return "deny";
	}
	return "unknown";
}

/* ------------------------------------------------------------------ */
/* Open, load, pin                                                     */

static bool is_bpffs(const char *path)
{
	struct statfs st;

	return statfs(path, &st) == 0 && st.f_type == BPF_FS_MAGIC;
}

static int ensure_bpffs(const char *pin_dir, bool create)
{
	char parent[PATH_MAX], *slash;

	snprintf(parent, sizeof(parent), "%s", pin_dir);
	slash = strrchr(parent, '/');
	if (!slash || slash == parent)
		return fail(EINVAL, "pin directory '%s' must be inside a bpffs mount", pin_dir);
	*slash = '\0';
	if (is_bpffs(parent))
		return 0;
	/* Like other BPF tools, mount the default bpffs when it is missing. */
	if (create && !strcmp(parent, "/sys/fs/bpf")) {
		if (mount("bpf", parent, "bpf", 0, "mode=0700") == 0)
			return 0;
		return fail(errno, "cannot mount bpffs on %s: %s", parent, strerror(errno));
	}
	if (!create && !strcmp(parent, "/sys/fs/bpf"))
		return fail(ENOENT, "xdp-rl is not loaded (no bpffs at %s); run 'xdp-rlctl attach dev IFACE' first",
			    parent);
	return fail(EINVAL, "'%s' is not on a bpffs mount (mount -t bpf bpf DIR)", parent);
}

static long long mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* The pid holding the flock on fd's file, from /proc/locks; 0 if unknown. */
static int lock_holder(int fd)
{
	char line[256];
	struct stat st;
	int pid = 0;
	FILE *f;

	if (fstat(fd, &st) || !(f = fopen("/proc/locks", "re")))
		return 0;
	/* "1: FLOCK  ADVISORY  WRITE 1234 00:2d:5678 0 EOF"; waiters have "->" */
	while (!pid && fgets(line, sizeof(line), f)) {
		unsigned int maj, min;
		unsigned long ino;
		char type[16];
		int p;

		if (strstr(line, "->") ||
		    sscanf(line, "%*d: %15s %*s %*s %d %x:%x:%lu", type, &p, &maj, &min, &ino) != 5)
			continue;
		if (!strcmp(type, "FLOCK") && makedev(maj, min) == st.st_dev && ino == st.st_ino)
			pid = p;
	}
	fclose(f);
	return pid > 0 ? pid : 0;
}

static int lock_dir(struct xrl *x)
{
	long long deadline = mono_ms() + XRL_LOCK_WAIT_MS;
	char comm[32] = "";
	int pid;

	if (x->lock_fd < 0)
		x->lock_fd = open(x->pin_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (x->lock_fd < 0)
		return fail(errno, "cannot open %s: %s", x->pin_dir, strerror(errno));
	for (;;) {
		if (flock(x->lock_fd, LOCK_EX | LOCK_NB) == 0) {
			x->locked = true;
			return 0;
		}
		if (errno != EWOULDBLOCK)
			return fail(errno, "cannot lock %s: %s", x->pin_dir, strerror(errno));
		if (mono_ms() >= deadline)
			break;
		usleep(10000);
	}
	pid = lock_holder(x->lock_fd);
	if (!pid)
		return fail(EBUSY, "%s is locked by another xdp-rl process (gave up after %d ms)",
			    x->pin_dir, XRL_LOCK_WAIT_MS);
	{
		char p[64];
		FILE *f;

		snprintf(p, sizeof(p), "/proc/%d/comm", pid);
		if ((f = fopen(p, "re"))) {
			if (fgets(comm, sizeof(comm), f))
				comm[strcspn(comm, "\n")] = '\0';
			fclose(f);
		}
	}
	return fail(EBUSY, "%s is locked by another xdp-rl process (pid %d%s%s; gave up after %d ms)",
		    x->pin_dir, pid, comm[0] ? ", " : "", comm, XRL_LOCK_WAIT_MS);
}

int xrl_lock(struct xrl *x)
{
	return x->pinned ? lock_dir(x) : 0;
}

void xrl_unlock(struct xrl *x)
{
	if (x->lock_fd >= 0)
		flock(x->lock_fd, LOCK_UN);
	x->locked = false;
}

static void pin_path(const struct xrl *x, const char *name, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s", x->pin_dir, name);
}

static bool pin_exists(const struct xrl *x, const char *name)
{
	char p[PATH_MAX];

	pin_path(x, name, p, sizeof(p));
	return access(p, F_OK) == 0;
}

static int map_max_entries(int fd)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -errno;
	return info.max_entries;
}

static int rules_install_empty(struct xrl *x, int family);

static int load_object(struct xrl *x, const struct xrl_open_opts *o)
{
	struct bpf_map *maps[M__COUNT];
	char p[PATH_MAX];
	int err;

	x->skel = xdp_rl__open();
	if (!x->skel)
		return fail(errno, "cannot open the BPF object: %s", strerror(errno));
	x->skel->rodata->use_test_clock = o->test_clock;

	maps[M_CONTROL] = x->skel->maps.xrl_control;
	maps[M_RULES4] = x->skel->maps.xrl_rules4;
	maps[M_RULES6] = x->skel->maps.xrl_rules6;
	maps[M_BUCKETS4] = x->skel->maps.xrl_buckets4;
	maps[M_BUCKETS6] = x->skel->maps.xrl_buckets6;
	maps[M_RULE_STATS] = x->skel->maps.xrl_rule_stats;
	maps[M_GLOBAL_STATS] = x->skel->maps.xrl_global_stats;

	if (x->pinned && pin_exists(x, map_names[M_BUCKETS4])) {
		/* Buckets survive an upgrade: take the pinned table's size. */
		int fd, cap;

		pin_path(x, map_names[M_BUCKETS4], p, sizeof(p));
		fd = bpf_obj_get(p);
		cap = fd < 0 ? -errno : map_max_entries(fd);
		if (fd >= 0)
			close(fd);
		if (cap < 0)
			return fail(cap, "cannot read pinned %s: %s", p, strerror(-cap));
		if (o->keys && (__u32)cap != o->keys)
			return fail(EEXIST, "the pinned bucket table holds %d keys, not %u; 'detach dev IFACE purge' first to resize",
				    cap, o->keys);
		bpf_map__set_max_entries(maps[M_BUCKETS4], cap);
		bpf_map__set_max_entries(maps[M_BUCKETS6], cap);
	} else if (o->keys) {
		/* `keys` sizes each family's table */
		bpf_map__set_max_entries(maps[M_BUCKETS4], o->keys);
		bpf_map__set_max_entries(maps[M_BUCKETS6], o->keys);
	}

	if (x->pinned) {
		x->created = true;
		for (int i = 0; i < M__COUNT; i++) {
			pin_path(x, map_names[i], p, sizeof(p));
			bpf_map__set_pin_path(maps[i], p);
			/* an existing pin is reused by libbpf, and kept by xrl_discard() */
			x->new_pin[i] = !pin_exists(x, map_names[i]);
		}
	}

	err = xdp_rl__load(x->skel);
	if (err)
		return fail(err, "cannot load the BPF program: %s (a pinned map from another version? 'detach dev IFACE purge')",
			    strerror(-err));

	x->prog_fd = bpf_program__fd(x->skel->progs.xdp_rl);
	for (int i = 0; i < M__COUNT; i++)
		x->map_fd[i] = bpf_map__fd(maps[i]);

	/* A program that finds no inner map passes everything as unmatched;
	 * an empty rule set says the same, and lets `bpftool map` show it.
	 * Maps reused from pins keep the set they hold. */
	for (int family = 4; family <= 6; family += 2) {
		err = rules_install_empty(x, family);
		if (err)
			return fail(err, "cannot create the empty IPv%d rule set: %s",
				    family, strerror(-err));
	}

	if (x->pinned) {
		pin_path(x, PROG_PIN, p, sizeof(p));
		if (bpf_obj_pin(x->prog_fd, p))
			return fail(errno, "cannot pin the program at %s: %s", p, strerror(errno));
		x->new_pin[M__COUNT] = true;
	}
	return 0;
}

static int reuse_pins(struct xrl *x, const struct xrl_open_opts *o)
{
	char p[PATH_MAX];
	int cap;

	pin_path(x, PROG_PIN, p, sizeof(p));
	x->prog_fd = bpf_obj_get(p);
	if (x->prog_fd < 0)
		return fail(errno, "cannot open pinned program %s: %s", p, strerror(errno));
	for (int i = 0; i < M__COUNT; i++) {
		pin_path(x, map_names[i], p, sizeof(p));
		x->map_fd[i] = bpf_obj_get(p);
		if (x->map_fd[i] < 0)
			return fail(errno, "cannot open pinned map %s: %s ('detach dev IFACE purge' to start over)",
				    p, strerror(errno));
	}
	cap = map_max_entries(x->map_fd[M_BUCKETS4]);
	if (o->keys && cap >= 0 && (__u32)cap != o->keys)
		return fail(EEXIST, "the pinned bucket table holds %d keys, not %u; 'detach dev IFACE purge' first to resize",
			    cap, o->keys);
	return 0;
}

int xrl_open(const struct xrl_open_opts *o, struct xrl **out)
{
	struct xrl *x;
	int err;

	errbuf[0] = '\0';
	x = calloc(1, sizeof(*x));
	if (!x)
		return fail(ENOMEM, "out of memory");
	x->lock_fd = -1;
	x->daemon_fd = -1;
	x->prog_fd = -1;
	for (int i = 0; i < M__COUNT; i++)
		x->map_fd[i] = -1;
	x->ncpus = libbpf_num_possible_cpus();
	x->pinned = !o->no_pin;
	if (o->pin_dir && strlen(o->pin_dir) > PATH_MAX - 64) {
		err = fail(ENAMETOOLONG, "pin directory name is too long");
		goto err;
	}
	snprintf(x->pin_dir, sizeof(x->pin_dir), "%s",
		 o->pin_dir ? o->pin_dir : XRL_DEFAULT_PIN_DIR);
	/* no trailing slash: the parent is derived from the last component */
	for (size_t l = strlen(x->pin_dir); l > 1 && x->pin_dir[l - 1] == '/'; l--)
		x->pin_dir[l - 1] = '\0';

	if (o->keys && o->keys < 16) {
		err = fail(EINVAL, "keys %u: the bucket table needs at least 16 entries", o->keys);
		goto err;
	}

	if (x->pinned) {
		err = ensure_bpffs(x->pin_dir, o->create);
		if (err)
			goto err;
		for (int tries = 0;; tries++) {
			struct stat a, b;

			if (access(x->pin_dir, F_OK)) {
				if (!o->create) {
					err = fail(ENOENT, "xdp-rl is not loaded (nothing pinned at %s); run 'xdp-rlctl attach dev IFACE' first",
						   x->pin_dir);
					goto err;
				}
				if (mkdir(x->pin_dir, 0700) == 0)
					x->created_dir = true;
				else if (errno != EEXIST) {
					err = fail(errno, "cannot create %s: %s", x->pin_dir, strerror(errno));
					goto err;
				}
			}
			if (o->no_lock)
				break;
			err = lock_dir(x);
			if (err)
				goto err;
			/* A creator that failed removes the directory it made:
			 * locked, it must still be the one at the path. */
			if (tries >= 3 || (fstat(x->lock_fd, &a) == 0 && stat(x->pin_dir, &b) == 0 &&
					   a.st_dev == b.st_dev && a.st_ino == b.st_ino))
				break;
			close(x->lock_fd);
			x->lock_fd = -1;
			x->locked = false;
			x->created_dir = false;
		}
		if (pin_exists(x, PROG_PIN)) {
			x->created_dir = false;	/* another creator got the lock first */
			err = reuse_pins(x, o);
		} else if (o->create) {
			err = load_object(x, o);
		} else {
			err = fail(ENOENT, "xdp-rl is not loaded (nothing pinned at %s); run 'xdp-rlctl attach dev IFACE' first",
				   x->pin_dir);
		}
	} else {
		err = load_object(x, o);
	}
	if (err)
		goto err;

	x->ctrl = mmap(NULL, sysconf(_SC_PAGESIZE), PROT_READ | PROT_WRITE,
		       MAP_SHARED, x->map_fd[M_CONTROL], 0);
	if (x->ctrl == MAP_FAILED) {
		x->ctrl = NULL;
		err = fail(errno, "cannot map the control block: %s", strerror(errno));
		goto err;
	}
	*out = x;
	return 0;
err:
	xrl_discard(x);	/* keeps errbuf: the first failure is the one to tell */
	xrl_close(x);
	return err;
}

bool xrl_created(const struct xrl *x)
{
	return x->created || x->created_dir;
}

int xrl_discard(struct xrl *x)
{
	char p[PATH_MAX], saved[sizeof(errbuf)];
	int err = 0;

	if (!xrl_created(x) || (x->pinned && !x->locked))
		return 0;	/* unlocked, another process may be using them */
	memcpy(saved, errbuf, sizeof(saved));
	for (int i = 0; i <= M__COUNT; i++) {
		if (!x->new_pin[i])
			continue;
		pin_path(x, i < M__COUNT ? map_names[i] : PROG_PIN, p, sizeof(p));
		if (unlink(p) && errno != ENOENT && !err)
			err = fail(errno, "cannot remove %s: %s", p, strerror(errno));
		x->new_pin[i] = false;
	}
	if (x->created_dir && rmdir(x->pin_dir) && errno != ENOENT && !err)
		err = fail(errno, "cannot remove %s: %s", x->pin_dir, strerror(errno));
	x->created = x->created_dir = false;
	if (!err)
		memcpy(errbuf, saved, sizeof(errbuf));
	return err;
}

void xrl_close(struct xrl *x)
{
	if (!x)
		return;
	if (x->ctrl)
		munmap(x->ctrl, sysconf(_SC_PAGESIZE));
	if (x->skel) {
		xdp_rl__destroy(x->skel);	/* owns the fds */
	} else {
		for (int i = 0; i < M__COUNT; i++)
			if (x->map_fd[i] >= 0)
				close(x->map_fd[i]);
		if (x->prog_fd >= 0)
			close(x->prog_fd);
	}
	if (x->lock_fd >= 0)
		close(x->lock_fd);	/* drops the flock */
	if (x->daemon_fd >= 0)
		close(x->daemon_fd);
	free(x);
}

const char *xrl_pin_dir(const struct xrl *x)
{
	return x->pin_dir;
}

int xrl_prog_fd(const struct xrl *x)
{
	return x->prog_fd;
}

struct xrl_control *xrl_control(struct xrl *x)
{
	return x->ctrl;
}

/* ------------------------------------------------------------------ */
/* Mode and clock                                                      */

static const char *mode_names[XRL_MODE_MAX] = {
	"enforce", "dry-run", "fail-open", "fail-closed",
};

const char *xrl_mode_name(enum xrl_mode m)
{
	return m < XRL_MODE_MAX ? mode_names[m] : "unknown";
}

int xrl_mode_parse(const char *s, enum xrl_mode *m)
{
	for (int i = 0; i < XRL_MODE_MAX; i++) {
		if (!strcmp(s, mode_names[i])) {
			*m = i;
			return 0;
		}
	}
	return fail(EINVAL, "unknown mode '%s' (enforce, dry-run, fail-open, fail-closed)", s);
}

int xrl_mode_set(struct xrl *x, enum xrl_mode mode)
{
	if (mode >= XRL_MODE_MAX)
		return fail(EINVAL, "unknown mode %d", mode);
	__atomic_store_n(&x->ctrl->mode, mode, __ATOMIC_RELEASE);
	return 0;
}

enum xrl_mode xrl_mode_get(struct xrl *x)
{
	return __atomic_load_n(&x->ctrl->mode, __ATOMIC_ACQUIRE) & (XRL_MODE_MAX - 1);
}

__u64 xrl_now_ns(struct xrl *x)
{
	struct timespec ts;
	__u64 t = __atomic_load_n(&x->ctrl->test_now_ns, __ATOMIC_ACQUIRE);

	if (x->skel ? x->skel->rodata->use_test_clock : false)
		return t;
	/* the program's bpf_ktime_get_coarse_ns() */
	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (__u64)ts.tv_sec * XRL_NSEC_PER_SEC + ts.tv_nsec;
}

void xrl_heartbeat(struct xrl *x, __u32 interval_ms, __u64 watchdog_ns)
{
	__atomic_store_n(&x->ctrl->heartbeat_interval_ms, interval_ms, __ATOMIC_RELEASE);
	__atomic_store_n(&x->ctrl->heartbeat_ns, xrl_now_ns(x), __ATOMIC_RELEASE);
	__atomic_store_n(&x->ctrl->watchdog_ns, watchdog_ns, __ATOMIC_RELEASE);
}

bool xrl_heartbeating(struct xrl *x)
{
	__u64 iv = __atomic_load_n(&x->ctrl->heartbeat_interval_ms, __ATOMIC_ACQUIRE);
	long long age = xrl_heartbeat_age(x);

	return age >= 0 && iv && (__u64)age <= 3 * iv * 1000000 + XRL_HEARTBEAT_SLACK_NS;
}

long long xrl_heartbeat_age(struct xrl *x)
{
	__u64 hb = __atomic_load_n(&x->ctrl->heartbeat_ns, __ATOMIC_ACQUIRE);
	__u64 now = xrl_now_ns(x);

	if (!hb)
		return -1;
	return now > hb ? (long long)(now - hb) : 0;
}

void xrl_test_clock_set(struct xrl *x, __u64 ns)
{
	__atomic_store_n(&x->ctrl->test_now_ns, ns, __ATOMIC_RELEASE);
}

/* ------------------------------------------------------------------ */
/* Rules                                                               */

int xrl_rule_prepare(struct xrl_rule_entry *e)
{
	struct xrl_rule *r = &e->r;
	int maxlen = e->family == 6 ? 128 : 32;
	char pfx[INET6_ADDRSTRLEN + 8];
	__u8 mask[16] = {};

	xrl_prefix_format(e, pfx, sizeof(pfx));
	if (r->action > XRL_ACT_DENY)
		return fail(EINVAL, "rule %s: unknown action %u", pfx, r->action);
	if (!r->key_len) {
		r->key_len = e->family == 6 ? 64 : 32;
		if (r->key_len < e->prefix_len)
			r->key_len = e->prefix_len;
	}
	if (r->key_len > maxlen)
		return fail(EINVAL, "rule %s: key length /%u is longer than an IPv%d address",
			    pfx, r->key_len, e->family);
	if (r->key_len < e->prefix_len)
		return fail(EINVAL, "rule %s: key length /%u is shorter than the prefix",
			    pfx, r->key_len);
	mask_bits(mask, r->key_len, maxlen / 8);
	memcpy(r->key_mask, mask, sizeof(r->key_mask));

	if (r->action != XRL_ACT_LIMIT) {
		/* allow and deny are never metered */
		r->interval = r->limit = 0;
		return 0;
	}
	if (!r->rate_count)
		return fail(EINVAL, "rule %s: rate must be at least 1", pfx);
	if (!r->burst)
		return fail(EINVAL, "rule %s: burst must be at least 1", pfx);
	r->interval = xrl_rate_interval(r->rate_count, r->rate_period_ns);
	if (!r->interval)
		return fail(EINVAL, "rule %s: rate must be between 1/h and %llu/s",
			    pfx, XRL_RATE_MAX_PER_SEC);
	r->limit = xrl_burst_limit(r->interval, r->burst);
	if (!r->limit)
		return fail(EINVAL, "rule %s: burst %u takes too long to refill at this rate (over a year)",
			    pfx, r->burst);
	return 0;
}

/*
 * Each family's rule set is an LPM trie published through a map-in-map
 * (xrl_rules4, xrl_rules6: one entry). A commit never writes a published
 * trie: it creates a fresh one, fills it and swaps it in.
 */
static int outer_fd(struct xrl *x, int family)
{
	return x->map_fd[family == 6 ? M_RULES6 : M_RULES4];
}

/* A fresh, empty trie shaped like the BPF object's inner-map template
 * (struct xrl_rules4_inner / xrl_rules6_inner): the kernel refuses an inner
 * map whose type, key, value or flags differ. */
static int rules_create(int family)
{
	LIBBPF_OPTS(bpf_map_create_opts, o, .map_flags = BPF_F_NO_PREALLOC);
	__u32 ksz = family == 6 ? sizeof(struct xrl_lpm6_key) : sizeof(struct xrl_lpm4_key);
	int fd = bpf_map_create(BPF_MAP_TYPE_LPM_TRIE, family == 6 ? "xrl_rules6_set" : "xrl_rules4_set",
				ksz, sizeof(struct xrl_rule), XRL_MAX_RULES, &o);

	return fd < 0 ? -errno : fd;
}

/*
 * Publish a filled trie. One update of the outer map: a packet looks the
 * inner map up once, so it sees the old trie or this one, never a mix.
 * The proof that the old one is out of use when this returns: the syscall
 * path of an update of a *_OF_MAPS map ends in maybe_wait_bpf_programs(),
 * which calls synchronize_rcu(); XDP programs (and BPF_PROG_TEST_RUN) run
 * inside an RCU read-side section, so every packet that may have looked up
 * the old trie has finished. Slots that only the old set held are free from
 * here on (xrl_rules_commit relies on it).
 */
static int rules_publish(struct xrl *x, int family, int inner_fd)
{
	__u32 zero = 0;

	if (bpf_map_update_elem(outer_fd(x, family), &zero, &inner_fd, BPF_ANY))
		return -errno;
	return 0;
}

static int rules_install_empty(struct xrl *x, int family)
{
	__u32 zero = 0, id;
	int fd, err;

	if (bpf_map_lookup_elem(outer_fd(x, family), &zero, &id) == 0)
		return 0;	/* a set is published already */
	fd = rules_create(family);
	if (fd < 0)
		return fd;
	err = rules_publish(x, family, fd);
	close(fd);
	return err;
}

/*
 * A new fd on the published trie of a family, or -ENOENT when none is
 * published. The outer map gives the inner map's id; a concurrent commit may
 * replace and free that map between the two look-ups: look again.
 */
static int rules_fd(struct xrl *x, int family)
{
	__u32 zero = 0, id;

	for (int tries = 0; tries < 8; tries++) {
		int fd;

		if (bpf_map_lookup_elem(outer_fd(x, family), &zero, &id))
			return -errno;
		fd = bpf_map_get_fd_by_id(id);
		if (fd >= 0)
			return fd;
		if (errno != ENOENT)
			return -errno;
	}
	return -EAGAIN;
}

/* Read every rule of one trie, appending to *v. */
static int read_trie(int fd, int family, struct xrl_rule_entry **v, size_t *n,
		     size_t *cap)
{
	struct xrl_lpm6_key key, next;	/* large enough for both */
	void *prev = NULL;
	int alen = family == 6 ? 16 : 4;

	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		struct xrl_rule_entry *e;

		if (*n == *cap) {
			size_t nc = *cap ? *cap * 2 : 64;
			void *nv = realloc(*v, nc * sizeof(**v));

			if (!nv)
				return fail(ENOMEM, "out of memory");
			*v = nv;
			*cap = nc;
		}
		e = &(*v)[*n];
		memset(e, 0, sizeof(*e));
		e->family = family;
		e->prefix_len = next.prefixlen;
		memcpy(e->addr, next.addr, alen);
		if (bpf_map_lookup_elem(fd, &next, &e->r) == 0)
			(*n)++;
		key = next;
		prev = &key;
	}
	if (errno != ENOENT)
		return fail(errno, "cannot read the rules: %s", strerror(errno));
	return 0;
}

/* Read the published rules of one family, appending to *v. */
static int read_family(struct xrl *x, int family, struct xrl_rule_entry **v,
		       size_t *n, size_t *cap)
{
	int fd = rules_fd(x, family), err;

	if (fd == -ENOENT)
		return 0;	/* nothing published: no rules */
	if (fd < 0)
		return fail(fd, "cannot open the IPv%d rule set: %s", family, strerror(-fd));
	err = read_trie(fd, family, v, n, cap);
	close(fd);
	return err;
}

static int cmp_id(const void *a, const void *b)
{
	const struct xrl_rule_entry *x = a, *y = b;

	return x->r.id < y->r.id ? -1 : x->r.id > y->r.id;
}

static int cmp_u32(const void *a, const void *b)
{
	__u32 x = *(const __u32 *)a, y = *(const __u32 *)b;

	return x < y ? -1 : x > y;
}

int xrl_rules_get(struct xrl *x, struct xrl_rule_entry **out, size_t *n)
{
	struct xrl_rule_entry *v = NULL;
	size_t cap = 0;
	int err;

	*n = 0;
	err = read_family(x, 4, &v, n, &cap);
	if (!err)
		err = read_family(x, 6, &v, n, &cap);
	if (err) {
		free(v);
		return err;
	}
	qsort(v, *n, sizeof(*v), cmp_id);
	*out = v;
	return 0;
}

/* Same configuration: the bucket and counters carry over. */
static bool same_config(const struct xrl_rule *a, const struct xrl_rule *b)
{
	return a->id == b->id && a->action == b->action &&
	       a->key_len == b->key_len && a->on_failure == b->on_failure &&
	       a->rate_count == b->rate_count &&
	       a->rate_period_ns == b->rate_period_ns && a->burst == b->burst &&
	       a->unit == b->unit && a->algo == b->algo;
}

/* A fresh trie holding the rules of one family: an fd, or an error. */
static int build_trie(int family, const struct xrl_rule_entry *v, size_t n)
{
	int fd = rules_create(family);

	if (fd < 0)
		return fail(fd, "cannot create a rule set: %s", strerror(-fd));
	for (size_t i = 0; i < n; i++) {
		struct xrl_lpm6_key k = { .prefixlen = v[i].prefix_len };

		if (v[i].family != family)
			continue;
		memcpy(k.addr, v[i].addr, family == 6 ? 16 : 4);
		if (bpf_map_update_elem(fd, &k, &v[i].r, BPF_NOEXIST)) {
			int err = fail(errno, "cannot write rule %u: %s", v[i].r.id,
				       strerror(errno));

			close(fd);
			return err;
		}
	}
	return fd;
}

static int zero_rule_stats(struct xrl *x, __u32 slot)
{
	size_t sz = (size_t)x->ncpus * sizeof(struct xrl_rule_stats);
	void *zero = calloc(1, sz);
	int err = 0;

	if (!zero)
		return -ENOMEM;
	if (bpf_map_update_elem(x->map_fd[M_RULE_STATS], &slot, zero, BPF_ANY))
		err = -errno;
	free(zero);
	return err;
}

/* Order by family, prefix length, address: equal prefixes are neighbours. */
static int cmp_prefix(const void *a, const void *b)
{
	const struct xrl_rule_entry *x = *(const struct xrl_rule_entry *const *)a;
	const struct xrl_rule_entry *y = *(const struct xrl_rule_entry *const *)b;

	if (x->family != y->family)
		return x->family - y->family;
	if (x->prefix_len != y->prefix_len)
		return x->prefix_len - y->prefix_len;
	return memcmp(x->addr, y->addr, 16);
}

static int cmp_id_ptr(const void *a, const void *b)
{
	return cmp_id(*(const void *const *)a, *(const void *const *)b);
}

int xrl_rules_validate(struct xrl_rule_entry *v, size_t n, size_t *bad)
{
	struct xrl_rule_entry **p = NULL;
	int err = 0;

	/* the one limit, for the CLI, the daemon and --check alike */
	if (n > XRL_MAX_RULES) {
		*bad = XRL_MAX_RULES;
		return fail(ENOSPC, "too many rules: %zu (at most %d, IPv4 and IPv6 together)",
			    n, XRL_MAX_RULES);
	}
	for (size_t i = 0; i < n; i++) {
		*bad = i;
		err = xrl_rule_prepare(&v[i]);
		if (err)
			return err;
	}
	if (n < 2)
		return 0;
	p = malloc(n * sizeof(*p));
	if (!p)
		return fail(ENOMEM, "out of memory");
	for (size_t i = 0; i < n; i++)
		p[i] = &v[i];
	qsort(p, n, sizeof(*p), cmp_prefix);
	for (size_t i = 1; i < n && !err; i++) {
		if (cmp_prefix(&p[i - 1], &p[i]) == 0) {
			struct xrl_rule_entry *first = p[i - 1] < p[i] ? p[i - 1] : p[i];
			struct xrl_rule_entry *second = p[i - 1] < p[i] ? p[i] : p[i - 1];
			char pfx[INET6_ADDRSTRLEN + 8];

			xrl_prefix_format(second, pfx, sizeof(pfx));
			*bad = second - v;
			err = first->r.id ? fail(EEXIST, "duplicate prefix %s: rule %u has it already",
						 pfx, first->r.id)
					  : fail(EEXIST, "duplicate prefix %s", pfx);
		}
	}
	qsort(p, n, sizeof(*p), cmp_id_ptr);
	for (size_t i = 1; i < n && !err; i++) {
		if (p[i]->r.id && p[i]->r.id == p[i - 1]->r.id) {
			*bad = (p[i - 1] < p[i] ? p[i] : p[i - 1]) - v;
			err = fail(EEXIST, "duplicate rule id %u", p[i]->r.id);
		}
	}
	free(p);
	return err;
}

/* Ids of 0 get the lowest ids not taken. */
static int assign_ids(struct xrl_rule_entry *v, size_t n)
{
	__u32 *ids = malloc((n + 1) * sizeof(*ids)), id = 1;
	size_t k = 0, j = 0;

	if (!ids)
		return fail(ENOMEM, "out of memory");
	for (size_t i = 0; i < n; i++)
		if (v[i].r.id)
			ids[k++] = v[i].r.id;
	qsort(ids, k, sizeof(*ids), cmp_u32);
	for (size_t i = 0; i < n; i++) {
		if (v[i].r.id)
			continue;
		while (j < k && ids[j] < id)
			j++;
		while (j < k && ids[j] == id)
			id++, j++;
		v[i].r.id = id++;
	}
	free(ids);
	return 0;
}

int xrl_rules_commit(struct xrl *x, struct xrl_rule_entry *v, size_t n)
{
	struct xrl_rule_entry *old = NULL, **oldp = NULL;
	size_t nold = 0, bad;
	unsigned char *used = NULL;
	__u32 *fresh = NULL;
	size_t nfresh = 0;
	int err, next, fd4 = -1, fd6 = -1, old4 = -1;
	__u64 gen;

	/* 1. validate the whole set before touching anything */
	err = xrl_rules_validate(v, n, &bad);
	if (!err)
		err = assign_ids(v, n);
	if (err)
		return err;

	/*
	 * 2. rules that did not change keep their slot and generation; a new
	 * or changed rule gets a slot that no published rule holds. The
	 * published set holds at most XRL_MAX_RULES of the XRL_RULE_SLOTS, so
	 * there is always one; a slot that only an older set held is out of
	 * use (see rules_publish). Nothing is written in this step.
	 */
	err = xrl_rules_get(x, &old, &nold);
	if (err)
		return err;
	used = calloc(XRL_RULE_SLOTS, 1);
	oldp = malloc((nold + 1) * sizeof(*oldp));
	fresh = malloc((n + 1) * sizeof(*fresh));
	if (!used || !oldp || !fresh) {
		err = fail(ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < nold; i++) {
		if (old[i].r.slot < XRL_RULE_SLOTS)
			used[old[i].r.slot] = 1;
		oldp[i] = &old[i];
	}
	qsort(oldp, nold, sizeof(*oldp), cmp_prefix);
	gen = x->ctrl->gen;
	next = 0;
	for (size_t i = 0; i < n; i++) {
		struct xrl_rule_entry *key = &v[i], **hit;

		hit = nold ? bsearch(&key, oldp, nold, sizeof(*oldp), cmp_prefix) : NULL;
		if (hit && same_config(&v[i].r, &(*hit)->r) &&
		    (*hit)->r.slot < XRL_RULE_SLOTS) {
			v[i].r.slot = (*hit)->r.slot;
			v[i].r.gen = (*hit)->r.gen;
			continue;
		}
		while (next < XRL_RULE_SLOTS && used[next])
			next++;
		if (next == XRL_RULE_SLOTS) {	/* validation makes this impossible */
			err = fail(ENOSPC, "no free rule slot");
			goto out;
		}
		used[next] = 2;
		v[i].r.slot = next;
		v[i].r.gen = (__u32)++gen;
		fresh[nfresh++] = next;
	}

	/* 3. build a fresh trie per family, completely */
	fd4 = build_trie(4, v, n);
	if (fd4 < 0) {
		err = fd4;
		goto out;
	}
	fd6 = build_trie(6, v, n);
	if (fd6 < 0) {
		err = fd6;
		goto out;
	}
	old4 = rules_fd(x, 4);	/* for a roll-back */
	if (old4 < 0 && old4 != -ENOENT) {
		err = fail(old4, "cannot open the IPv4 rule set: %s", strerror(-old4));
		goto out;
	}

	/* 4. fresh counters, now that nothing but publishing can fail: these
	 * slots are held by no published rule, so a failure from here on
	 * loses no rule's counters either */
	for (size_t i = 0; i < nfresh; i++) {
		err = zero_rule_stats(x, fresh[i]);
		if (err) {
			err = fail(err, "cannot reset counters: %s", strerror(-err));
			goto out;
		}
	}
	/* generations are spent even if publishing fails below: a packet may
	 * have metered with one before a roll-back */
	x->ctrl->gen = gen;

	/* 5. publish each family with one update; roll IPv4 back if IPv6
	 * cannot follow, so that a failed commit changes nothing */
	err = rules_publish(x, 4, fd4);
	if (err) {
		err = fail(err, "cannot publish the IPv4 rules: %s", strerror(-err));
		goto out;
	}
	err = rules_publish(x, 6, fd6);
	if (err) {
		__u32 zero = 0;

		err = fail(err, "cannot publish the IPv6 rules: %s", strerror(-err));
		if (old4 >= 0)
			rules_publish(x, 4, old4);
		else
			bpf_map_delete_elem(outer_fd(x, 4), &zero);
		goto out;
	}
	x->ctrl->rules = n;
	err = 0;
out:
	/* a published trie lives on in the outer map */
	if (fd4 >= 0)
		close(fd4);
	if (fd6 >= 0)
		close(fd6);
	if (old4 >= 0)
		close(old4);
	free(fresh);
	free(oldp);
	free(used);
	free(old);
	return err;
}

int xrl_rule_match(struct xrl *x, int family, const __u8 *addr,
		   struct xrl_rule_entry *out)
{
	struct xrl_lpm6_key k = { .prefixlen = family == 6 ? 128 : 32 };
	struct xrl_rule_entry *v = NULL;
	size_t n = 0, cap = 0;
	int fd, err;

	memcpy(k.addr, addr, family == 6 ? 16 : 4);
	memset(out, 0, sizeof(*out));
	fd = rules_fd(x, family);
	if (fd < 0)
		return fd == -ENOENT ? -ENOENT :
		       fail(fd, "cannot open the IPv%d rule set: %s", family, strerror(-fd));
	if (bpf_map_lookup_elem(fd, &k, &out->r)) {
		close(fd);
		return -ENOENT;
	}
	/* the trie gives the value, not the prefix that matched: find it in
	 * the same trie */
	err = read_trie(fd, family, &v, &n, &cap);
	close(fd);
	if (err) {
		free(v);
		return err;
	}
	err = -ENOENT;
	for (size_t i = 0; i < n; i++) {
		if (v[i].r.slot == out->r.slot && v[i].r.gen == out->r.gen) {
			*out = v[i];
			err = 0;
			break;
		}
	}
	free(v);
	return err;
}

/* ------------------------------------------------------------------ */
/* Counters                                                            */

static int percpu_sum(struct xrl *x, int map, __u32 idx, __u64 *sum, size_t nfields)
{
	size_t stride = nfields * sizeof(__u64);
	__u64 *vals = calloc(x->ncpus, stride);

	if (!vals)
		return fail(ENOMEM, "out of memory");
	if (bpf_map_lookup_elem(x->map_fd[map], &idx, vals)) {
		int err = fail(errno, "cannot read counters: %s", strerror(errno));

		free(vals);
		return err;
	}
	memset(sum, 0, stride);
	for (int c = 0; c < x->ncpus; c++)
		for (size_t f = 0; f < nfields; f++)
			sum[f] += vals[c * nfields + f];
	free(vals);
	return 0;
}

int xrl_rule_stats_get(struct xrl *x, __u32 slot, struct xrl_rule_stats *sum)
{
	return percpu_sum(x, M_RULE_STATS, slot, (__u64 *)sum,
			  sizeof(*sum) / sizeof(__u64));
}

int xrl_global_stats_get(struct xrl *x, struct xrl_global_stats *sum)
{
	return percpu_sum(x, M_GLOBAL_STATS, 0, (__u64 *)sum,
			  sizeof(*sum) / sizeof(__u64));
}

/* ------------------------------------------------------------------ */
/* Buckets                                                             */

void xrl_key_of(struct xrl_key *k, const struct xrl_rule *r, int family,
		const __u8 *addr)
{
	__u32 a[4] = {};

	memcpy(a, addr, family == 6 ? 16 : 4);
	for (int i = 0; i < 4; i++)
		a[i] &= r->key_mask[i];
	memset(k, 0, sizeof(*k));
	k->family = family;
	k->gen = r->gen;
	memcpy(k->addr, a, family == 6 ? 16 : 4);
}

int xrl_bucket_get(struct xrl *x, const struct xrl_key *k, struct xrl_bucket *b)
{
	struct xrl_bucket_key4 k4 = { .gen = k->gen };
	struct xrl_bucket_key6 k6 = { .gen = k->gen };
	int err;

	if (k->family == 6) {
		memcpy(k6.addr, k->addr, 16);
		err = bpf_map_lookup_elem(x->map_fd[M_BUCKETS6], &k6, b);
	} else {
		memcpy(&k4.addr, k->addr, 4);
		err = bpf_map_lookup_elem(x->map_fd[M_BUCKETS4], &k4, b);
	}
	return err ? -errno : 0;
}

/* Walk one family's table in batches; keys come back as struct xrl_key. */
static int walk_table(struct xrl *x, int family, xrl_bucket_cb cb, void *ctx)
{
	enum { BATCH = 4096 };
	size_t ksz = family == 6 ? sizeof(struct xrl_bucket_key6) : sizeof(struct xrl_bucket_key4);
	int fd = x->map_fd[family == 6 ? M_BUCKETS6 : M_BUCKETS4];
	char *keys = calloc(BATCH, ksz);
	struct xrl_bucket *vals = calloc(BATCH, sizeof(*vals));
	__u32 in = 0, out = 0;
	bool first = true, done = false;
	int err = 0;

	if (!keys || !vals) {
		err = fail(ENOMEM, "out of memory");
		goto out;
	}
	while (!done) {
		__u32 count = BATCH;

		if (bpf_map_lookup_batch(fd, first ? NULL : &in, &out, keys, vals, &count, NULL)) {
			if (errno != ENOENT) {
				err = fail(errno, "cannot read buckets: %s", strerror(errno));
				goto out;
			}
			done = true;	/* the last batch, possibly partial */
		}
		for (__u32 i = 0; i < count; i++) {
			struct xrl_key k = { .family = family };
			const char *raw = keys + i * ksz;

			memcpy(&k.gen, raw, 4);
			memcpy(k.addr, raw + 4, ksz - 4);
			err = cb(&k, &vals[i], ctx);
			if (err)
				goto out;
		}
		in = out;
		first = false;
	}
out:
	free(keys);
	free(vals);
	return err;
}

int xrl_buckets_walk(struct xrl *x, xrl_bucket_cb cb, void *ctx)
{
	int err = walk_table(x, 4, cb, ctx);

	return err ? err : walk_table(x, 6, cb, ctx);
}

static int count_cb(const struct xrl_key *k, const struct xrl_bucket *b, void *ctx)
{
	(void)k;
	(void)b;
	++*(unsigned long long *)ctx;
	return 0;
}

int xrl_keys_tracked(struct xrl *x, unsigned long long *n)
{
	*n = 0;
	return xrl_buckets_walk(x, count_cb, n);
}

int xrl_keys_tracked_family(struct xrl *x, int family, unsigned long long *n)
{
	*n = 0;
	return walk_table(x, family, count_cb, n);
}

__u32 xrl_keys_capacity(struct xrl *x)
{
	return xrl_keys_capacity_family(x, 4);
}

__u32 xrl_keys_capacity_family(struct xrl *x, int family)
{
	int cap = map_max_entries(x->map_fd[family == 6 ? M_BUCKETS6 : M_BUCKETS4]);

	return cap < 0 ? 0 : cap;
}

/* ------------------------------------------------------------------ */
/* Attach and detach                                                   */

const char *xrl_xdp_mode_name(enum xrl_xdp_mode m)
{
	switch (m) {
	case XRL_XDP_AUTO: return "auto";
	case XRL_XDP_NATIVE: return "native";
	case XRL_XDP_GENERIC: return "generic";
	default: return "unknown";
	}
}

static void link_pin(const struct xrl *x, const char *ifname, char *buf, size_t len)
{
	snprintf(buf, len, "%s/" LINK_PREFIX "%s", x->pin_dir, ifname);
}

static int try_attach(struct xrl *x, int ifindex, __u32 flags)
{
	LIBBPF_OPTS(bpf_link_create_opts, opts, .flags = flags);
	int fd = bpf_link_create(x->prog_fd, ifindex, BPF_XDP, &opts);

	return fd < 0 ? -errno : fd;
}

int xrl_attach(struct xrl *x, const char *ifname, enum xrl_xdp_mode mode,
	       enum xrl_xdp_mode *got)
{
	char p[PATH_MAX];
	unsigned int ifindex;
	int fd;

	if (!x->pinned)
		return fail(EINVAL, "cannot attach an unpinned instance");
	if (strlen(ifname) >= IF_NAMESIZE || !(ifindex = if_nametoindex(ifname)))
		return fail(ENODEV, "unknown interface '%s'", ifname);
	link_pin(x, ifname, p, sizeof(p));
	if (access(p, F_OK) == 0)
		return fail(EEXIST, "xdp-rl is already attached to %s", ifname);

	*got = mode == XRL_XDP_GENERIC ? XRL_XDP_GENERIC : XRL_XDP_NATIVE;
	fd = try_attach(x, ifindex, *got == XRL_XDP_GENERIC ? XDP_FLAGS_SKB_MODE
							     : XDP_FLAGS_DRV_MODE);
	if (fd < 0 && mode == XRL_XDP_AUTO && fd != -EBUSY && fd != -EEXIST) {
		warn("native XDP failed on %s (%s); using generic mode, which is slower",
		     ifname, strerror(-fd));
		*got = XRL_XDP_GENERIC;
		fd = try_attach(x, ifindex, XDP_FLAGS_SKB_MODE);
	}
	if (fd == -EBUSY || fd == -EEXIST)
		return fail(EBUSY, "another XDP program is already attached to %s", ifname);
	if (fd < 0)
		return fail(fd, "cannot attach to %s in %s mode: %s", ifname,
			    xrl_xdp_mode_name(*got), strerror(-fd));
	if (bpf_obj_pin(fd, p)) {
		int err = fail(errno, "cannot pin the link at %s: %s", p, strerror(errno));

		close(fd);	/* the link goes with its last reference */
		return err;
	}
	close(fd);
	return 0;
}

int xrl_detach(struct xrl *x, const char *ifname)
{
	char p[PATH_MAX];
	int fd;

	link_pin(x, ifname, p, sizeof(p));
	if (strlen(ifname) >= IF_NAMESIZE || access(p, F_OK))
		return fail(ENOENT, "xdp-rl is not attached to '%s'", ifname);
	fd = bpf_obj_get(p);
	if (fd >= 0) {
		/* detach now, even if another process holds the link */
		bpf_link_detach(fd);
		close(fd);
	}
	if (unlink(p))
		return fail(errno, "cannot remove %s: %s", p, strerror(errno));
	return 0;
}

int xrl_attachments(struct xrl *x, struct xrl_attachment **out, size_t *n)
{
	struct xrl_attachment *v = NULL;
	size_t cap = 0;
	struct dirent *de;
	DIR *d;

	*n = 0;
	if (!x->pinned) {
		*out = NULL;
		return 0;
	}
	d = opendir(x->pin_dir);
	if (!d)
		return fail(errno, "cannot read %s: %s", x->pin_dir, strerror(errno));
	while ((de = readdir(d))) {
		struct bpf_link_info info = {};
		__u32 len = sizeof(info);
		struct xrl_attachment *a;
		char p[PATH_MAX], name[IF_NAMESIZE];
		int fd;

		if (strncmp(de->d_name, LINK_PREFIX, strlen(LINK_PREFIX)))
			continue;
		if (*n == cap) {
			cap = cap ? cap * 2 : 8;
			a = realloc(v, cap * sizeof(*v));
			if (!a) {
				closedir(d);
				free(v);
				return fail(ENOMEM, "out of memory");
			}
			v = a;
		}
		a = &v[(*n)++];
		memset(a, 0, sizeof(*a));
		snprintf(a->ifname, sizeof(a->ifname), "%s", de->d_name + strlen(LINK_PREFIX));
		a->mode = XRL_XDP_UNKNOWN;
		pin_path(x, de->d_name, p, sizeof(p));
		fd = bpf_obj_get(p);
		if (fd < 0)
			continue;
		if (bpf_obj_get_info_by_fd(fd, &info, &len) == 0) {
			a->ifindex = info.xdp.ifindex;
			a->prog_id = info.prog_id;
		}
		close(fd);
		/* the mode is known when the interface is in this namespace */
		if (a->ifindex && if_indextoname(a->ifindex, name) &&
		    !strcmp(name, a->ifname)) {
			LIBBPF_OPTS(bpf_xdp_query_opts, q);

			if (bpf_xdp_query(a->ifindex, 0, &q) == 0)
				a->mode = q.attach_mode == XDP_ATTACHED_DRV ? XRL_XDP_NATIVE :
					  q.attach_mode == XDP_ATTACHED_SKB ? XRL_XDP_GENERIC :
					  XRL_XDP_UNKNOWN;
		}
	}
	closedir(d);
	*out = v;
	return 0;
}

int xrl_purge(struct xrl *x)
{
	struct xrl_attachment *a;
	struct dirent *de;
	size_t n;
	DIR *d;
	int err;

	err = xrl_attachments(x, &a, &n);
	if (err)
		return err;
	free(a);
	if (n)
		return fail(EBUSY, "still attached to %zu interface(s); pins kept", n);
	d = opendir(x->pin_dir);
	if (!d)
		return fail(errno, "cannot read %s: %s", x->pin_dir, strerror(errno));
	while ((de = readdir(d))) {
		char p[PATH_MAX];

		if (de->d_name[0] == '.')
			continue;
		pin_path(x, de->d_name, p, sizeof(p));
		/* the daemon's claim is a directory (DAEMON_DIR) */
		if (unlink(p) && !(errno == EISDIR && rmdir(p) == 0))
			err = fail(errno, "cannot remove %s: %s", p, strerror(errno));
	}
	closedir(d);
	if (!err && rmdir(x->pin_dir))
		err = fail(errno, "cannot remove %s: %s", x->pin_dir, strerror(errno));
	return err;
}

/* ------------------------------------------------------------------ */
/* The daemon's claim and the pins' health                             */

/* Claim DIR/daemon: mkdir (bpffs has directories but no regular files) and
 * hold an exclusive flock on it until xrl_close(). */
static int claim(struct xrl *x, pid_t *holder)
{
	char p[PATH_MAX];
	int fd;

	*holder = 0;
	pin_path(x, DAEMON_DIR, p, sizeof(p));
	if (mkdir(p, 0700) && errno != EEXIST)
		return fail(errno, "cannot create %s: %s", p, strerror(errno));
	fd = open(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return fail(errno, "cannot open %s: %s", p, strerror(errno));
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		int err = errno;

		*holder = lock_holder(fd);
		close(fd);
		if (err == EWOULDBLOCK)
			return fail(EBUSY, "%s is served by another xdp-rld (pid %d): one daemon per pin directory",
				    x->pin_dir, (int)*holder);
		return fail(err, "cannot lock %s: %s", p, strerror(err));
	}
	if (x->daemon_fd >= 0)
		close(x->daemon_fd);
	x->daemon_fd = fd;
	return 0;
}

int xrl_daemon_claim(struct xrl *x, pid_t *holder)
{
	pid_t h;

	if (!x->pinned)
		return fail(EINVAL, "an unpinned instance has no daemon");
	return claim(x, holder ? holder : &h);
}

static __u32 fd_id(int fd, bool prog)
{
	if (prog) {
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);

		return bpf_obj_get_info_by_fd(fd, &info, &len) ? 0 : info.id;
	} else {
		struct bpf_map_info info = {};
		__u32 len = sizeof(info);

		return bpf_obj_get_info_by_fd(fd, &info, &len) ? 0 : info.id;
	}
}

/* The object pinned at DIR/name: 1 ours, 0 missing, -EEXIST another one. */
static int pinned_is(struct xrl *x, const char *name, int fd, bool prog)
{
	char p[PATH_MAX];
	int pfd, same;

	pin_path(x, name, p, sizeof(p));
	pfd = bpf_obj_get(p);
	if (pfd < 0)
		return 0;
	same = fd_id(pfd, prog) == fd_id(fd, prog);
	close(pfd);
	return same ? 1 : -EEXIST;
}

int xrl_pins_ok(struct xrl *x)
{
	char p[PATH_MAX];

	if (!x->pinned)
		return 1;
	if (pinned_is(x, PROG_PIN, x->prog_fd, true) != 1)
		return 0;
	for (int i = 0; i < M__COUNT; i++)
		if (pinned_is(x, map_names[i], x->map_fd[i], false) != 1)
			return 0;
	pin_path(x, DAEMON_DIR, p, sizeof(p));
	return x->daemon_fd < 0 || access(p, F_OK) == 0;
}

int xrl_pins_restore(struct xrl *x)
{
	char p[PATH_MAX];
	pid_t holder;
	int err;

	if (!x->pinned)
		return 0;
	err = ensure_bpffs(x->pin_dir, true);
	if (err)
		return err;
	if (mkdir(x->pin_dir, 0700) && errno != EEXIST)
		return fail(errno, "cannot create %s: %s", x->pin_dir, strerror(errno));
	/* the old directory may be gone: lock the one that is there now */
	if (x->lock_fd >= 0) {
		close(x->lock_fd);
		x->lock_fd = -1;
	}
	for (int i = -1; i < M__COUNT; i++) {
		const char *name = i < 0 ? PROG_PIN : map_names[i];
		int fd = i < 0 ? x->prog_fd : x->map_fd[i];

		err = pinned_is(x, name, fd, i < 0);
		if (err < 0)
			return fail(err, "%s/%s is another instance's: not replaced", x->pin_dir, name);
		if (err == 1)
			continue;
		pin_path(x, name, p, sizeof(p));
		if (bpf_obj_pin(fd, p))
			return fail(errno, "cannot pin %s: %s", p, strerror(errno));
	}
	if (x->daemon_fd >= 0)
		return claim(x, &holder);
	return 0;
}
