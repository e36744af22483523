#!/bin/sh
# The sandbox's start-up cost next to the floor and bubblewrap, with
# hyperfine, then the cost of each layer (bench_sandbox). Figures go to
# docs/benchmarks.md ("warren sandbox exec, end to end").
#   scripts/bench-sandbox.sh [BUILD_DIR] [RUNS]
# Targets (issue 5): warren sandbox exec <= 0.35 x bwrap's median and
# <= 2 x the floor (bare /bin/true).
set -eu
cd "$(dirname "$0")/.."
build=${1:-build}
runs=${2:-300}
warren=$(pwd)/$build/cli/warren
bench=$(pwd)/$build/bench/bench_sandbox
alone=$(pwd)/$build/bench/bench_sandbox_exec
nsfloor=$(pwd)/$build/bench/bench_ns_floor
out=${TMPDIR:-/tmp}/warren-bench-sandbox.$$.json
for tool in hyperfine bwrap; do
	command -v "$tool" >/dev/null 2>&1 || {
		echo "bench-sandbox: $tool is missing (apt-get install $tool)" >&2
		exit 1
	}
done
[ -x "$warren" ] || { echo "bench-sandbox: build $warren first" >&2; exit 1; }
ws=$(mktemp -d)
trap 'rm -rf "$ws" "$out"' EXIT INT TERM
echo "machine: $(uname -r), $(nproc) cores, uid $(id -u), load $(cut -d' ' -f1-3 /proc/loadavg)"
# warren-start: warren's own start-up (its libraries), no sandbox.
# alone-*: the same sandbox exec code linked without the rest of warren.
# ns-floor: one clone into the namespaces and an exec, nothing else (root
# only): what the kernel alone charges, under any sandbox.
if [ "$(id -u)" = 0 ]; then
	set -- -n ns-floor "$nsfloor /bin/true"
else
	set --
fi
hyperfine -N --warmup 20 --runs "$runs" --export-json "$out" \
    -n floor '/bin/true' \
    -n warren-start "$warren --version" \
    -n explore "$warren sandbox exec --profile explore --workspace $ws -- /bin/true" \
    -n test "$warren sandbox exec --profile test --workspace $ws -- /bin/true" \
    -n general "$warren sandbox exec --profile general --workspace $ws -- /bin/true" \
    -n alone-explore "$alone sandbox exec --profile explore --workspace $ws -- /bin/true" \
    -n alone-general "$alone sandbox exec --profile general --workspace $ws -- /bin/true" \
    -n bwrap 'bwrap --ro-bind / / --unshare-all true' "$@"
python3 - "$out" <<'PY'
import json, sys
r = {x["command"]: x for x in json.load(open(sys.argv[1]))["results"]}
floor = r["floor"]["median"]
bwrap = r["bwrap"]["median"]
print("\n%-14s %10s %10s %10s" % ("command", "median ms", "x floor", "x bwrap"))
for name in ("floor", "warren-start", "explore", "test", "general",
             "alone-explore", "alone-general", "bwrap", "ns-floor"):
    if name not in r:
        continue
    m = r[name]["median"]
    print("%-14s %10.2f %10.2f %10.2f" % (name, m * 1e3, m / floor, m / bwrap))
PY
echo
"$bench" "$runs"
