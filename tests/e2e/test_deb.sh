#!/usr/bin/env bash
# The Debian package (make deb, docs/install.md): built with Debian's tools,
# clean under lintian, installed on this machine with dpkg -i, its programs
# run from /usr/sbin (and attached in the lab), purged with nothing left
# behind; a second build from the same tree, elsewhere, gives the same files.
#
# It installs a package on the machine itself, so it refuses to run (skips)
# where an xdp-rl package, a file the package would own, or a real
# deployment's pins already exist; its own package is purged on any exit.
# Two full builds: about a minute.
source "$(dirname "$0")/../lib/e2e.sh"

PKG=xdp-rl
DEB1='' DEB2=''	# the two builds' .deb files
DEB_WHY=		# why the package cannot be built or installed here
INSTALLED=0		# this run installed the package: purge it on exit

deb_cleanup() {
	if ((INSTALLED)); then
		dpkg_retry --purge "$PKG" >/dev/null 2>&1 || echo "    note: dpkg --purge $PKG failed" >&2
		INSTALLED=0
	fi
	cleanup
}
trap deb_cleanup EXIT

# dpkg_private ARGS...: dpkg in a private mount namespace with a fresh
# bpffs on /sys/fs/bpf (and a tmpfs over /run/systemd where it exists), so
# that the package's prerm, which on remove detaches and purges the
# limiter of /sys/fs/bpf/xdp-rl and stops xdp-rld.service, can never reach
# a deployment that appeared on this host after deb_preflight looked (the
# builds take a minute; the trap's purge runs whenever the test exits).
# The files dpkg installs and removes are the host's: only mounts are
# private.
dpkg_private() {
	# shellcheck disable=SC2016 # expanded by the inner shell
	unshare -m --propagation private sh -c '
		mount -t bpf bpf /sys/fs/bpf || { echo "Error: no private bpffs: dpkg not run" >&2; exit 97; }
		if [ -d /run/systemd ]; then
			mount -t tmpfs none /run/systemd || { echo "Error: no private /run/systemd" >&2; exit 97; }
		fi
		[ -z "${XRL_DPKG_PROBE:-}" ] || { echo "$(stat -c %d /sys/fs/bpf) $(ls -A /sys/fs/bpf | grep -vc "\.debug$")"; exit 0; }
		exec dpkg "$@"' dpkg "$@"
}

# dpkg_retry ARGS...: dpkg (dpkg_private), waiting (up to 2 min) while
# another engineer's apt or dpkg holds the lock
dpkg_retry() {
	local i out rc
	for ((i = 0; i < 60; i++)); do
		out=$(dpkg_private "$@" 2>&1) && { printf '%s\n' "$out"; return 0; }
		rc=$?
		grep -q "lock" <<<"$out" || { printf '%s\n' "$out" >&2; return $rc; }
		sleep 2
	done
	printf '%s\n' "$out" >&2
	return 1
}

# what would make installing here unsafe: said once, every test skips on it
deb_preflight() {
	local t f
	for t in dpkg-buildpackage dh lintian dpkg-deb; do
		command -v $t >/dev/null || { DEB_WHY="no $t (scripts/deps.sh test installs it)"; return; }
	done
	if dpkg-query -W -f='${Status}' "$PKG" 2>/dev/null | grep -q "installed\|config-files"; then
		DEB_WHY="an $PKG package is installed on this machine already: this test installs and purges its own"
		return
	fi
	for f in /usr/sbin/xdp-rlctl /usr/sbin/xdp-rld /etc/xdp-rl /usr/share/xdp-rl \
		/lib/systemd/system/xdp-rld.service /sys/fs/bpf/xdp-rl; do
		[[ -e $f ]] && { DEB_WHY="$f exists (an install or a deployment not from this test's package)"; return; }
	done
}

