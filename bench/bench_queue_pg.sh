#!/bin/sh
# The queue on PostgreSQL (issue 22, docs/benchmarks.md "Queue on
# PostgreSQL"), on a server of its own (tests/queue/pg_server.sh):
#   sh bench/bench_queue_pg.sh throughput [N] [REPEATS]
#       claim + complete of N jobs (default 10,000) by 1, 4 and 16
#       processes, PostgreSQL then SQLite (build/bench/bench_queue)
#   sh bench/bench_queue_pg.sh drain [N]
#       N jobs (default 1,000) of a one-step agent on replay, drained by 1,
#       2 and 4 `warren queue work --jobs 2`, each with a state directory of
#       its own (as machines); wall seconds from the start to the last exit
#   sh bench/bench_queue_pg.sh compare [N] [REPEATS]
#       claim + complete of N no-op jobs (default 5,000) by 1 and 4
#       processes: warren (bench_queue), graphile-worker and pg-boss
#       (bench/queue_compare.mjs), interleaved on the one server, REPEATS
#       rounds (default 3); the two are installed from npm into a
#       temporary directory, removed after (QUEUE_COMPARE_VERSIONS: the
#       packages, default graphile-worker@0.18.0 pg-boss@12.38.0)
# BUILD (default build) names the build tree; in compare, BASE (unset by
# default) names another build tree whose bench_queue runs too, before
# this one's in every round, its lines named warren-base.
set -eu
cd "$(dirname "$0")/.."
if [ -z "${WARREN_TEST_QUEUE_URL:-}" ]; then
	exec sh tests/queue/pg_server.sh sh "$0" "$@"
fi
mode=${1:-throughput}
build=$(cd "${BUILD:-build}" && pwd)
base=""
[ -z "${BASE:-}" ] || base=$(cd "$BASE" && pwd)
url=$WARREN_TEST_QUEUE_URL

case $mode in
throughput)
	n=${2:-10000} reps=${3:-3}
	"$build/bench/bench_queue" -n "$n" -r "$reps" -p 1,4,16 -u "$url"
	"$build/bench/bench_queue" -n "$n" -r "$reps" -p 1,4,16
	;;
drain)
	n=${2:-1000}
	warren=$build/cli/warren
	export WARREN_WORKER_BIN=$build/worker/warren-worker
	d=$(mktemp -d /tmp/bench-qpg.XXXXXX)
	trap 'rm -rf "$d"' EXIT
	mkdir -p "$d/ws"
	echo x >"$d/ws/a.txt"
	{
		echo '{"warren_cassette":1}'
		echo '{"agent":"0","step":1,"purpose":"turn","reply":{"stop":"tool_calls","usage":{"input":100,"output":10},"calls":[{"id":"c1","name":"complete","arguments":"{\"result\":\"seen\"}"}]}}'
	} >"$d/c.cassette"
	i=1
	while [ "$i" -le "$n" ]; do
		printf '{"task":"job %d","workspace":"%s"}\n' "$i" "$d/ws"
		i=$((i + 1))
	done >"$d/jobs.jsonl"
	export WARREN_QUEUE_RUN_ARGS="--replay $d/c.cassette"
	export WARREN_WORKSPACE_MODE=in-place
	for k in 1 2 4; do
		psql -q "$url" -c "CREATE SCHEMA bd_$k" >/dev/null
		export WARREN_QUEUE_URL="$url?options=-csearch_path%3Dbd_$k"
		XDG_STATE_HOME=$d/add XDG_CONFIG_HOME=$d/cfg \
		    "$warren" queue add --jsonl "$d/jobs.jsonl" >/dev/null
		t0=$(date +%s.%N)
		pids=""
		m=1
		while [ "$m" -le "$k" ]; do
			XDG_STATE_HOME=$d/m$k-$m XDG_CONFIG_HOME=$d/cfg \
			    "$warren" queue work --jobs 2 --json >/dev/null \
			    2>"$d/m$k-$m.err" &
			pids="$pids $!"
			m=$((m + 1))
		done
		for p in $pids; do
			wait "$p" || { echo "a worker failed:" >&2;
			    cat "$d"/m"$k"-*.err >&2; exit 1; }
		done
		t1=$(date +%s.%N)
		done=$(XDG_STATE_HOME=$d/add XDG_CONFIG_HOME=$d/cfg \
		    "$warren" queue export --format jsonl --status done | wc -l)
		[ "$done" -eq "$n" ] || { echo "$done of $n done" >&2; exit 1; }
		echo "$t0 $t1 $k $n" | awk '{ printf "%d workers (--jobs 2): %d jobs in %.2f s\n", $3, $4, $2 - $1 }'
	done
	;;
compare)
	n=${2:-5000} reps=${3:-3}
	d=$(mktemp -d /tmp/bench-qcmp.XXXXXX)
	trap 'rm -rf "$d"' EXIT
	(cd "$d" && npm install --no-audit --no-fund --silent \
	    ${QUEUE_COMPARE_VERSIONS:-graphile-worker@0.18.0 pg-boss@12.38.0}) ||
	    { echo "npm install failed" >&2; exit 1; }
	export NODE_PATH=$d/node_modules
	echo "# $(psql -At "$url" -c 'SHOW server_version') on $(nproc) cores," \
	    "load $(cut -d' ' -f1-3 /proc/loadavg); $n jobs;" \
	    "$(cd "$d" && npm ls --depth=0 2>/dev/null | sed -n 's/.*── //p' | tr '\n' ' ')"
	echo "# system procs jobs seconds jobs/s"
	r=1
	while [ "$r" -le "$reps" ]; do
		for p in 1 4; do
			if [ -n "$base" ]; then
				"$base/bench/bench_queue" -n "$n" -r 1 -p "$p" -u "$url" |
				    sed -n "s/^claim+complete, \([0-9]*\) process[es]*: \([0-9.]*\) jobs\/s.*/warren-base \1 $n - \2/p"
			fi
			"$build/bench/bench_queue" -n "$n" -r 1 -p "$p" -u "$url" |
			    sed -n "s/^claim+complete, \([0-9]*\) process[es]*: \([0-9.]*\) jobs\/s.*/warren \1 $n - \2/p"
			node bench/queue_compare.mjs graphile "$url" "$n" "$p" qc_gw
			node bench/queue_compare.mjs pgboss "$url" "$n" "$p" qc_pb
		done
		r=$((r + 1))
	done
	;;
*)
	echo "usage: bench_queue_pg.sh throughput [N] [REPEATS] | drain [N] | compare [N] [REPEATS]" >&2
	exit 2
	;;
esac
