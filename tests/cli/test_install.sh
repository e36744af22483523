#!/bin/sh
# cmake --install into a temporary prefix: the files land in bin/,
# libexec/warren/ and share/man/man1/ (the shell completions in
# share/bash-completion, share/zsh, share/fish), and the installed warren, with no
# WARREN_WORKER_BIN, finds its installed worker and runs the demo task from
# its recorded cassette. A warren copied alone says where it looked.
#   test_install.sh BUILD_DIR SOURCE_DIR
set -eu
build=$1
src=$2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/warren-install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "test_install: $*" >&2; exit 1; }

cmake --install "$build" --prefix "$tmp/prefix" >"$tmp/install.log" 2>&1 ||
	{ cat "$tmp/install.log"; fail "cmake --install failed"; }
for f in bin/warren libexec/warren/warren-worker share/man/man1/warren.1 \
    share/bash-completion/completions/warren share/zsh/site-functions/_warren \
    share/fish/vendor_completions.d/warren.fish; do
	[ -f "$tmp/prefix/$f" ] || fail "$f was not installed"
done
[ -x "$tmp/prefix/bin/warren" ] && [ -x "$tmp/prefix/libexec/warren/warren-worker" ] ||
	fail "the programs are not executable"
cp -R "$src/examples/demo" "$tmp/ws"
unset WARREN_WORKER_BIN
task="Explain how this project is structured and list the TODO and FIXME notes left in its code."
WARREN_DB="$tmp/w.db" "$tmp/prefix/bin/warren" run --in-place \
    --workspace "$tmp/ws" --replay "$tmp/ws/session.cassette" "$task" \
    >"$tmp/out" 2>"$tmp/err" || { cat "$tmp/err"; fail "the installed warren failed"; }
grep -q "wordfreq is a small C program" "$tmp/out" ||
	{ cat "$tmp/out" "$tmp/err"; fail "no result from the installed warren"; }
grep -q "\[0.1 explore\] spawned" "$tmp/err" ||
	fail "no worker was spawned"

# warren alone, without its worker: a clear error, exit 3.
mkdir "$tmp/alone"
cp "$tmp/prefix/bin/warren" "$tmp/alone/warren"
rc=0
WARREN_DB="$tmp/w.db" "$tmp/alone/warren" run --in-place --workspace "$tmp/ws" \
    --replay "$tmp/ws/session.cassette" "$task" >/dev/null 2>"$tmp/err2" || rc=$?
[ "$rc" -eq 3 ] || fail "a warren without its worker exited $rc, not 3"
grep -q "cannot find warren-worker next to warren, in ../libexec/warren/" \
    "$tmp/err2" || { cat "$tmp/err2"; fail "no clear message"; }
echo "test_install: ok"
