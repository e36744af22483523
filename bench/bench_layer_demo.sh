#!/bin/sh
# The demo task (scripts/demo.sh, replayed) with the default layer and
# with --in-place, for each warren given, interleaved: a round runs each
# warren's layer run then its in-place run; REPS rounds after one
# unmeasured round. Each warren has a private XDG_STATE_HOME (its store,
# its kept overlay answer). Prints each median wall time and the ratio.
#   sh bench/bench_layer_demo.sh REPS NAME=WARREN ...
# Example (docs/benchmarks.md, "The overlay probe, kept"):
#   sh bench/bench_layer_demo.sh 21 before=before/cli/warren \
#       after=build/cli/warren
set -eu
[ $# -ge 2 ] || { echo "usage: bench_layer_demo.sh REPS NAME=WARREN ..." >&2; exit 2; }
reps=$1
shift
top=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
task=$(sed -n 's/^task="\(.*\)"$/\1/p' "$top/scripts/demo.sh")
ws=$top/examples/demo
now() { date +%s%N; }

# one NAME WARREN LABEL [OPTION ...]: a run, its ms appended to a file
one() {
	name=$1 warren=$2 label=$3
	shift 3
	t0=$(now)
	XDG_STATE_HOME=$tmp/$name.state XDG_CONFIG_HOME=$tmp/$name.config \
	    "$warren" run --workspace "$ws" --replay "$ws/session.cassette" \
	    "$@" "$task" >/dev/null 2>"$tmp/err" ||
	    { cat "$tmp/err" >&2; exit 1; }
	t1=$(now)
	echo $(((t1 - t0) / 1000)) >>"$tmp/$name.$label"
}
round() {
	for spec in "$@"; do
		one "${spec%%=*}" "${spec#*=}" layer
		one "${spec%%=*}" "${spec#*=}" inplace --in-place
	done
}
round "$@"
for spec in "$@"; do
	: >"$tmp/${spec%%=*}.layer"
	: >"$tmp/${spec%%=*}.inplace"
done
i=0
while [ $i -lt "$reps" ]; do
	round "$@"
	i=$((i + 1))
done
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
echo "machine: $(uname -r), $(nproc) cores, uid $(id -u), load $(cut -d' ' -f1-3 /proc/loadavg), $reps rounds"
for spec in "$@"; do
	n=${spec%%=*}
	l=$(median <"$tmp/$n.layer")
	p=$(median <"$tmp/$n.inplace")
	awk -v n="$n" -v l="$l" -v p="$p" 'BEGIN { printf "%-10s layer %7.1f ms  in place %7.1f ms  layer / in place %.2f\n", n, l / 1000, p / 1000, l / p }'
done
