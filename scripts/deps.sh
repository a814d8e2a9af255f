#!/usr/bin/env bash
# Install the Debian packages that building and testing xdp-rl need.
# Idempotent and quiet: apt-get runs only when a package is missing.
set -euo pipefail

PKGS=(
	make gcc clang llvm pkg-config
	libbpf-dev bpftool libelf-dev zlib1g-dev linux-libc-dev libmnl-dev
	iproute2 util-linux procps jq ethtool bc python3
	nftables iptables gnuplot-nox
	libmicrohttpd-dev libsystemd-dev prometheus curl man-db tmux
	libpcap-dev tcpdump libcap-ng-dev systemd
	iperf3 dnsmasq-base dnsperf
	libclang-rt-14-dev libasan8 libubsan1
	redis-server redis-tools libhiredis-dev
	shellcheck
)

missing=()
for p in "${PKGS[@]}"; do
	st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
	[[ "$st" == "install ok installed" ]] || missing+=("$p")
done

[[ ${#missing[@]} -eq 0 ]] && exit 0

if [[ $(id -u) -ne 0 ]]; then
	echo "Error: missing packages: ${missing[*]}; run as root (sudo make test)" >&2
	exit 1
fi
echo "deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
# Packages with a service (prometheus, redis-server) must not start it: the tests start
# their own, inside a namespace. A policy-rc.d of ours says so for the
# length of the install, unless the machine has one already.
policy=/usr/sbin/policy-rc.d
ours=0
if [[ ! -e $policy ]]; then
	printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod 0755 "$policy" && ours=1
fi
trap '[[ $ours == 1 ]] && rm -f "$policy"' EXIT
apt-get update -qq >/dev/null
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