# need_deb: the first build (once per run), in this run's temp dir
need_deb() {
	[[ -n $DEB1 ]] && return 0
	make -s -C "$TOP" deb DEB_WORK="$TMPD/w1" DEB_OUT="$TMPD/o1" 2>"$TMPD/deb1.err" ||
		{ fail "make deb failed: $(tail -n 5 "$TMPD/deb1.err" | tr '\n' '|')"; return 1; }
	DEB1=$(ls "$TMPD"/o1/${PKG}_*_*.deb 2>/dev/null)
	[[ -f $DEB1 ]] || { fail "make deb left no ${PKG}_VERSION_ARCH.deb"; return 1; }
}

# the package's name, version and what it holds
test_deb_contents() {
	[[ -z $DEB_WHY ]] || { skip "$DEB_WHY"; return; }
	need_deb || return
	local ver arch c f
	ver=$(dpkg-parsechangelog -l "$TOP/debian/changelog" -S Version)
	arch=$(dpkg --print-architecture)
	check_eq "file name" "$(basename "$DEB1")" "${PKG}_${ver}_${arch}.deb"
	check_eq "version" "$(dpkg-deb -f "$DEB1" Version)" "$ver"
	c=$(dpkg-deb -c "$DEB1" | awk '{ print $6 }')
	for f in ./usr/sbin/xdp-rlctl ./usr/sbin/xdp-rld ./usr/share/man/man8/xdp-rlctl.8.gz \
		./usr/share/man/man8/xdp-rld.8.gz ./usr/share/man/man5/xdp-rl.conf.5.gz \
		./usr/share/bash-completion/completions/xdp-rlctl ./lib/systemd/system/xdp-rld.service \
		./usr/share/xdp-rl/xdp-rl-alerts.yml ./etc/xdp-rl/rules.conf ./usr/share/doc/xdp-rl/copyright; do
		grep -qxF "$f" <<<"$c" || fail "$f not in the package"
	done
	# the dashboard, when the tree has one
	if [[ -e $TOP/packaging/grafana/xdp-rl.json ]]; then
		grep -q "/xdp-rl.json$" <<<"$c" || fail "the tree's dashboard is not in the package"
	fi
	# Build-Depends: what scripts/deps.sh build installs (make and gcc are
	# build-essential's)
	local p bd missing=
	bd=$(sed -n '/^Build-Depends:/,/^[A-Z]/p' "$TOP/debian/control" | tr -s ' ,\n' '\n')
	for p in $(sed -n '/^BUILD=(/,/^)/p' "$TOP/scripts/deps.sh" | sed '1d;$d'); do
		[[ $p == make || $p == gcc ]] && continue
		grep -qx "$p" <<<"$bd" || missing+="$p "
	done
	check_eq "Build-Depends has the build set" "$missing" ""
	check_eq "nothing of the tests" "$(grep -cE 'xrl-flood|test_|udpflood' <<<"$c")" 0
	check_match "shared libraries declared" "$(dpkg-deb -f "$DEB1" Depends)" "libbpf1.*libc6"
	check_eq "conffile" "$(dpkg-deb --ctrl-tarfile "$DEB1" | tar -xO ./conffiles)" "/etc/xdp-rl/rules.conf"
	local copyright
	copyright=$(dpkg-deb --fsys-tarfile "$DEB1" | tar -xO ./usr/share/doc/xdp-rl/copyright)
	check_match "machine-readable copyright" "$copyright" "^Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/"
	check_match "the unit runs the packaged daemon" \
		"$(dpkg-deb --fsys-tarfile "$DEB1" | tar -xO ./lib/systemd/system/xdp-rld.service | grep ^ExecStart=)" \
		"^ExecStart=/usr/sbin/xdp-rld "
	# the version the programs print is the package's: no build path, no
	# commit of the clone it was built in
	dpkg-deb -x "$DEB1" "$TMPD/x1"
	check_eq "no build path in the programs" "$(grep -lF "$TMPD" "$TMPD"/x1/usr/sbin/* | wc -l)" 0
}

test_deb_lintian() {
	[[ -z $DEB_WHY ]] || { skip "$DEB_WHY"; return; }
	need_deb || return
	local ch rc=0
	ch=$(ls "$TMPD"/w1/${PKG}_*.changes)
	# .changes: the .deb, its -dbgsym and the .buildinfo
	lintian --fail-on error,warning "$ch" >"$TMPD/lintian.out" 2>&1 || rc=$?
	check_eq "lintian: no error and no warning" \
		"$rc:$(grep -v 'running with root privileges' "$TMPD/lintian.out")" "0:"
}

