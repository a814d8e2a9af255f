/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * libxrl, features: the daemon's pins kept whole (restore.c).
 */
#ifndef XRL_FEATURES_RESTORE_H
#define XRL_FEATURES_RESTORE_H

struct xrl;

/* 1 when every pin under the pin directory is still this handle's objects. */
int xrl_pins_ok(struct xrl *x);
/* Pin this handle's program and maps again where they were removed (an
 * `rm -rf` of the pin directory), and renew the daemon's claim. The links
 * are the caller's to re-create (xrl_attach). */
int xrl_pins_restore(struct xrl *x);

#endif
