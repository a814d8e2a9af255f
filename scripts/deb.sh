#!/usr/bin/env bash
# scripts/deb.sh WORK OUT: build the Debian package (make deb).
#
# dpkg-buildpackage runs on a clean copy of the tree in WORK/xdp-rl-VERSION,
# so the build never dirties the worktree: in a git clone, the tracked files
# as they are now (`git stash create` makes a commit of uncommitted changes
# without touching anything; untracked files are left out), else the tree
# without .output. The package, xdp-rl_VERSION_ARCH.deb, is copied to OUT;
# the build's log stays in WORK/build.log. SOURCE_DATE_EPOCH comes from
# debian/changelog (dpkg-buildpackage), so two builds of one tree give the
# same files.
set -euo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd)
work=${1:?usage: scripts/deb.sh WORK OUT}
out=${2:?usage: scripts/deb.sh WORK OUT}
for t in dpkg-buildpackage dh dpkg-parsechangelog; do
	command -v "$t" >/dev/null ||
		{ echo "Error: $t not found: install debhelper and dpkg-dev (sudo scripts/deps.sh test)" >&2; exit 1; }
done
ver=$(dpkg-parsechangelog -l "$TOP/debian/changelog" -S Version)
arch=$(dpkg --print-architecture)
mkdir -p "$work" "$out"
work=$(cd "$work" && pwd)
out=$(cd "$out" && pwd)
src="$work/xdp-rl-$ver"
rm -rf "$src" "$work"/xdp-rl_* "$work/build.log"
mkdir -p "$src"
if git -C "$TOP" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	tree=$(git -C "$TOP" stash create)
	git -C "$TOP" archive --format=tar "${tree:-HEAD}" | tar -x -C "$src"
else
	tar -C "$TOP" --exclude=./.output -c . | tar -x -C "$src"
fi
echo "  DEB      $src" >&2
# outside any git clone's view: the copy may sit inside this worktree, and a
# git describe there must not see it (the version is the changelog's)
if ! (cd "$src" && GIT_DIR=/nonexistent GIT_CEILING_DIRECTORIES="$work" \
	dpkg-buildpackage -b -us -uc) >"$work/build.log" 2>&1; then
	tail -n 30 "$work/build.log" >&2
	echo "Error: dpkg-buildpackage failed; the whole log: $work/build.log" >&2
	exit 1
fi
deb="xdp-rl_${ver}_${arch}.deb"
cp "$work/$deb" "$out/$deb"
echo "  DEB      $out/$deb" >&2
