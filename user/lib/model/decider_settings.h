/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * libxrl, pure values: the settings of the deciders the daemon follows,
 * declared once for the line that writes them (crowdsec ...), the
 * configuration that holds them and the client that runs on them.
 */
#ifndef XRL_MODEL_DECIDER_SETTINGS_H
#define XRL_MODEL_DECIDER_SETTINGS_H

#include <limits.h>

#define XRL_CS_POLL_MS		10000	/* the default: CrowdSec's bouncers pull every 10 s */
#define XRL_CS_TIMEOUT_MS	2000	/* a pull's default deadline */

struct xrl_crowdsec_settings {
	char url[128];			/* http://HOST:PORT; "": no CrowdSec */
	char key_file[PATH_MAX];	/* the bouncer's API key, on one line */
	long poll_ms, timeout_ms;	/* 0: the defaults */
	long max_body_mb;		/* an answer's body cap; 0: the default (8) */
};

#endif