test_deb_install_purge() {
	[[ -z $DEB_WHY ]] || { skip "$DEB_WHY"; return; }
	need_deb || return
	dpkg_retry -i "$DEB1" >"$TMPD/dpkg.log" || { fail "dpkg -i: $(tail -n 3 "$TMPD/dpkg.log")"; return; }
	INSTALLED=1
	check_eq "installed" "$(dpkg-query -W -f='${Status}' $PKG)" "install ok installed"
	check_match "xdp-rlctl -V" "$(/usr/sbin/xdp-rlctl -V)" \
		"^xdp-rlctl $(dpkg-query -W -f='${Version}' $PKG)"
	check_match "xdp-rld --check on the packaged rules" "$(/usr/sbin/xdp-rld --check 2>&1)" "valid, 2 rules"
	check_match "man page" "$(man -w xdp-rlctl 2>/dev/null)" "^/usr/share/man/man8/xdp-rlctl.8"
	# the unit is installed, neither enabled nor started
	check_eq "unit not enabled" "$(find /etc/systemd/system -name xdp-rld.service 2>/dev/null | wc -l)" 0
	check_eq "postinst starts nothing" \
		"$(dpkg-deb --ctrl-tarfile "$DEB1" | tar -xO ./postinst | grep -cE 'deb-systemd-invoke|systemctl.*start')" 0
	# the installed programs, in the lab: a flood held to its rule
	lab_up || return
	CTL_BIN=/usr/sbin/xdp-rlctl ctl attach dev d0 keys 1024 >/dev/null || fail "attach from /usr/sbin"
	CTL_BIN=/usr/sbin/xdp-rlctl ctl rule add 198.18.0.0/24 rate 1/h burst 20 id 1 >/dev/null
	flood 198.18.0.1 198.18.0.254 2000 >/dev/null
	check_eq "the installed limiter holds the flood to its burst" \
		"$(CTL_BIN=/usr/sbin/xdp-rlctl ctl -j stats | jq '.rules[] | select(.id == 1) | .passed_packets')" 20
	CTL_BIN=/usr/sbin/xdp-rlctl ctl detach dev d0 purge >/dev/null
	lab_down
	# a changed conffile survives a reinstall and a remove; purge takes it
	echo "# mine" >>/etc/xdp-rl/rules.conf
	dpkg_retry -i "$DEB1" >/dev/null || fail "reinstall"
	check_match "conffile kept on reinstall" "$(tail -n 1 /etc/xdp-rl/rules.conf)" "# mine"
	local files f left=()
	mapfile -t files < <(dpkg -L $PKG)
	dpkg_retry --remove $PKG >/dev/null || fail "dpkg --remove"
	check_eq "removed, config kept" "$(dpkg-query -W -f='${Status}' $PKG 2>/dev/null)" "deinstall ok config-files"
	[[ -f /etc/xdp-rl/rules.conf ]] || fail "remove took the conffile"
	dpkg_retry --purge $PKG >/dev/null || fail "dpkg --purge"
	INSTALLED=0
	for f in "${files[@]}"; do
		# shared directories (/usr, /usr/share/man/man8 ...) stay; ours go
		[[ -d $f && $f != */xdp-rl ]] && continue
		[[ -e $f ]] && left+=("$f")
	done
	check_eq "nothing left behind" "${left[*]}" ""
	check_eq "/etc/xdp-rl gone" "$([[ -e /etc/xdp-rl ]] && echo present)" ""
	check_eq "no pins" "$([[ -e /sys/fs/bpf/xdp-rl ]] && echo present)" ""
	check_eq "purged" "$(dpkg-query -W -f='${Status}' $PKG 2>/dev/null)" ""
}

