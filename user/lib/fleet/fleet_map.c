// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * What the daemon wrote of each fleet rule, for xdp-rlctl: apart from
 * fleet.c so that the CLI does not link the Redis client.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "fleet/fleet.h"
#include "maps/internal.h"
#include "base/json.h"

/* The fleet-keys map of a family, and the key as it is stored. */
static int fleet_key_raw(struct xrl *x, const struct xrl_key *k, struct xrl_bucket_key6 *raw)
{
	memset(raw, 0, sizeof(*raw));
	raw->gen = k->gen;
	memcpy(raw->addr, k->addr, k->family == 6 ? 16 : 4);
	return x->map_fd[k->family == 6 ? M_FLEET_KEYS6 : M_FLEET_KEYS4];
}

int xrl_fleet_key_put(struct xrl *x, const struct xrl_key *k, __u32 lease_slot)
{
	struct xrl_bucket_key6 raw;
	int fd = fleet_key_raw(x, k, &raw);

	return bpf_map_update_elem(fd, &raw, &lease_slot, BPF_ANY) ? -errno : 0;
}

int xrl_fleet_key_get(struct xrl *x, const struct xrl_key *k, __u32 *lease_slot)
{
	struct xrl_bucket_key6 raw;
	int fd = fleet_key_raw(x, k, &raw);

	return bpf_map_lookup_elem(fd, &raw, lease_slot) ? -errno : 0;
}

int xrl_fleet_key_del(struct xrl *x, const struct xrl_key *k)
{
	struct xrl_bucket_key6 raw;
	int fd = fleet_key_raw(x, k, &raw);

	return bpf_map_delete_elem(fd, &raw) ? -errno : 0;
}

int xrl_fleet_rule_put(struct xrl *x, __u32 slot, const struct xrl_fleet_rule *fr)
{
	return bpf_map_update_elem(x->map_fd[M_FLEET_RULES], &slot, fr, BPF_ANY) ? -errno : 0;
}

struct xrl_lease *xrl_fleet_leases(struct xrl *x)
{
	void *p;

	if (x->leases)
		return x->leases;
	p = mmap(NULL, XRL_FLEET_SLOTS * sizeof(struct xrl_lease), PROT_READ | PROT_WRITE,
		 MAP_SHARED, x->map_fd[M_LEASES], 0);
	if (p == MAP_FAILED)
		return NULL;
	x->leases = p;
	return p;
}

int xrl_fleet_rule_get(struct xrl *x, __u32 slot, struct xrl_fleet_rule *out)
{
	if (bpf_map_lookup_elem(x->map_fd[M_FLEET_RULES], &slot, out))
		return -errno;
	return out->interval || out->hosts ? 0 : -ENOENT;
}

const char *xrl_fleet_state_name(__u32 state)
{
	switch (state & XRL_FLEET_STATE_MASK) {
	case XRL_FLEET_SYNCED: return "synced";
	case XRL_FLEET_FALLBACK_OPEN: return "fallback-open";
	case XRL_FLEET_CLOSED: return "closed";
	case XRL_FLEET_NEVER_SYNCED: return "never-synced";
	default: return "unsynced";
	}
}

/* One fleet rule's state, for both outputs: 0, or -ENOENT (never synced
 * by a daemon: the rule meters at its whole rate). */
static int fleet_view(struct xrl *x, const struct xrl_rule_entry *e, struct xrl_fleet_rule *fr,
		      long long *age_ms)
{
	int err = xrl_fleet_rule_get(x, e->r.slot, fr);

	if (err || fr->rule_id != e->r.id)
		return -ENOENT;
	*age_ms = fr->sync_ns ? (long long)(xrl_now_ns(x) - fr->sync_ns) / 1000000 : -1;
	return 0;
}

void xrl_fleet_json(struct jw *w, struct xrl *x)
{
	struct xrl_rule_entry *v;
	size_t n;

	jw_key(w, "fleet");
	jw_arr_start(w);
	if (!xrl_rules_get(x, &v, &n)) {
		for (size_t i = 0; i < n; i++) {
			struct xrl_fleet_rule fr;
			long long age;

			if (v[i].r.scope != XRL_SCOPE_FLEET)
				continue;
			jw_obj_start(w);
			jw_ku64(w, "rule", v[i].r.id);
			if (fleet_view(x, &v[i], &fr, &age)) {
				jw_kstr(w, "state", "unsynced");
				jw_obj_end(w);
				continue;
			}
			jw_kstr(w, "state", xrl_fleet_state_name(fr.state));
			/* never synced: N unknown, the share's divisor chosen */
			jw_ku64(w, "live_hosts", (fr.state & XRL_FLEET_STATE_MASK) == XRL_FLEET_NEVER_SYNCED ?
						 0 : fr.hosts);
			jw_ku64(w, "share_hosts", fr.hosts);
			jw_kbool(w, "redis_may_evict", fr.state & XRL_FLEET_F_MAY_EVICT);
			jw_key(w, "last_sync_age_ms");
			if (age >= 0)
				jw_u64(w, age);
			else
				jw_null(w);
			jw_key(w, "last_sync_latency_us");
			jw_u64(w, fr.latency_ns / 1000);
			jw_ku64(w, "promoted_keys", fr.promoted);
			jw_obj_end(w);
		}
		free(v);
	}
	jw_arr_end(w);
}

void xrl_fleet_print(FILE *f, struct xrl *x)
{
	struct xrl_rule_entry *v;
	size_t n;

	if (xrl_rules_get(x, &v, &n))
		return;
	for (size_t i = 0; i < n; i++) {
		struct xrl_fleet_rule fr;
		long long age;

		if (v[i].r.scope != XRL_SCOPE_FLEET)
			continue;
		if (fleet_view(x, &v[i], &fr, &age)) {
			fprintf(f, "fleet rule %u: unsynced (no daemon syncs it: metered at its whole rate)\n",
				v[i].r.id);
			continue;
		}
		if ((fr.state & XRL_FLEET_STATE_MASK) == XRL_FLEET_NEVER_SYNCED) {
			if (v[i].r.on_failure == XRL_FAIL_CLOSED)
				fprintf(f, "fleet rule %u: never-synced (on-failure closed: keys over rate/%u dropped), %u key(s) dropped\n",
					v[i].r.id, fr.hosts, fr.promoted);
			else
				fprintf(f, "fleet rule %u: never-synced (on-failure open: metered alone at the whole rate)\n",
					v[i].r.id);
			continue;
		}
		fprintf(f, "fleet rule %u: %s, %u live host(s), ", v[i].r.id,
			xrl_fleet_state_name(fr.state), fr.hosts);
		if (age >= 0)
			fprintf(f, "last sync %lld ms ago in %.1f ms, ", age, fr.latency_ns / 1e6);
		else
			fprintf(f, "never synced, ");
		fprintf(f, "%u promoted key(s)%s\n", fr.promoted,
			fr.state & XRL_FLEET_F_MAY_EVICT ?
				", Redis may evict fleet keys (maxmemory-policy not noeviction)" : "");
	}
	free(v);
}
