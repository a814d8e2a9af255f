// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * libxrl, plain helpers: is a path safe from other users? The pin
 * directory, the configuration file and the Redis credentials are trusted
 * only when nobody but root and the user running the command can change
 * what they hold or where their names lead.
 */
#include "internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static bool trusted_uid(uid_t uid)
{
	return uid == 0 || uid == geteuid();
}

/*
 * The parents of path, as named, up to "/": each owned by root (or this
 * user), and not writable by group or others unless sticky (as /tmp and a
 * bpffs's root are: then only the owner of an entry may rename or remove
 * it). A symlink among them must be owned by root (or this user) too: in a
 * sticky directory its owner could point it elsewhere (stat() sees the
 * target's owner only). `name` is the path the messages give (the one the
 * user named, when path is where it resolved to).
 */
static int parents_safe(const struct xrl_path_rules *r, const char *name, const char *path)
{
	char p[PATH_MAX], *slash;
	struct stat st;

	snprintf(p, sizeof(p), "%s", path);
	while ((slash = strrchr(p, '/'))) {
		if (slash == p)
			slash[1] = '\0';	/* "/" itself */
		else
			*slash = '\0';
		if (!lstat(p, &st) && S_ISLNK(st.st_mode) && !trusted_uid(st.st_uid))
			return fail(EPERM, "%s, a parent of the %s %s, is a symlink of uid %u: its owner could "
				    "point it elsewhere. Refused", p, r->what, name, (unsigned int)st.st_uid);
		if (stat(p, &st))
			return fail(errno, "cannot stat %s: %s", p, strerror(errno));
		if (!trusted_uid(st.st_uid))
			return fail(EPERM, "%s, a parent of the %s %s, belongs to uid %u: its owner could swap "
				    "the %s. Refused", p, r->what, name, (unsigned int)st.st_uid, r->what);
		if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX))
			return fail(EPERM, "%s, a parent of the %s %s, is writable by %s without the sticky bit "
				    "(mode %04o): anyone could swap the %s. Refused", p, r->what, name,
				    st.st_mode & S_IWOTH ? "others" : "its group", (unsigned int)(st.st_mode & 07777),
				    r->what);
		if (!strcmp(p, "/"))
			break;
	}
	return 0;
}

int xrl_path_safe(const char *path, const struct stat *st, const struct xrl_path_rules *r)
{
	char real[PATH_MAX];
	struct stat own, l;
	int err;

	if (!st) {
		if (stat(path, &own))
			return fail(errno, "cannot stat %s: %s", path, strerror(errno));
		st = &own;
	}
	if (!trusted_uid(st->st_uid))
		return fail(EPERM, "%s %s belongs to uid %u, not root: %s. Refused; %s", r->what, path,
			    (unsigned int)st->st_uid, r->owner_why, r->owner_fix);
	if (st->st_mode & (S_IWGRP | S_IWOTH))
		return fail(EPERM, "%s %s is writable by %s (mode %04o): %s. Refused; %s", r->what, path,
			    st->st_mode & S_IWOTH ? "others" : "its group", (unsigned int)(st->st_mode & 07777),
			    r->write_why, r->write_fix);
	/* the name itself a symlink: its owner may point it elsewhere */
	if (!lstat(path, &l) && S_ISLNK(l.st_mode) && !trusted_uid(l.st_uid))
		return fail(EPERM, "%s %s is a symlink of uid %u: its owner could point it elsewhere. Refused",
			    r->what, path, (unsigned int)l.st_uid);
	/* the parents as named, then as the kernel resolves them */
	if ((err = parents_safe(r, path, path)))
		return err;
	if (realpath(path, real) && strcmp(real, path))
		return parents_safe(r, path, real);
	return 0;
}