# a second build of the same tree in another directory: the same files,
# byte for byte (SOURCE_DATE_EPOCH from the changelog, no build path)
test_deb_reproducible() {
	[[ -z $DEB_WHY ]] || { skip "$DEB_WHY"; return; }
	need_deb || return
	make -s -C "$TOP" deb DEB_WORK="$TMPD/second/w" DEB_OUT="$TMPD/o2" 2>"$TMPD/deb2.err" ||
		{ fail "second make deb failed: $(tail -n 5 "$TMPD/deb2.err" | tr '\n' '|')"; return; }
	DEB2=$(ls "$TMPD"/o2/${PKG}_*_*.deb)
	check_eq "same listing" "$(diff <(dpkg-deb -c "$DEB1") <(dpkg-deb -c "$DEB2") && echo same)" same
	rm -rf "$TMPD/x1" "$TMPD/x2"
	dpkg-deb -x "$DEB1" "$TMPD/x1" && dpkg-deb -x "$DEB2" "$TMPD/x2"
	check_eq "same files" "$(diff <(cd "$TMPD/x1" && find . -type f -print0 | sort -z | xargs -0 sha256sum) \
		<(cd "$TMPD/x2" && find . -type f -print0 | sort -z | xargs -0 sha256sum) && echo same)" same
	check_eq "same control" "$(diff <(dpkg-deb -I "$DEB1") <(dpkg-deb -I "$DEB2") && echo same)" same
}

deb_preflight
# the package's prerm, run as dpkg would (remove, upgrade) on a limiter the
# test attached to its own veth, with its pins under /sys/fs/bpf/xdp-rl of a
# private mount namespace: a fresh bpffs mounted there (and a tmpfs over
# /run/systemd, so the script stops no unit of this host), seen by nothing
# else and gone with it; xdp-rlctl is the build under test, first on PATH
test_deb_prerm() {
	lab_up || return
	local out
	# shellcheck disable=SC2016 # expanded by the inner shell
	out=$(unshare -m --propagation private bash -c '
		set -u
		mount -t bpf bpf /sys/fs/bpf || { echo "no private bpffs"; exit 0; }
		if [ -d /run/systemd ]; then mount -t tmpfs none /run/systemd || exit 0; fi
		inns() { nsenter --net="/run/netns/$1" env PATH="$2:$PATH" "${@:3}"; }
		inns "$1" "$2" xdp-rlctl attach dev d0 >/dev/null 2>&1 || { echo "attach failed"; exit 0; }
		inns "$1" "$2" xdp-rlctl rule add 198.18.0.0/24 rate 10/s burst 5 >/dev/null 2>&1
		inns "$1" "$2" sh "$3" upgrade
		echo "upgrade: $(ip -n "$1" link show d0 | grep -c "xdp") pins $(ls /sys/fs/bpf/xdp-rl 2>/dev/null | wc -l)"
		inns "$1" "$2" sh "$3" remove
		echo "remove: $(ip -n "$1" link show d0 | grep -c "xdp") pins $([ -e /sys/fs/bpf/xdp-rl ] && echo kept || echo gone)"
	' _ "$DST" "$OUT" "$TOP/debian/xdp-rl.prerm" 2>&1)
	echo "$out" | sed 's/^/    /'
	check_match "upgrade leaves it attached, pins in place" "$out" "upgrade: [1-9] pins [1-9]"
	check_match "remove detaches and purges" "$out" "remove: 0 pins gone"
	no_xdp_on "$DST" d0 || fail "a program left on d0"
}

# the test's dpkg (install, remove, purge, the trap's purge) runs where the
# prerm sees an empty bpffs of its own, never this host's pins
test_deb_dpkg_private() {
	local probe
	probe=$(XRL_DPKG_PROBE=1 dpkg_private 2>&1)
	check_match "dpkg's bpffs is empty" "$probe" "^[0-9]+ 0$"
	check_eq "dpkg's bpffs is not the host's" "${probe%% *}" "$(( $(stat -c %d /sys/fs/bpf) == ${probe%% *} ? -1 : ${probe%% *} ))"
}

run_test test_deb_dpkg_private
run_test test_deb_contents
run_test test_deb_lintian
run_test test_deb_install_purge
run_test test_deb_reproducible
run_test test_deb_prerm
summary
