#!/bin/sh
# test_queue_pg_module: the warren program does not link libpq (ldd), and
# loads the PostgreSQL module (queue/queue_load.c) when a PostgreSQL URL is
# used: from the build tree, after `cmake --install`, and, where there is
# none, fails saying which file and package it needs.
#   pg_module.sh WARREN BUILD_DIR
set -eu
warren=$1
build=$2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/warren-pg-module.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# Connection refused at once: the module loaded, every symbol resolved.
url='postgresql://u@127.0.0.1:1/none?connect_timeout=2'

fail() {
	echo "test_queue_pg_module: $*" >&2
	exit 1
}

ldd "$warren" >"$tmp/ldd" 2>&1 || fail "ldd $warren: $(cat "$tmp/ldd")"
grep -q 'libc\.so' "$tmp/ldd" || fail "ldd $warren lists no libc:
$(cat "$tmp/ldd")"
if grep 'libpq' "$tmp/ldd"; then
	fail "$warren links libpq again: every command would load it and its
25 libraries (queue/CMakeLists.txt builds queue_pg*.c as a module)"
fi
module=$build/lib/warren/warren-queue-pg.so
ldd "$module" | grep -q 'libpq' || fail "$module does not link libpq"

# Runs warren ($1) on the URL: it must fail to connect, not to load.
connects() {
	if "$1" queue ls --queue "$url" >"$tmp/out" 2>&1; then
		fail "$1 queue ls on no server succeeded"
	fi
	grep -q 'cannot connect' "$tmp/out" || fail "$1 did not load the \
PostgreSQL module (expected 'cannot connect'):
$(cat "$tmp/out")"
}

connects "$warren"
cmake --install "$build" --prefix "$tmp/inst" >"$tmp/install" 2>&1 ||
	fail "cmake --install: $(cat "$tmp/install")"
[ -f "$tmp/inst/lib/warren/warren-queue-pg.so" ] ||
	fail "cmake --install put no lib/warren/warren-queue-pg.so"
connects "$tmp/inst/bin/warren"

# Without the module: an error naming the file and the package.
rm "$tmp/inst/lib/warren/warren-queue-pg.so"
if "$tmp/inst/bin/warren" queue ls --queue "$url" >"$tmp/out" 2>&1; then
	fail "queue ls without the module succeeded"
fi
grep -q "$tmp/inst/bin/../lib/warren/warren-queue-pg.so" "$tmp/out" &&
	grep -q 'libpq5' "$tmp/out" || fail "the error without the module \
names neither the file nor the package:
$(cat "$tmp/out")"
# SQLite queues need no module.
"$tmp/inst/bin/warren" queue add --queue "$tmp/q.db" --workspace "$tmp" \
	'a task' >"$tmp/out" 2>&1 &&
	"$tmp/inst/bin/warren" queue ls --queue "$tmp/q.db" >"$tmp/out" 2>&1 &&
	grep -q 'a task' "$tmp/out" ||
	fail "a SQLite queue without the PostgreSQL module: $(cat "$tmp/out")"
echo "test_queue_pg_module: ok"
