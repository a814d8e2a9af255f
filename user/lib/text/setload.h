/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * libxrl, the text layer: a set file read and parsed (model/setfile.h) as
 * a whole before anything is applied.
 */
#ifndef XRL_TEXT_SETLOAD_H
#define XRL_TEXT_SETLOAD_H

#include "model/setfile.h"

/* The largest set file read (bytes): a million IPv6 lines of ipset save
 * with timeouts are some 60 MB. */
#define XRL_SET_FILE_MAX	(256ULL << 20)

/* Read and parse FILE into *l (emptied first). A missing file, a directory,
 * a file over XRL_SET_FILE_MAX or over XRL_SET_MAX_ELEMS prefixes, a bad
 * line (FILE:LINE): an error, *l empty. */
int xrl_set_file_read(const char *path, struct xrl_set_list *l);

#endif
