#!/bin/sh
# The queue's figures over whole runs (issue 21, docs/benchmarks.md "Queue"):
#   sh bench/bench_queue_work.sh replay N JOBS   N jobs of a 5-step agent on
#       replay, worked by `warren queue work --jobs JOBS`; compare with
#       build/bench/bench_run N 5 JOBS (the same N agents in one run).
#   sh bench/bench_queue_work.sh onerun N JOBS   the same N agents (5 steps)
#       as subagents of one `warren run --jobs JOBS` on bench_run's cassette,
#       with the store and the copy-on-write workspace, as a job's run has.
#   sh bench/bench_queue_work.sh latency N JOBS MS   N jobs, each one LLM
#       request answered by fakellm after MS ms; then one job alone.
# BUILD (default build) names the build tree. Prints wall seconds.
set -eu
mode=$1 n=$2 jobs=$3 ms=${4:-200}
build=$(cd "${BUILD:-build}" && pwd)
warren=$build/cli/warren
export WARREN_WORKER_BIN=$build/worker/warren-worker
d=$(mktemp -d /tmp/bench-qwork.XXXXXX)
fl=
trap 'test -n "$fl" && kill $fl 2>/dev/null; test -n "${KEEP:-}" || rm -rf "$d"' EXIT
mkdir -p "$d/ws" "$d/state" "$d/config"
for f in a b c d e; do echo x >"$d/ws/$f.txt"; done
export XDG_STATE_HOME=$d/state XDG_CONFIG_HOME=$d/config

now() { date +%s.%N; }

# N jobs, distinct tasks, one transaction.
add() {
	i=1
	while [ "$i" -le "$1" ]; do
		printf '{"task":"job %d %s","workspace":"%s"}\n' "$i" "$2" \
		    "$d/ws"
		i=$((i + 1))
	done >"$d/jobs.jsonl"
	"$warren" queue add --jsonl "$d/jobs.jsonl" >/dev/null
}

work() {
	t0=$(now)
	"$warren" queue work --jobs "$1" --json >"$d/work.out" 2>"$d/work.err" ||
	    { echo "queue work failed:" >&2; tail -5 "$d/work.err" >&2; exit 1; }
	t1=$(now)
	echo "$t0 $t1" | awk '{ printf "%.3f\n", $2 - $1 }'
}

turn() {	# agent step call-name arguments-json
	printf '{"agent":"%s","step":%d,"purpose":"turn","reply":{"stop":"tool_calls","usage":{"input":100,"output":10},"calls":[{"id":"c%d","name":"%s","arguments":"%s"}]}}\n' \
	    "$1" "$2" "$2" "$3" "$4"
}

case $mode in
replay)
	{
		echo '{"warren_cassette":1}'
		for s in 1 2 3 4; do
			l=$(printf "\\$(printf %o $((97 + s)))")
			turn 0 "$s" glob "{\\\"pattern\\\":\\\"$l*.txt\\\"}"
		done
		turn 0 5 complete '{\"result\":\"seen\"}'
	} >"$d/c.cassette"
	add "$n" replay
	WARREN_QUEUE_RUN_ARGS="--replay $d/c.cassette" work "$jobs"
	# Every job replayed its 5 turns (100 tokens in each).
	k=$(grep -c '"event":"job_end".*"tokens_in":500,' "$d/work.out" || true)
	[ "$k" -eq "$n" ] || { echo "$k of $n jobs ran 5 turns" >&2; exit 1; }
	;;
onerun)
	(cd "$build" && BENCH_RUN_KEEP=1 ./bench/bench_run "$n" 5 "$jobs" \
	    2>&1) | sed -n 's/^kept: .* --workspace \([^ ]*\) --replay \([^ ]*\) .*/\1 \2/p' \
	    >"$d/kept"
	set -- $(head -1 "$d/kept")
	t0=$(now)
	"$warren" run --json --workspace "$1" --replay "$2" \
	    --max-agents "$n" --jobs "$jobs" bench >"$d/run.out" 2>"$d/run.err" ||
	    { echo "run failed:" >&2; tail -5 "$d/run.err" >&2; exit 1; }
	t1=$(now)
	echo "$t0 $t1" | awk '{ printf "%.3f\n", $2 - $1 }'
	while read -r w c; do rm -rf "$(dirname "$c")"; done <"$d/kept"
	;;
latency)
	cat >"$d/script.json" <<JSON
{"responses":[{"delay_ms":$ms,"reply":{"stop":"tool_calls","usage":{"input":11,"output":7},"calls":[{"id":"c","name":"complete","arguments":{"result":"ok"}}]}}],"repeat":true}
JSON
	"$build/tests/llm/fakellm" --script "$d/script.json" \
	    --port-file "$d/port" 2>"$d/fakellm.err" &
	fl=$!
	while [ ! -s "$d/port" ]; do sleep 0.05; done
	export WARREN_BASE_URL=http://127.0.0.1:$(cat "$d/port")/v1
	export WARREN_API_KEY=sk-bench-qwork WARREN_MODEL=fake-model
	export WARREN_RETRIES=0
	add "$n" latency
	printf 'N=%s jobs=%s: ' "$n" "$jobs"; work "$jobs"
	add 1 alone
	printf 'one job alone: '; work 1
	;;
*)
	echo "usage: $0 replay N JOBS | latency N JOBS [MS]" >&2
	exit 2
	;;
esac
