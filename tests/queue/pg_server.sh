#!/bin/sh
# pg_server.sh COMMAND [ARGS...]: run COMMAND against a PostgreSQL server of
# its own, started here and stopped after (on failure too).
#
# The server comes from the Debian postgresql package
# (/usr/lib/postgresql/*/bin): initdb in a temporary directory, listening on
# 127.0.0.1 only, on a free port, its socket in that directory, a superuser
# "warren" with a random password. initdb and postgres refuse root: as root
# the server runs as warren-test (or nobody), which owns the directory.
# pg_stat_statements is loaded, so that a test can count the statements
# a call sends (test_statements in test_queue_pg.c).
# COMMAND sees
#   WARREN_TEST_QUEUE_URL  postgresql://warren:PASSWORD@127.0.0.1:PORT/postgres
#   WARREN_TEST_PG_CTL     a script: stop | start | restart (immediate, as
#                          a crash would)
# Without the server binaries: exit 77 (ctest's skip), said on stderr;
# under CI (WARREN_CI=1, set by .ci/run) that is a failure instead.
set -eu

bindir=""
for d in /usr/lib/postgresql/*/bin; do
	[ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ] && bindir=$d
done
if [ -z "$bindir" ]; then
	if [ "${WARREN_CI:-0}" = 1 ]; then
		echo "pg_server.sh: no PostgreSQL server (/usr/lib/postgresql/*/bin/initdb) under CI: scripts/install-deps.sh installs the postgresql package" >&2
		exit 1
	fi
	echo "pg_server.sh: SKIPPED: no PostgreSQL server binaries (/usr/lib/postgresql/*/bin); apt-get install postgresql" >&2
	exit 77
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/warren-pg-XXXXXX")
as=""
if [ "$(id -u)" -eq 0 ]; then
	user=warren-test
	id "$user" >/dev/null 2>&1 || user=nobody
	chown "$user" "$tmp"
	as="runuser -u $user --"
fi
chmod 700 "$tmp"
ctl="$tmp/ctl.sh"

cleanup() {
	rc=$?
	[ -f "$tmp/data/postmaster.pid" ] &&
		$as "$bindir/pg_ctl" -D "$tmp/data" -m immediate -w stop >/dev/null 2>&1
	rm -rf "$tmp"
	exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

pw=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
umask 077
printf '%s\n' "$pw" >"$tmp/pw"
[ -n "$as" ] && chown "${user}" "$tmp/pw"
$as "$bindir/initdb" -D "$tmp/data" -U warren --pwfile="$tmp/pw" \
    --auth=scram-sha-256 -E UTF8 --locale=C.UTF-8 >"$tmp/initdb.log" 2>&1 || {
	cat "$tmp/initdb.log" >&2
	exit 1
}
rm -f "$tmp/pw"

# A free port: try a few at random (another test may race us for one).
port=""
for try in 1 2 3 4 5 6 7 8; do
	p=$(( $(od -An -N2 -tu2 /dev/urandom | tr -d ' ') % 20000 + 30000 ))
	cat >"$ctl" <<CTL
#!/bin/sh
# stop | start | restart the test's PostgreSQL (immediate: as a crash)
case "\$1" in
stop) exec $as "$bindir/pg_ctl" -D "$tmp/data" -m immediate -w stop ;;
*) exec $as "$bindir/pg_ctl" -D "$tmp/data" -m immediate -w -l "$tmp/server.log" \
    -o "-c listen_addresses=127.0.0.1 -p $p -k $tmp -c fsync=off -c max_connections=200 -c shared_preload_libraries=pg_stat_statements" "\$1" ;;
esac
CTL
	chmod 755 "$ctl"
	if sh "$ctl" start >/dev/null 2>&1; then
		port=$p
		break
	fi
done
if [ -z "$port" ]; then
	echo "pg_server.sh: the server would not start; its log:" >&2
	cat "$tmp/server.log" >&2 || true
	exit 1
fi

export WARREN_TEST_QUEUE_URL="postgresql://warren:$pw@127.0.0.1:$port/postgres"
export WARREN_TEST_PG_CTL="$ctl"
rc=0
"$@" || rc=$?
exit $rc
