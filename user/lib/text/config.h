/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The xdp-rld configuration file: one command per line, in the grammar of
 * xdp-rlctl without the program name (rule add ..., mode set ...), plus
 *   interface IF [mode native|generic|auto]
 *   heartbeat MS
 *   watchdog MS
 *   metrics ADDR:PORT
 * and # comments. Parsed with xrl_cmd_parse(): one grammar, one parser.
 */
#ifndef XRL_CONFIG_H
#define XRL_CONFIG_H

#include <limits.h>
#include <stdio.h>
#include <sys/socket.h>
#include <net/if.h>
#include "base/hostport.h"
#include "model/ban.h"
#include "model/decider_settings.h"
#include "model/fleet_settings.h"
#include "model/rule.h"
#include "model/words.h"
#include "xdp_rl_common.h"

struct xrl_iface_cfg {
	char name[IF_NAMESIZE];
	enum xrl_xdp_mode mode;
	enum xrl_hook hook;	/* xdp (the default) or tc */
	bool tc_first;		/* tc: kept first in the tcx chain (else a program before it is said) */
};

/* set NAME file PATH [timeout DURATION] */
struct xrl_set_cfg {
	char name[XRL_SET_NAME_MAX + 1];
	char file[PATH_MAX];
	__u64 timeout_ns;
	int line;
};

struct xrl_config {
	struct xrl_rule_entry *rules;
	int *rule_line, *rule_col;	/* where each rule was written */
	size_t nrules;
	bool has_mode;
	enum xrl_mode mode;
	struct xrl_iface_cfg *ifaces;
	int *iface_line;		/* where each interface was written */
	size_t nifaces;
	long heartbeat_ms;		/* -1: not set */
	long watchdog_ms;		/* -1: not set */
	char metrics[80];		/* "": not set */
	/* fleet redis, fleet host, fleet auth ("", 0: not written) */
	struct xrl_fleet_settings fleet;
	/* crowdsec URL key-file FILE ... ("": not written) */
	struct xrl_crowdsec_settings crowdsec;
	/* where the single-valued lines were written (0: not written) */
	int mode_line, heartbeat_line, watchdog_line, metrics_line;
	int fleet_redis_line, fleet_host_line, fleet_auth_line;
	/* ban add lines: origin config (replaced at each reload) */
	struct xrl_ban_spec *bans;
	int *ban_line;
	size_t nbans;
	int crowdsec_line;
	unsigned char sha256[32];	/* of the text parsed */
	struct xrl_set_cfg *sets;
	size_t nsets;
};

struct xrl_config_err {
	int line, col;
	char msg[560];
};

#define XRL_DEFAULT_CONFIG	"/etc/xdp-rl/rules.conf"
/* A file over this size is refused before it is parsed: 16 MiB is some
 * 200,000 rule lines, far past the rule limit. */
#define XRL_CONFIG_MAX_BYTES	(16 << 20)
/* Parsing stops after this many errors. */
#define XRL_CONFIG_MAX_ERRORS	50

/* The rule set used when there is no configuration file. */
extern const char xrl_default_config[];

/* Parse `text` (named `path` in messages). Every error is collected. Returns
 * 0, or -EINVAL with *errs (free()) holding *nerrs errors. */
int xrl_config_parse_text(const char *path, const char *text, struct xrl_config *c,
			  struct xrl_config_err **errs, size_t *nerrs);
/* Read and parse a file; -ENOENT when it does not exist. */
int xrl_config_load(const char *path, struct xrl_config *c,
		    struct xrl_config_err **errs, size_t *nerrs);
void xrl_config_free(struct xrl_config *c);
#endif
