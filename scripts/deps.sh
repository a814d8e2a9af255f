#!/usr/bin/env bash
# Install the Debian packages xdp-rl needs, by set:
#   scripts/deps.sh build   what `make` needs: the compilers, libbpf, bpftool and
#                           the libraries the CLI, the daemon and the tools link
#   scripts/deps.sh demo    build, and what `make demo` and `make demo-fleet` run:
#                           iproute2, jq, curl, ethtool, redis-server
#   scripts/deps.sh deb     build, and what `make deb` runs: debhelper, dpkg-dev
#   scripts/deps.sh [test]  everything: the demo set and the whole test and
#                           benchmark toolchain (the default)
# Idempotent and quiet: apt-get runs only when a package is missing.
set -euo pipefail

BUILD=(
	make gcc clang llvm pkg-config
	libbpf-dev bpftool libelf-dev zlib1g-dev linux-libc-dev libmnl-dev
	libmicrohttpd-dev libsystemd-dev libpcap-dev libcap-ng-dev libhiredis-dev
)
DEMO=(
	iproute2 util-linux procps jq curl ethtool
	redis-server redis-tools
)
# the Debian package's tools (make deb); lintian is the test set's
DEB=(
	debhelper dpkg-dev fakeroot
)
TEST=(
	bc python3 ipset
	lintian
	nftables iptables gnuplot-nox
	prometheus man-db tmux
	tcpdump systemd chromium
	iperf3 dnsmasq-base dnsperf bind9-dnsutils
	libclang-rt-14-dev libasan8 libubsan1
	shellcheck
	crowdsec fail2ban
	xdp-tools
)

set_name=${1:-test}
case $set_name in
build) PKGS=("${BUILD[@]}") ;;
demo) PKGS=("${BUILD[@]}" "${DEMO[@]}") ;;
deb) PKGS=("${BUILD[@]}" "${DEB[@]}") ;;
test) PKGS=("${BUILD[@]}" "${DEMO[@]}" "${DEB[@]}" "${TEST[@]}") ;;
*)
	echo "Error: unknown set '$set_name': build, demo, deb or test" >&2
	exit 2
	;;
esac

missing=()
for p in "${PKGS[@]}"; do
	st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
	[[ "$st" == "install ok installed" ]] || missing+=("$p")
done

[[ ${#missing[@]} -eq 0 ]] && exit 0

if [[ $(id -u) -ne 0 ]]; then
	echo "Error: missing packages: ${missing[*]}; run as root (sudo scripts/deps.sh $set_name)" >&2
	exit 1
fi
echo "deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
# Debian's crowdsec registers with CrowdSec's central API in its post-install
# script; offline that fails and leaves dpkg half-configured (every later
# apt-get install fails too). Its README.Debian: a credentials file holding
# only a comment, before the install, and the Local API runs offline. The
# tests run a Local API of their own (tests/e2e/test_crowdsec.sh).
if [[ " ${missing[*]} " == *" crowdsec "* && ! -e /etc/crowdsec/online_api_credentials.yaml ]]; then
	mkdir -p /etc/crowdsec
	echo '# no thanks' >/etc/crowdsec/online_api_credentials.yaml
fi
# Packages with a service (prometheus, redis-server, crowdsec, fail2ban) must not start it: the tests start
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
