#!/bin/sh
# Install the Debian packages warren needs to build, test and benchmark.
# Idempotent: apt-get install skips what is already there. Needs root (or
# sudo); as an ordinary user with everything installed it does nothing.
set -eu

PKGS="build-essential cmake pkg-config clang libclang-rt-dev
libcurl4-openssl-dev libmsgpack-dev libsqlite3-dev libbsd-dev libmd-dev
libseccomp-dev
libjansson-dev libpcre2-dev libcmocka-dev util-linux passwd procps git"
# The queue's PostgreSQL backend (libpq) and the server its tests start
# (tests/queue/pg_server.sh: initdb and pg_ctl of their own, no cluster of
# the package's is used).
PKGS="$PKGS libpq-dev postgresql"
# test_cow_changes makes a btrfs to check that the copy mode reflinks.
PKGS="$PKGS btrfs-progs"
# test_hostexec_names makes case-insensitive workspaces: ext4 casefold on
# a loop device (e2fsprogs), and a case-insensitive FUSE passthrough
# (tests/e2e/cifuse.py: fusepy, and fusermount for an ordinary user).
PKGS="$PKGS e2fsprogs fuse python3-fusepy"
# test_report_chromium loads `warren report`'s page in headless Chromium.
PKGS="$PKGS chromium"
# test_backend_presets_run has Claude Code and Codex run curl in the sandbox.
PKGS="$PKGS curl"
# test_live draws the live view in a detached tmux session and reads it.
PKGS="$PKGS tmux"
# Only the benchmarks use these (scripts/bench.sh).
BENCH_PKGS="bubblewrap hyperfine linux-perf"

missing=""
for p in $PKGS ${WARREN_WITH_BENCH:+$BENCH_PKGS}; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
		missing="$missing $p"
done
if [ -z "$missing" ]; then
	echo "install-deps: all packages present"
	exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
	command -v sudo >/dev/null || {
		echo "install-deps: missing:$missing; run as root to install" >&2
		exit 1
	}
	SUDO=sudo
fi
echo "install-deps: installing$missing"
$SUDO apt-get update -q
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends $missing
