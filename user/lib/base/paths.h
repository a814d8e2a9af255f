/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * libxrl, plain helpers (paths.c): is a path safe from other users?
 */
#ifndef XRL_PATHS_H
#define XRL_PATHS_H

#include <sys/stat.h>

/* What a path is, for the messages: "<what> <path> belongs to uid N, not
 * root: <owner_why>. Refused; <owner_fix>", "... is writable by others
 * (mode M): <write_why>. Refused; <write_fix>". */
struct xrl_path_rules {
	const char *what;
	const char *owner_why, *owner_fix;
	const char *write_why, *write_fix;
};

/*
 * 0 when nobody but root and this user (the effective uid) can change what
 * path holds or where its name leads: path (st: its stat, of the opened
 * file; NULL: stat() it) owned by root or this user and not writable by
 * group or others; a symlink in its place owned by them too; each parent up
 * to /, as named and as resolved, owned by them and not writable by group
 * or others unless sticky, each symlink of the chain (at most 40) owned by
 * them, resolution refused when it fails. Else -EPERM
 * (or the stat's error) with xrl_errmsg() naming the culprit.
 */
int xrl_path_safe(const char *path, const struct stat *st, const struct xrl_path_rules *r);

#endif
