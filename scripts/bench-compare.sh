#!/bin/sh
# Several commands side by side, interleaved in rounds so a change of load
# hits them alike; prints each one's median CPU time (perf stat task-clock,
# its children included) and median wall time per run.
#   scripts/bench-compare.sh ROUNDS RUNS NAME=COMMAND ...
# Example (docs/benchmarks.md, "warren sandbox exec, end to end"):
#   scripts/bench-compare.sh 5 20 floor=/bin/true \
#       "explore=build/cli/warren sandbox exec --profile explore -- /bin/true"
set -eu
[ $# -ge 3 ] || { echo "usage: bench-compare.sh ROUNDS RUNS NAME=COMMAND ..." >&2; exit 2; }
command -v perf >/dev/null 2>&1 || { echo "bench-compare: perf is missing (apt-get install linux-perf)" >&2; exit 1; }
rounds=$1
runs=$2
shift 2
out=$(mktemp)
trap 'rm -f "$out"' EXIT INT TERM
r=0
while [ "$r" -lt "$rounds" ]; do
	r=$((r + 1))
	for spec in "$@"; do
		name=${spec%%=*}
		cmd=${spec#*=}
		# shellcheck disable=SC2086 # the command is split on purpose
		perf stat -x, -r "$runs" -e task-clock $cmd 2>&1 >/dev/null |
		    awk -F, -v n="$name" '/task-clock/ { print n, "cpu", $1 }' >>"$out"
		s=$(date +%s%N)
		i=0
		while [ "$i" -lt "$runs" ]; do
			$cmd >/dev/null 2>&1 || true
			i=$((i + 1))
		done
		e=$(date +%s%N)
		echo "$name wall $(((e - s) / runs))" >>"$out"
	done
done
echo "machine: $(uname -r), $(nproc) cores, uid $(id -u), load $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$out" <<'PY'
import collections, statistics, sys
cpu, wall, order = collections.defaultdict(list), collections.defaultdict(list), []
for line in open(sys.argv[1]):
    name, kind, v = line.split()
    if name not in order:
        order.append(name)
    (cpu if kind == "cpu" else wall)[name].append(float(v))
print("%-16s %10s %10s" % ("command", "cpu ms", "wall ms"))
for n in order:
    c = statistics.median(cpu[n]) if cpu[n] else float("nan")
    print("%-16s %10.2f %10.2f" % (n, c, statistics.median(wall[n]) / 1e6))
PY
