#!/bin/sh
# The whole test suite on a fresh Debian machine, all setup included:
#   1. install the Debian packages (scripts/install-deps.sh) and the npm
#      programs the MCP and agent-backend tests run (scripts/install-npm.sh)
#   2. build with -Werror and run every test (ctest)
#   3. build with ASan + UBSan and run every test again
#   4. run the libFuzzer harnesses for a bounded time (FUZZ_SECONDS, 60)
#   5. when run as root: run the sandbox and end-to-end tests again as an
#      unprivileged user, since the sandbox differs between the two
# Exits non-zero if any step fails.
set -eu
cd "$(dirname "$0")/.."
top=$(pwd)
FUZZ_SECONDS=${FUZZ_SECONDS:-60}
# install-deps installs chromium: test_report_chromium must not skip here.
export WARREN_REQUIRE_CHROMIUM=1

step() { printf '\n==== %s ====\n' "$*"; }

# Run ctest in a build directory and add its counts to the totals that the
# last line of this script reports.
passed=0
failed=0
tally=$(mktemp)
trap 'rm -f "$tally"' EXIT
run_ctest() {
	dir=$1
	shift
	rc=0
	(cd "$dir" && ctest --output-on-failure -j2 "$@") >"$tally" 2>&1 || rc=$?
	cat "$tally"
	count "$tally"
	return $rc
}
count() {
	line=$(grep -E 'tests passed, [0-9]+ tests? failed out of [0-9]+' "$1" | tail -n 1)
	[ -n "$line" ] || return 0
	total=$(echo "$line" | sed -E 's/.* out of ([0-9]+).*/\1/')
	bad=$(echo "$line" | sed -E 's/.*passed, ([0-9]+) tests? failed.*/\1/')
	passed=$((passed + total - bad))
	failed=$((failed + bad))
}

step "install dependencies"
sh scripts/install-deps.sh
# The MCP and external-agent tests run real programs from npm.
sh scripts/install-npm.sh

step "build (release, -Werror)"
sh scripts/build.sh build
step "tests (release)"
run_ctest build

step "build (ASan + UBSan)"
sh scripts/build.sh --sanitize build-asan
step "tests (ASan + UBSan)"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 run_ctest build-asan

step "fuzz (${FUZZ_SECONDS}s per harness)"
sh scripts/build.sh --fuzz build-fuzz
sh scripts/fuzz.sh "$FUZZ_SECONDS" build-fuzz

if [ "$(id -u)" -eq 0 ]; then
	step "sandbox and end-to-end tests as an unprivileged user"
	user=warren-test
	id "$user" >/dev/null 2>&1 || useradd --create-home --shell /bin/sh "$user"
	src=/tmp/warren-user-src
	rm -rf "$src"
	mkdir -p "$src"
	# A copy the user owns: the clone may sit under a directory (/root) the
	# user cannot enter.
	tar -C "$top" --exclude=./build --exclude=./build-asan \
	    --exclude=./build-fuzz --exclude=./.git -cf - . | tar -C "$src" -xf -
	chown -R "$user" "$src"
	runuser -u "$user" -- sh -c "cd '$src' && sh scripts/build.sh build >build.log 2>&1" || {
		tail -50 "$src/build.log"
		exit 1
	}
	# /dev/fuse as a Debian machine with udev has it: 0666 (systemd's
	# 50-udev-default.rules, installed by Debian's udev package;
	# fusermount is setuid for the mount itself). A machine without
	# udev (a container, this CI's) leaves the kernel's 0600, and
	# test_hostexec_names would skip its case-insensitive FUSE
	# workspace as the user; with 0666 it runs it as root does.
	fuse_mode=
	if [ -c /dev/fuse ]; then
		fuse_mode=$(stat -c %a /dev/fuse)
		chmod 0666 /dev/fuse
	fi
	rc=0
	runuser -u "$user" -- sh -c "cd '$src/build' &&
	    ctest --output-on-failure -j2 -L 'sandbox|e2e|integration'" >"$tally" 2>&1 || rc=$?
	[ -z "$fuse_mode" ] || chmod "$fuse_mode" /dev/fuse
	cat "$tally"
	count "$tally"
	[ $rc -eq 0 ] || exit $rc
fi
step "all tests passed"
echo "warren: $passed passed, $failed failed"
