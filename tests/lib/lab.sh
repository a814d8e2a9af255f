#!/usr/bin/env bash
# The lab of the end-to-end tests, the demo and the benchmark: two network
# namespaces joined by one veth pair, and a private bpffs for the pins.
#
#   ns $SRC                                      ns $DST
#   s0 $SRC_MAC, -s addresses  --veth--   d0 $DST_MAC, -d addresses
#                                                ^ xdp-rl attaches here
#
# Both ends live in namespaces this run created; every name carries the run
# id ($LAB_ID), so runs side by side never meet, and a leftover check can
# count only what its own run made. Nothing here touches an interface it did
# not create.
#
#   lab_init NAME       the run id "${XRL_RUN:-xrl}NAME$$", a temp dir
#                       ($LAB_TMP) and a private bpffs in it ($LAB_PIN)
#   lab_build [-q N] [-s ADDR/LEN]... [-d ADDR/LEN]...
#                       the namespaces and the veth: N queues each, queue i
#                       sent from CPU i (XPS); addresses of s0 (-s) and d0 (-d),
#                       each with a permanent neighbour entry on the other end
#                       (no ARP or ND on the measured path)
#   lab_ns NAME         one more namespace of this run, removed by lab_teardown
#   lab_teardown        remove the namespaces (the bpffs stays)
#   lab_cleanup         lab_teardown, unmount the bpffs, remove the temp dir
#   in_src/in_dst CMD   run CMD in a namespace; mounts are kept (nsenter), so
#                       the private bpffs is reachable
set -u

SRC_MAC=02:00:00:00:00:01
DST_MAC=02:00:00:00:00:fe
LAB_NAMESPACES=()

lab_init() {
	LAB_ID="${XRL_RUN:-xrl}${1:-}$$"
	SRC="$LAB_ID-src"
	DST="$LAB_ID-dst"
	LAB_TMP=$(mktemp -d "/tmp/$LAB_ID.XXXXXX") || return 1
	LAB_BPFFS="$LAB_TMP/bpffs"
	# shellcheck disable=SC2034 # for the scripts that source this one
	LAB_PIN="$LAB_BPFFS/xdp-rl"
	mkdir -p "$LAB_BPFFS"
	mount -t bpf bpf "$LAB_BPFFS" || { echo "Error: cannot mount a bpffs at $LAB_BPFFS" >&2; return 1; }
}

in_src() { nsenter --net="/run/netns/$SRC" "$@"; }
in_dst() { nsenter --net="/run/netns/$DST" "$@"; }

lab_ns() {
	ip netns add "$1" || return 1
	LAB_NAMESPACES+=("$1")
	ip -n "$1" link set lo up
}

# addr_add NS DEV ADDR/LEN: an IPv6 address skips duplicate address
# detection, so that it is usable at once
addr_add() {
	if [[ $3 == *:* ]]; then
		ip -n "$1" addr add "$3" dev "$2" nodad
	else
		ip -n "$1" addr add "$3" dev "$2"
	fi
}

lab_build() {
	local queues=1 a i OPTIND=1 opt
	local -a saddrs=() daddrs=()

	while getopts "q:s:d:" opt; do
		case $opt in
		q) queues=$OPTARG ;;
		s) saddrs+=("$OPTARG") ;;
		d) daddrs+=("$OPTARG") ;;
		*) echo "lab_build: bad option" >&2; return 1 ;;
		esac
	done
	lab_ns "$SRC" && lab_ns "$DST" || return 1
	ip -n "$SRC" link add s0 numtxqueues "$queues" numrxqueues "$queues" type veth \
		peer name d0 numtxqueues "$queues" numrxqueues "$queues" netns "$DST" || return 1
	if ((queues > 1)); then
		# queue i is sent from CPU i, as RSS would spread sources over a
		# real NIC's queues
		for ((i = 0; i < queues; i++)); do
			# ip netns exec: its fresh sysfs shows the namespace's s0
			ip netns exec "$SRC" sh -c "printf '%x' $((1 << i)) > /sys/class/net/s0/queues/tx-$i/xps_cpus" || return 1
		done
	fi
	ip -n "$SRC" link set s0 address $SRC_MAC up
	ip -n "$DST" link set d0 address $DST_MAC up
	# frames redirected into d0 need its NAPI: an XDP program, or GRO
	in_dst ethtool -K d0 gro on >/dev/null
	for a in "${saddrs[@]}"; do
		addr_add "$SRC" s0 "$a" || return 1
		ip -n "$DST" neigh add "${a%/*}" lladdr $SRC_MAC dev d0 nud permanent || return 1
	done
	for a in "${daddrs[@]}"; do
		addr_add "$DST" d0 "$a" || return 1
		ip -n "$SRC" neigh add "${a%/*}" lladdr $DST_MAC dev s0 nud permanent || return 1
	done
}

lab_teardown() {
	local ns
	for ns in "${LAB_NAMESPACES[@]}"; do
		ip netns del "$ns" 2>/dev/null
	done
	LAB_NAMESPACES=()
}

lab_cleanup() {
	lab_teardown
	[[ -n "${LAB_BPFFS:-}" ]] && umount "$LAB_BPFFS" 2>/dev/null
	[[ -n "${LAB_TMP:-}" ]] && rm -rf "$LAB_TMP"
}
