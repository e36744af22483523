#!/bin/sh
# The whole test suite on a fresh Debian machine, all setup included:
#   1. install the Debian packages (scripts/install-deps.sh)
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

step() { printf '\n==== %s ====\n' "$*"; }

step "install dependencies"
sh scripts/install-deps.sh

step "build (release, -Werror)"
sh scripts/build.sh build
step "tests (release)"
(cd build && ctest --output-on-failure -j2)

step "build (ASan + UBSan)"
sh scripts/build.sh --sanitize build-asan
step "tests (ASan + UBSan)"
(cd build-asan && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --output-on-failure -j2)

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
	runuser -u "$user" -- sh -c "cd '$src' && sh scripts/build.sh build >/dev/null &&
	    cd build && ctest --output-on-failure -j2 -L 'sandbox|e2e|integration'"
fi
step "all tests passed"
