#!/bin/sh
# bench_cow_cli: copy-on-write workspaces through the command line, each
# command timed whole (fork + exec of warren included):
#  1. `warren diff N >/dev/null` and `warren apply N >/dev/null` of a run
#     (`warren sandbox exec --cow`) that changed 1,000 files (10 dirs of
#     100 files of 20 lines; the run appends a line to each), REPS_DIFF
#     times, a fresh workspace and run each time;
#  2. the demo task (scripts/demo.sh, replayed) with the default layer,
#     with `--cow copy` and with `--in-place`, interleaved, REPS_RUN times
#     after one unmeasured run of each.
# Every warren here has a private XDG_STATE_HOME under a temporary
# directory, removed at the end.
#	sh bench/bench_cow_cli.sh [BUILD [REPS_DIFF [REPS_RUN]]]
#	(BUILD = build, REPS_DIFF = 5, REPS_RUN = 11)
set -eu
cd "$(dirname "$0")/.."
top=$(pwd)
build=$(cd "${1:-build}" && pwd)
reps_diff=${2:-5}
reps_run=${3:-11}
warren=$build/cli/warren
export WARREN_WORKER_BIN="$build/worker/warren-worker"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench-cow-cli.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
export XDG_STATE_HOME="$tmp/state"

now() { date +%s%N; }
ms() { echo "$1 $2" | awk '{ printf "%.1f\n", ($2 - $1) / 1e6 }'; }
# median of the numbers on stdin, one a line
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# 10 dirs of 100 files of 20 lines under $1.
make_ws() {
	mkdir -p "$1"
	awk -v root="$1" 'BEGIN {
		for (d = 0; d < 10; d++) {
			system("mkdir -p " root "/d" d)
			for (f = 0; f < 100; f++) {
				p = root "/d" d "/f" f ".txt"
				for (l = 0; l < 20; l++)
					print "file " d "." f " line " l > p
				close(p)
			}
		}
	}'
}

# One run that changes 1,000 files: prints its id.
changed_run() {
	"$warren" sandbox exec --profile general --workspace "$1" --cow -- \
	    sh -c 'cd "$1" && for f in d*/f*.txt; do echo changed >> "$f"; done' \
	    sh "$1" 2>"$tmp/exec.err" ||
	    { cat "$tmp/exec.err" >&2; exit 1; }
	sed -n 's/.*run \([0-9]*\) writes a copy-on-write layer.*/\1/p' \
	    "$tmp/exec.err"
}

: >"$tmp/diff"
: >"$tmp/apply"
i=0
while [ $i -lt "$reps_diff" ]; do
	rm -rf "$tmp/ws"
	make_ws "$tmp/ws"
	run=$(changed_run "$tmp/ws")
	t0=$(now)
	"$warren" diff "$run" >/dev/null
	t1=$(now)
	"$warren" apply "$run" >/dev/null
	t2=$(now)
	n=$(grep -c changed "$tmp/ws/d3/f7.txt" || true)
	[ "$n" = 1 ] || { echo "apply of run $run did not land" >&2; exit 1; }
	ms "$t0" "$t1" >>"$tmp/diff"
	ms "$t1" "$t2" >>"$tmp/apply"
	i=$((i + 1))
done
echo "warren diff, 1,000 changed files: median $(median <"$tmp/diff") ms" \
    "of $reps_diff: $(tr '\n' ' ' <"$tmp/diff")"
echo "warren apply, 1,000 changed files: median $(median <"$tmp/apply") ms" \
    "of $reps_diff: $(tr '\n' ' ' <"$tmp/apply")"

task=$(sed -n 's/^task="\(.*\)"$/\1/p' scripts/demo.sh)
ws=$top/examples/demo
# demo LABEL [OPTION ...]: one run, its ms appended to $tmp/LABEL
demo() {
	label=$1
	shift
	t0=$(now)
	"$warren" run --workspace "$ws" --replay "$ws/session.cassette" \
	    "$@" "$task" >/dev/null 2>"$tmp/$label.err" ||
	    { cat "$tmp/$label.err" >&2; exit 1; }
	t1=$(now)
	ms "$t0" "$t1" >>"$tmp/$label"
}
# One of each first, unmeasured: the store is made, the caches warm.
demo cow
demo copy --cow copy
demo inplace --in-place
: >"$tmp/cow"
: >"$tmp/copy"
: >"$tmp/inplace"
i=0
while [ $i -lt "$reps_run" ]; do
	demo cow
	demo copy --cow copy
	demo inplace --in-place
	i=$((i + 1))
done
for v in cow copy inplace; do
	sed -n 's/^/  last run, '"$v"': /p' "$tmp/$v.err" | grep 'warren: run' ||
	    true
	echo "demo run, $v: median $(median <"$tmp/$v") ms of $reps_run:" \
	    "$(tr '\n' ' ' <"$tmp/$v")"
done
