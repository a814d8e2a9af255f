/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * libxrl, plain helpers (version.c): the version of this build.
 */
#ifndef XRL_BASE_VERSION_H
#define XRL_BASE_VERSION_H

/* The version of this build (the Makefile's VERSION: `git describe`, or
 * its RELEASE outside a git clone). */
const char *xrl_version(void);

#endif
