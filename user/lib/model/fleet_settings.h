/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * libxrl, pure values: the fleet's settings, declared once for the lines
 * that write them (fleet redis, fleet host, fleet auth), the configuration
 * that holds them and the fleet client that runs on them.
 */
#ifndef XRL_MODEL_FLEET_SETTINGS_H
#define XRL_MODEL_FLEET_SETTINGS_H

#include <limits.h>
#include <stdbool.h>

/* Fleet-wide bans: ban add ... scope fleet is a ban of the decider "fleet"
 * on its host; the fleet client publishes those (and the bans of fleet
 * rules) to Redis, and every other host sets them as the decider
 * "fleet.in". */
#define XRL_BAN_FLEET_WHO	"fleet"
/* the decider of the fleet's bans set here from Redis: never published */
#define XRL_BAN_FLEET_IN_WHO	"fleet.in"

struct xrl_fleet_settings {
	char redis[256];		/* HOST:PORT[,HOST:PORT...]; "": no fleet */
	bool cluster;			/* the addresses are a Redis Cluster's */
	long sync_ms, timeout_ms;	/* 0: the defaults */
	long hosts;			/* the fleet's size as the operator knows it; 0: the default */
	char host[64];			/* "": the hostname */
	char auth_file[PATH_MAX];	/* "": no AUTH */
};

#endif
